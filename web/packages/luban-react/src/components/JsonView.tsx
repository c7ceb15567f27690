import { Fragment } from 'react'

// One token of pretty-printed JSON: keys, strings, numbers, true/false,
// null, or punctuation and white space.
const TOKEN = /("(?:[^"\\]|\\.)*")(\s*:)?|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|(true|false)|(null)|([^"\-\dtfn]+|.)/g

/**
 * JsonView shows a JSON value pretty-printed and syntax-coloured (keys,
 * strings, numbers, booleans, null each in its own class). Everything is
 * rendered as text nodes: a value can never become markup.
 */
export function JsonView({ value, testId }: { value: unknown; testId?: string }) {
  const text = JSON.stringify(value, null, 2) ?? 'undefined'
  const parts: React.ReactNode[] = []
  let m: RegExpExecArray | null
  let i = 0
  TOKEN.lastIndex = 0
  while ((m = TOKEN.exec(text)) !== null) {
    const [, str, colon, num, bool, nul, other] = m
    if (str !== undefined) {
      parts.push(
        <span key={i++} className={colon ? 'json-key' : 'json-string'}>
          {str}
        </span>,
      )
      if (colon) parts.push(<Fragment key={i++}>{colon}</Fragment>)
    } else if (num !== undefined) parts.push(<span key={i++} className="json-number">{num}</span>)
    else if (bool !== undefined) parts.push(<span key={i++} className="json-bool">{bool}</span>)
    else if (nul !== undefined) parts.push(<span key={i++} className="json-null">{nul}</span>)
    else parts.push(<Fragment key={i++}>{other}</Fragment>)
  }
  return (
    <pre className="json-view" data-testid={testId} tabIndex={0}>
      <code>{parts}</code>
    </pre>
  )
}
