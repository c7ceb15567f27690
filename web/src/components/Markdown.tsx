import ReactMarkdown from 'react-markdown'

/**
 * Markdown renders assistant text with react-markdown. Raw HTML in the text
 * is skipped (no rehype-raw), and unsafe link protocols are dropped by the
 * library's default urlTransform, so a model can never inject markup.
 */
export function Markdown({ text }: { text: string }) {
  return (
    <div className="markdown">
      <ReactMarkdown skipHtml>{text}</ReactMarkdown>
    </div>
  )
}
