import type { CardItem, ToolItem } from 'luban-react'
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
 * approval is the call's approval card, when it has one: while it waits the
 * line says so, and a rejected call reads as rejected, not as an error.
 */
export function ToolCallView({ item, approval }: { item: ToolItem; approval?: CardItem }) {
  const t = useT()
  const rejected = approval?.receipt?.decision === 'reject'
  const waiting = !item.result && approval !== undefined && approval.phase !== 'resolved' && approval.phase !== 'not_resumable'
  const state = rejected ? t.toolRejected : item.result ? (item.result.isError ? t.toolError : t.toolResult) : waiting ? t.toolWaitingApproval : t.running
  const look = rejected ? ' tool-rejected' : item.result?.isError ? ' tool-error' : ''
  return (
    <details className={`tool${look}`} data-testid="tool-call" data-tool={item.name}>
      <summary>
        <span className="tool-name">
          {t.toolCall}: {visible(item.name)}
        </span>{' '}
        <span className="tool-state" data-testid="tool-state">
          {state}
        </span>
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
