import { lazy, Suspense } from 'react'
import { visible } from 'luban-react'

/** loadMarkdown imports the Markdown renderer (react-markdown, remark-gfm) once. */
const loadMarkdown = () => import('./Markdown')

const Full = lazy(() => loadMarkdown().then((m) => ({ default: m.Markdown })))

/**
 * preloadMarkdown starts loading the renderer without waiting for a message
 * (main.tsx calls it after the first render), so the first load stays small
 * and the renderer is usually there before the transcript is.
 */
export function preloadMarkdown(): void {
  void loadMarkdown().catch(() => undefined)
}

/**
 * Markdown is assistant text: the full renderer (./Markdown) once its chunk
 * has loaded; until then the text as plain text (line breaks kept), so
 * nothing waits for it and nothing is ever shown as markup.
 */
export function Markdown({ text }: { text: string }) {
  return (
    <Suspense
      fallback={
        <div className="markdown md-plain" data-testid="markdown-loading">
          {visible(text)}
        </div>
      }
    >
      <Full text={text} />
    </Suspense>
  )
}
