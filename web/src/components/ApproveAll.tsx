import { useEffect, useId, useRef } from 'react'
import { errorText, fieldErrorText, isApproval, useLang, type Answer, type CardFailure, type CardItem, type CodedFieldError } from 'luban-react'
import { useT } from '../i18n'

/** APPROVE is the answer "Approve all" gives each approval (docs/design.md §10 decision approve). */
const APPROVE = { decision: 'approve' } as unknown as Answer

/**
 * openApprovals are the approval cards of a session still waiting for a
 * decision (editing, or their answer in flight), in order — but not one
 * that needs a quorum: the server answers those on their own, never in a
 * batch (docs/design.md §32), so they keep their own card's buttons.
 */
export function openApprovals(cards: CardItem[]): CardItem[] {
  return cards.filter(
    (c) => isApproval(c.request) && (c.request.waitingFor?.quorum ?? 1) <= 1 && (c.phase === 'editing' || c.phase === 'submitting'),
  )
}

/**
 * ApproveAll is the bar under a session's cards while two or more
 * approvals wait (docs/design.md §17 "Batch"): one button approves every
 * one still editing in ONE POST /api/chat/continue {sessionId, answers:
 * [{requestId, decision: "approve"}, …]} (onApproveAll); each card then
 * shows its receipt. While the batch is in flight the button is disabled;
 * a refusal that names a card is shown on that card, one that names none
 * (error: a network error, a 5xx) here, and the focus comes back to the
 * button. Nothing is rendered with fewer than two open approvals.
 */
export function ApproveAll({
  cards,
  error,
  onApproveAll,
}: {
  /** cards are the session's cards (useLubanSession's cards). */
  cards: CardItem[]
  /** error is the last batch's failure that named no card (useLubanSession's batchError). */
  error?: CardFailure
  onApproveAll: (entries: { requestId: string; answer: Answer }[]) => void
}) {
  const t = useT()
  const lang = useLang()
  const uid = useId()
  const button = useRef<HTMLButtonElement>(null)
  const open = openApprovals(cards)
  const busy = open.some((c) => c.phase === 'submitting')
  // The button was disabled while the batch was sent, so the focus fell
  // to the page: a failure that names no card brings it back here.
  useEffect(() => {
    if (error) button.current?.focus()
  }, [error])
  if (open.length < 2) return null
  const approve = () => {
    if (busy) return
    onApproveAll(open.filter((c) => c.phase === 'editing').map((c) => ({ requestId: c.request.id, answer: APPROVE })))
  }
  return (
    <section className="approve-all" data-testid="approve-all-bar" data-count={open.length} aria-labelledby={`${uid}-title`}>
      <p className="approve-all-title" id={`${uid}-title`}>
        {t.approveAllTitle(open.length)}
      </p>
      <button
        ref={button}
        type="button"
        className="primary"
        data-testid="approve-all"
        disabled={busy}
        aria-describedby={[`${uid}-title`, error ? `${uid}-error` : ''].filter(Boolean).join(' ')}
        onClick={approve}
      >
        {busy ? t.submitting : t.approveAll(open.length)}
      </button>
      {error && (
        <div className="card-error" id={`${uid}-error`} data-testid="approve-all-error" data-code={error.code} role="alert">
          <div>
            {t.errorPrefix}: {errorText(t, error)}
          </div>
          {(error.details ?? []).map((d, i) => (
            <div key={i} data-code={(d as CodedFieldError).code} data-field={d.field}>
              {d.field ? `${d.field}: ` : ''}
              {fieldErrorText(lang, d as CodedFieldError)}
            </div>
          ))}
        </div>
      )}
    </section>
  )
}
