import ReactMarkdown from 'react-markdown'
import { visible } from 'luban-react'

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

const plugins = [remarkLiteralHtml]

/**
 * ImageAsLink shows a Markdown image (`![alt](url)`, `![alt][ref]`) as a link
 * labelled "🖼 alt" (the URL when alt is empty), never as an `<img>`: an
 * image would make the browser request its URL as soon as the text is shown,
 * and a model could point one at this server (`/?token=…`, docs/design.md
 * §9). The link is followed only when the user clicks it; its URL has been
 * through the library's urlTransform like every other link's.
 */
function ImageAsLink({ src, alt, title }: { src?: string | Blob; alt?: string; title?: string }) {
  const url = typeof src === 'string' ? src : ''
  const label = `🖼 ${alt || url || '?'}`
  if (!url) return <span className="md-image">{label}</span>
  return (
    <a className="md-image" href={url} title={title || url} rel="noreferrer">
      {label}
    </a>
  )
}

const components = { img: ImageAsLink }

/**
 * Markdown renders assistant text with react-markdown. Raw HTML in the text
 * is shown as literal text (remarkLiteralHtml), never as markup nor dropped;
 * `skipHtml` stays as a second guard, and unsafe link protocols are dropped by
 * the library's default urlTransform, so a model can never inject markup.
 * Images are links (ImageAsLink): model text never makes the page load a URL.
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
