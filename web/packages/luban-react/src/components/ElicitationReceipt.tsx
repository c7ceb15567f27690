import type { CardItem } from '../card'
import type { Receipt } from '../types'
import { SignedMark } from './SignedMark'
import { formatTime, useLang, useT } from '../i18n'
import { visible } from '../visible'
import { elicitationText } from './elicitation'

/**
 * ElicitationReceipt is the read-only card of a resolved elicitation
 * (docs/design.md §11): accepted with the values sent (by field title), declined,
 * cancelled, expired or not_resumable (luban restarted while an older
 * server's in-session question waited), the time, then the run's state.
 */
export function ElicitationReceipt({ card }: { card: CardItem }) {
  const t = useT()
  const lang = useLang()
  const s = elicitationText[lang]
  const r = card.receipt!
  const req = card.request
  const declined = r.status === 'answered' && r.decision === 'decline'
  const status =
    r.status === 'cancelled'
      ? t.receiptCancelled
      : r.status === 'expired'
        ? t.receiptExpired
        : r.status === 'not_resumable'
          ? t.notResumable
          : declined ? s.receiptDeclined : req.mode === 'url' ? s.receiptUrlDone : s.receiptAccepted
  const content = r.status === 'answered' && !declined && r.content && typeof r.content === 'object' ? (r.content as Record<string, unknown>) : null
  return (
    <div className={`receipt receipt-${r.status}`} data-testid="receipt" data-status={r.status} data-decision={r.decision ?? ''}>
      <div className="receipt-head">
        <span className="chip" data-testid="receipt-status">
          {status}
        </span>
        {req.title && <span className="receipt-title">{visible(req.title)}</span>}
      </div>
      {r.status === 'not_resumable' && (
        <p className="receipt-why" data-testid="receipt-why">
          {s.notResumableWhy}
        </p>
      )}
      {content && (
        <dl className="receipt-content" data-testid="receipt-content">
          {Object.entries(content).map(([k, v]) => {
            const f = req.fields?.find((x) => x.name === k)
            const label = f?.title || k
            const shown = Array.isArray(v)
              ? v.map((x) => f?.options?.find((o) => o.value === String(x))?.label ?? String(x)).join('、')
              : f?.options?.find((o) => o.value === String(v))?.label ?? (typeof v === 'boolean' ? (v ? s.yes : '✗') : String(v))
            return (
              <div key={k} data-testid={`receipt-field-${k}`}>
                <dt>{visible(label)}</dt>
                <dd>{visible(shown)}</dd>
              </div>
            )
          })}
        </dl>
      )}
      <div className="receipt-time" data-testid="receipt-time">
        <time dateTime={r.resolvedAt}>{formatTime(r.resolvedAt, lang)}</time>
      </div>
      <SignedMark receipt={r as Receipt} />
    </div>
  )
}
