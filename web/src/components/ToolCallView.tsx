import type { ToolItem } from 'luban-react'
import { useT } from '../i18n'
import { visible } from 'luban-react'

function pretty(v: unknown): string {
  if (v === undefined) return ''
  if (typeof v === 'string') {
    try {
      return JSON.stringify(JSON.parse(v), null, 2)
    } catch {
      return v
    }
  }
  return JSON.stringify(v, null, 2)
}

/**
 * ToolCallView shows one tool call and its result compactly: a one-line
 * summary that expands to the arguments and the result, all as text.
 */
export function ToolCallView({ item }: { item: ToolItem }) {
  const t = useT()
  const state = item.result ? (item.result.isError ? t.toolError : t.toolResult) : t.running
  return (
    <details className={`tool${item.result?.isError ? ' tool-error' : ''}`} data-testid="tool-call" data-tool={item.name}>
      <summary>
        <span className="tool-name">
          {t.toolCall}: {visible(item.name)}
        </span>{' '}
        <span className="tool-state">{state}</span>
      </summary>
      {item.arguments !== undefined && (
        <>
          <div className="tool-label">{t.arguments}</div>
          <pre>{visible(pretty(item.arguments))}</pre>
        </>
      )}
      {item.result && (
        <>
          <div className="tool-label">{state}</div>
          <pre data-testid="tool-result">{visible(item.result.content)}</pre>
        </>
      )}
    </details>
  )
}
