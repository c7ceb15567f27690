import { useEffect, useState, type ReactNode } from 'react'
import { useT } from '../i18n'

type Highlighter = typeof import('./highlight')
let loading: Promise<Highlighter> | undefined

/** loadHighlighter imports the highlighter once, on the first code block that needs it. */
function loadHighlighter(): Promise<Highlighter> {
  loading ??= import('./highlight')
  return loading
}

/**
 * copyText puts text on the clipboard: the async Clipboard API, else (no
 * secure context, a denied permission) a hidden textarea and
 * execCommand('copy'). It reports whether the copy succeeded.
 */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    const ta = document.createElement('textarea')
    ta.value = text
    ta.setAttribute('readonly', '')
    ta.style.position = 'fixed'
    ta.style.opacity = '0'
    document.body.appendChild(ta)
    ta.select()
    let ok = false
    try {
      ok = document.execCommand('copy')
    } catch {
      ok = false
    }
    ta.remove()
    return ok
  }
}

/**
 * CodeBlock is a fenced code block of assistant text: the code as text at
 * once, highlighted when its language's grammar has loaded (lazily, see
 * highlight.ts), with a copy button that copies the code exactly as shown.
 */
export function CodeBlock({ code, lang }: { code: string; lang: string }) {
  const t = useT()
  const [lit, setLit] = useState<{ code: string; lang: string; nodes: ReactNode } | null>(null)
  const [copied, setCopied] = useState<'ok' | 'failed' | null>(null)

  useEffect(() => {
    if (!lang) return
    let live = true
    loadHighlighter()
      .then((h) => {
        const nodes = h.highlight(code, lang)
        if (live && nodes) setLit({ code, lang, nodes })
      })
      .catch(() => undefined) // The chunk failed to load: the code stays plain.
    return () => {
      live = false
    }
  }, [code, lang])

  useEffect(() => {
    if (!copied) return
    const timer = setTimeout(() => setCopied(null), 2000)
    return () => clearTimeout(timer)
  }, [copied])

  const shown = lit && lit.code === code && lit.lang === lang ? lit.nodes : code
  return (
    <div className="code-block" data-testid="code-block" data-lang={lang || undefined}>
      <div className="code-head">
        <span className="code-lang">{lang}</span>
        <button
          type="button"
          className="code-copy"
          data-testid="copy-code"
          onClick={async () => setCopied((await copyText(code)) ? 'ok' : 'failed')}
        >
          {copied === 'ok' ? t.copied : copied === 'failed' ? t.copyFailed : t.copy}
        </button>
        <span className="visually-hidden" role="status">
          {copied === 'ok' ? t.copied : copied === 'failed' ? t.copyFailed : ''}
        </span>
      </div>
      <pre>
        <code className={`hljs${lang ? ` language-${lang}` : ''}`} data-highlighted={shown !== code ? 'true' : undefined}>
          {shown}
        </code>
      </pre>
    </div>
  )
}
