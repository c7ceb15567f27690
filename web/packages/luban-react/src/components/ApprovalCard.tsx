import { useId, useState } from 'react'
import { SignedMark } from './SignedMark'
import { record, useDraft } from '../drafts'
import type { CardItem } from '../card'
import { formatTime, useLang } from '../i18n'
import type { FieldError, Receipt } from '../types'
import { visible } from '../visible'
import { approvalText, descriptionIn, parseArguments, type ApprovalAnswer, type ApprovalReceipt, type ApprovalRequest } from './approval'
import { CardError, FieldMessages, otherErrors } from './fieldErrors'
import { JsonView } from './JsonView'
import { TextCounter } from './TextCounter'
import { KeyHints } from './KeyHints'
import { CancelTask } from './CancelTask'

/** ApprovalDraft is what the approval form keeps across reloads: the open panel, the edited arguments, the reason, the remember box. */
type ApprovalDraft = { mode: 'idle' | 'edit' | 'reject'; text: string; reason: string; remember: boolean }

function restoreApproval(raw: unknown): ApprovalDraft | undefined {
  const r = record(raw)
  if (!r || typeof r.text !== 'string') return undefined
  return {
    mode: r.mode === 'edit' || r.mode === 'reject' ? r.mode : 'idle',
    text: r.text,
    reason: typeof r.reason === 'string' ? r.reason : '',
    remember: r.remember === true,
  }
}

function isArgumentsField(field: string): boolean {
  return field === 'arguments' || field.startsWith('arguments.') || field.startsWith('arguments[')
}

type Props = {
  card: CardItem
  /** onSubmit sends the decision (POST /api/chat/continue). */
  onSubmit: (a: ApprovalAnswer) => void
  /** onCancel sends `cancelled: true`: the run stops (docs/design.md §10). */
  onCancel: () => void
}

/**
 * ApprovalForm is the approval card's form (docs/design.md §10): the tool's name
 * and description, the model's arguments as coloured JSON, and the three
 * decisions: approve; edit (a JSON editor checked against the tool's schema
 * before sending, the server's 422 details shown under it); reject with an
 * optional reason. "Always allow in this session" adds remember: "session"
 * to approve and edit. Everything the model wrote is rendered as text.
 */
export function ApprovalForm({ card, onSubmit, onCancel }: Props) {
  const lang = useLang()
  const a = approvalText[lang]
  const uid = useId()
  const req = card.request as unknown as ApprovalRequest
  const busy = card.phase === 'submitting'
  const [draft, setDraft] = useDraft<ApprovalDraft>(
    card.request,
    () => ({
      mode: card.fieldErrors?.some((e) => e.field.startsWith('arguments')) ? 'edit' : 'idle',
      text: JSON.stringify(req.arguments ?? {}, null, 2),
      reason: '',
      remember: false,
    }),
    restoreApproval,
  )
  const { mode, text, reason, remember } = draft
  const setMode = (m: ApprovalDraft['mode']) => setDraft((d) => ({ ...d, mode: m }))
  const setText = (v: string) => setDraft((d) => ({ ...d, text: v }))
  const setReason = (v: string) => setDraft((d) => ({ ...d, reason: v }))
  const setRemember = (v: boolean) => setDraft((d) => ({ ...d, remember: v }))
  const [localErrors, setLocalErrors] = useState<FieldError[]>([])
  // The server's details about the arguments judged the text that was
  // sent; once that text is edited they are hidden until the next answer.
  const [editedSince, setEditedSince] = useState<FieldError[] | undefined>()
  const server = (card.fieldErrors ?? []).filter((e) => !(card.fieldErrors === editedSince && isArgumentsField(e.field)))
  const errs = [...localErrors, ...server]
  const extra = remember ? { remember: 'session' as const } : {}

  const approve = () => !busy && onSubmit({ decision: 'approve', cancelled: false, ...extra })
  const sendEdit = (e: React.FormEvent) => {
    e.preventDefault()
    if (busy) return
    const r = parseArguments(text, req.argumentsSchema)
    setLocalErrors(r.errors)
    if (r.value) onSubmit({ decision: 'edit', arguments: r.value, cancelled: false, ...extra })
  }
  const sendReject = (e: React.FormEvent) => {
    e.preventDefault()
    if (busy) return
    onSubmit({ decision: 'reject', cancelled: false, ...(reason.trim() ? { message: reason } : {}) })
  }
  const editorId = `${uid}-editor`
  const reasonId = `${uid}-reason`

  return (
    <div className="approval card-body" data-testid="approval-form">
      <div className="approval-tool">
        <span className="tool-label">{a.tool}</span>{' '}
        <code className="approval-tool-name" data-testid="approval-tool">
          {visible(req.toolName)}
        </code>
      </div>
      {req.description && (
        <p className="card-desc" data-testid="approval-description">
          {visible(descriptionIn(req.description, lang))}
        </p>
      )}
      <div className="approval-args">
        <div className="tool-label">{a.argumentsLabel}</div>
        <JsonView value={req.arguments ?? {}} testId="approval-arguments" />
      </div>
      <fieldset disabled={busy} className="card-body">
        {mode === 'edit' && (
          <form onSubmit={sendEdit} noValidate className="approval-edit">
            <label htmlFor={editorId}>{a.editing}</label>
            <textarea
              id={editorId}
              data-testid="approval-editor"
              className="json-editor"
              autoFocus
              spellCheck={false}
              rows={Math.min(16, Math.max(4, text.split('\n').length + 1))}
              value={text}
              aria-invalid={errs.length > 0}
              onChange={(e) => {
                setText(e.target.value)
                setLocalErrors([])
                setEditedSince(card.fieldErrors)
              }}
            />
            <FieldMessages errors={errs} field="arguments" />
            <div className="actions">
              <button type="submit" className="primary" data-testid="approval-send-edit" aria-keyshortcuts="Control+Enter">
                {busy ? a.submitting : a.sendEdit}
              </button>
              <button type="button" data-testid="approval-close-edit" onClick={() => setMode('idle')}>
                {a.closeEdit}
              </button>
            </div>
          </form>
        )}
        {mode === 'reject' && (
          <form onSubmit={sendReject} noValidate className="approval-reject">
            <label htmlFor={reasonId}>{a.rejectReason}</label>
            <textarea id={reasonId} data-testid="approval-reason" rows={2} autoFocus value={reason} onChange={(e) => setReason(e.target.value)} />
            <TextCounter value={reason} />
            <FieldMessages errors={errs} field="message" />
            <div className="actions">
              <button type="submit" className="danger" data-testid="approval-confirm-reject" data-primary aria-keyshortcuts="Control+Enter">
                {busy ? a.submitting : a.confirmReject}
              </button>
              <button type="button" data-testid="approval-close-reject" onClick={() => setMode('idle')}>
                {a.closeReject}
              </button>
            </div>
          </form>
        )}
        {/* While a reject is being written, approving is not on offer: back first. */}
        {mode !== 'reject' && (
          <label className="approval-remember">
            <input type="checkbox" data-testid="approval-remember" checked={remember} onChange={(e) => setRemember(e.target.checked)} />{' '}
            {a.remember}
          </label>
        )}
        <FieldMessages errors={errs} field="remember" />
        <CardError card={card} unmatched={otherErrors(errs, ['arguments', 'message', 'remember'])} />
        <div className="actions">
          {mode !== 'reject' && (
            <button type="button" className="primary" data-testid="approval-approve" data-primary aria-keyshortcuts="Control+Enter" onClick={approve}>
              {busy && mode === 'idle' ? a.submitting : a.approve}
            </button>
          )}
          {mode === 'idle' && (
            <button type="button" data-testid="approval-edit" onClick={() => setMode('edit')}>
              {a.edit}
            </button>
          )}
          {mode !== 'reject' && (
            <button type="button" data-testid="approval-reject" onClick={() => setMode('reject')}>
              {a.reject}
            </button>
          )}
          <CancelTask onCancel={onCancel} disabled={busy} />
        </div>
        <KeyHints primary={mode === 'reject' ? 'reject' : 'approve'} />
      </fieldset>
    </div>
  )
}

/**
 * ApprovalReceiptView is the read-only card after an approval was resolved:
 * the decision (approved, approved with edits, rejected; or cancelled,
 * expired), the arguments the tool ran with when edited, the reason of a
 * reject, "always allowed in this session" and the time: its own
 * resolution, never the run's.
 */
export function ApprovalReceiptView({ card }: { card: CardItem }) {
  const lang = useLang()
  const a = approvalText[lang]
  const r = card.receipt as unknown as ApprovalReceipt
  const req = card.request as unknown as ApprovalRequest
  const label =
    r.status === 'cancelled'
      ? a.cancelled
      : r.status === 'expired'
        ? a.expired
        : r.decision === 'edit'
          ? a.edited
          : r.decision === 'reject'
            ? a.rejected
            : a.approved
  return (
    <div className={`receipt receipt-${r.status} receipt-${r.decision ?? 'none'}`} data-testid="receipt" data-status={r.status} data-decision={r.decision ?? ''}>
      <div className="receipt-head">
        <span className="chip" data-testid="receipt-status">
          {label}
        </span>
        <code className="approval-tool-name">{visible(req.toolName)}</code>
      </div>
      {r.decision === 'edit' && r.arguments && (
        <div data-testid="receipt-arguments">
          <div className="tool-label">{a.ranWith}</div>
          <JsonView value={r.arguments} />
        </div>
      )}
      {r.decision === 'reject' && r.message && (
        <div className="receipt-custom" data-testid="receipt-message">
          {a.reason}: {visible(r.message)}
        </div>
      )}
      {r.remember === 'session' && (
        <div className="chip" data-testid="receipt-remember">
          {a.remembered}
        </div>
      )}
      <div className="receipt-time" data-testid="receipt-time">
        {a.decidedAt}: <time dateTime={r.resolvedAt}>{formatTime(r.resolvedAt, lang)}</time>
      </div>
      <SignedMark receipt={r as Receipt} />
    </div>
  )
}
