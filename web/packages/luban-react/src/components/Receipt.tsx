import type { CardItem } from '../card'
import { SignedMark } from './SignedMark'
import { formatTime, useLang, useT, type Dict } from '../i18n'
import type { Receipt } from '../types'
import { visible } from '../visible'

function statusText(t: Dict, r: Receipt): string {
  if (r.status === 'cancelled') return t.receiptCancelled
  if (r.status === 'expired') return t.receiptExpired
  return t.receiptAnswered
}

function timeLabel(t: Dict, r: Receipt): string {
  if (r.status === 'cancelled') return t.cancelledAt
  if (r.status === 'expired') return t.expiredAt
  return t.submittedAt
}

/**
 * runText names how a run ended, for the one line after the session's last
 * run ("任务已完成"); '' for a status that is not an end.
 */
export function runText(t: Dict, s: string): string {
  switch (s) {
    case 'completed':
      return t.runCompleted
    case 'cancelled':
      return t.runCancelled
    case 'expired':
      return t.runExpired
    case 'failed':
      return t.runFailed
    default:
      return ''
  }
}

/**
 * ReceiptView is the read-only card after a request was resolved (docs/design.md
 * §A.6.3): its own resolution (answered, cancelled, expired), the chosen
 * labels, the custom text and the time. The run's state is not the
 * receipt's: it shows once, after the session's last run.
 * Option ids are shown by their labels when the request still has them.
 * A batch (AskUser) shows each question with its answer and no title.
 */
export function ReceiptView({ card }: { card: CardItem }) {
  const t = useT()
  const lang = useLang()
  const r = card.receipt!
  const req = card.request
  const batch = req.mode === 'questions' || !!r.answers?.length
  const labels = (r.selections ?? []).map((id) => req.options?.find((o) => o.id === id)?.label ?? id).map((l) => visible(l))
  return (
    <div className={`receipt receipt-${r.status}`} data-testid="receipt" data-status={r.status}>
      <div className="receipt-head">
        <span className="chip" data-testid="receipt-status">
          {statusText(t, r)}
        </span>
        {/* A batch's title is its first question, which its answers name already. */}
        {req.title && !batch && (
          <span className="receipt-title" data-testid="receipt-title">
            {visible(req.title)}
          </span>
        )}
      </div>
      {r.status === 'answered' && !r.answers?.length && (labels.length > 0 || !r.customInput) && (
        <div data-testid="receipt-selections">
          {t.selected}: {labels.length ? labels.join('、') : t.nothingSelected}
        </div>
      )}
      {r.status === 'answered' &&
        r.answers?.map((a, i) => (
          <div key={i} className="receipt-answer" data-testid={`receipt-answer-${i}`}>
            <div className="receipt-q">{visible(a.question)}</div>
            <div>
              {a.selected?.length ? a.selected.map((l) => visible(l)).join('、') : ''}
              {a.other ? `${a.selected?.length ? '；' : ''}${t.other}: ${visible(a.other)}` : ''}
            </div>
          </div>
        ))}
      {r.status === 'answered' && r.customInput && (
        <div className="receipt-custom" data-testid="receipt-custom">
          {visible(r.customInput)}
        </div>
      )}
      <div className="receipt-time" data-testid="receipt-time">
        {timeLabel(t, r)}: <time dateTime={r.resolvedAt}>{formatTime(r.resolvedAt, lang)}</time>
      </div>
      <SignedMark receipt={r as Receipt} />
    </div>
  )
}
