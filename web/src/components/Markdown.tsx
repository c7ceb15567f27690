import type { ComponentProps, ReactNode } from 'react'
import ReactMarkdown from 'react-markdown'
import remarkGfm from 'remark-gfm'
import { visible } from 'luban-react'
import { useT } from '../i18n'
import { CodeBlock } from './CodeBlock'

type MdNode = { type: string; value?: string; children?: MdNode[] }

/**
 * remarkLiteralHtml makes raw HTML in model text literal text: the parser's
 * HTML constructs (micromark `htmlFlow`, `htmlText`) are disabled, so a line
 * starting with `<script>` is a paragraph whose `<script>` is text and whose
 * `**bold**` is still bold (with HTML blocks on, the whole line became one
 * HTML node that `skipHtml` dropped, and the text was lost). Any `html` node
 * that still appears is turned into a `text` node. Text, inline code and code
 * blocks show bidirectional controls as markers (see `visible`).
 */
export function remarkLiteralHtml(this: { data: () => object }) {
  const data = this.data() as { micromarkExtensions?: unknown[] }
  const exts = (data.micromarkExtensions ??= [])
  exts.push({ disable: { null: ['htmlFlow', 'htmlText'] } })
  const walk = (n: MdNode) => {
    if (n.type === 'html') n.type = 'text'
    if ((n.type === 'text' || n.type === 'inlineCode' || n.type === 'code') && typeof n.value === 'string') n.value = visible(n.value)
    n.children?.forEach(walk)
  }
  return (tree: MdNode) => walk(tree)
}

const plugins = [remarkGfm, remarkLiteralHtml]

/**
 * ImageAsLink shows a Markdown image (`![alt](url)`, `![alt][ref]`) as a link
 * labelled "🖼 alt" (the URL when alt is empty), never as an `<img>`: an
 * image would make the browser request its URL as soon as the text is shown,
 * and a model could point one at this server (`/?token=…`, docs/design.md
 * §18). The link is followed only when the user clicks it; its URL has been
 * through the library's urlTransform like every other link's.
 */
function ImageAsLink({ src, alt, title }: { src?: string | Blob; alt?: string; title?: string }) {
  const url = typeof src === 'string' ? src : ''
  const label = `🖼 ${alt || url || '?'}`
  if (!url) return <span className="md-image">{label}</span>
  return (
    <a className="md-image" href={url} title={title || url} target="_blank" rel="noopener noreferrer">
      {label}
    </a>
  )
}

/** SAFE_PROTOCOLS are the only link targets a model's text may have. */
const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:'])

/** safeHref returns href when it is an absolute http, https or mailto URL, else null. */
export function safeHref(href: string | undefined): string | null {
  if (!href) return null
  try {
    return SAFE_PROTOCOLS.has(new URL(href).protocol) ? href : null
  } catch {
    return null // relative, or not a URL
  }
}

/**
 * SafeLink opens an absolute http, https or mailto link in a new tab with
 * no opener and no referrer; any other target (relative, javascript:,
 * data:, an anchor) leaves the link text as plain text.
 */
function SafeLink({ href, title, children }: { href?: string; title?: string; children?: ReactNode }) {
  const url = safeHref(href)
  if (!url) return <span className="md-link-text">{children}</span>
  return (
    <a href={url} title={title || url} target="_blank" rel="noopener noreferrer">
      {children}
    </a>
  )
}

type HastNode = { type: string; value?: string; tagName?: string; properties?: { className?: unknown }; children?: HastNode[] }

function hastText(n: HastNode): string {
  if (n.type === 'text') return n.value ?? ''
  return (n.children ?? []).map(hastText).join('')
}

/** Pre renders a fenced or indented code block as a CodeBlock (language from `language-*`). */
function Pre({ node, children }: { node?: HastNode; children?: ReactNode }) {
  const code = node?.children?.find((c) => c.type === 'element' && c.tagName === 'code')
  if (!code) return <pre>{children}</pre>
  const classes = Array.isArray(code.properties?.className) ? (code.properties.className as string[]) : []
  const lang = classes.find((c) => c.startsWith('language-'))?.slice('language-'.length) ?? ''
  return <CodeBlock code={hastText(code).replace(/\n$/, '')} lang={lang} />
}

/** Table scrolls sideways inside its own keyboard-focusable box on a narrow screen. */
function Table(props: ComponentProps<'table'> & { node?: unknown }) {
  const t = useT()
  const { node: _node, ...rest } = props
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={t.table}>
      <table {...rest} />
    </div>
  )
}

/** TaskBox is a GFM task list item's checkbox: read-only, named by its state. */
function TaskBox({ checked }: { checked?: boolean }) {
  const t = useT()
  return <input type="checkbox" checked={!!checked} disabled readOnly aria-label={checked ? t.taskDone : t.taskOpen} />
}

const components = { img: ImageAsLink, a: SafeLink, pre: Pre, table: Table, input: TaskBox }

/**
 * Markdown renders assistant text with react-markdown and GitHub Flavored
 * Markdown (remark-gfm: tables, task lists, strikethrough, autolinks). Raw
 * HTML in the text is shown as literal text (remarkLiteralHtml), never as
 * markup nor dropped; `skipHtml` stays as a second guard. Links open in a new
 * tab only for http, https and mailto (SafeLink); code blocks get a copy
 * button and lazily loaded highlighting (CodeBlock). Images are links
 * (ImageAsLink): model text never makes the page load a URL.
 */
export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown skipHtml remarkPlugins={plugins} components={components}>
        {text}
      </ReactMarkdown>
    </div>
  )
}
