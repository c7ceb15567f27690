import { useEffect, useId, useRef, useState } from 'react'
import { isReceiptOf, type CardItem } from '../card'
import { formatTime, useLang, useT } from '../i18n'
import type { Answer, FieldError } from '../types'
import { numberProblem } from '../numberAnswer'
import { AskUserForm } from './AskUserForm'
import { approvalText, isApproval, type ApprovalRequest } from './approval'
import { ApprovalForm, ApprovalReceiptView } from './ApprovalCard'
import { CardError, FieldMessages, matchField, otherErrors } from './fieldErrors'
import { ElicitationForm } from './ElicitationForm'
import { ElicitationReceipt } from './ElicitationReceipt'
import { elicitationText } from './elicitation'
import { UrlElicitation } from './UrlElicitation'
import { ReceiptView } from './Receipt'
import { visible } from '../visible'
import { errorText } from '../errorText'
import { onCardKeyDown } from '../keys'
import { TextCounter } from './TextCounter'
import { KeyHints, keyText } from './KeyHints'
import { CancelTask } from './CancelTask'
import { record, strings, useDraft, useDraftStore } from '../drafts'

/** CardProps are the props of UserInputCard. */
export type CardProps = {
  card: CardItem
  /** onSubmit sends an answer (POST /api/chat/continue). */
  onSubmit: (a: Answer) => void
  /** onCancel sends `cancelled: true` with empty selections. */
  onCancel: () => void
  /** onExpire is called once when expiresAt passes on an unanswered card. */
  onExpire?: () => void
}

/**
 * draftText is the text a person typed into a card's draft (its custom,
 * other and reason boxes, and string answers of a form), non-blank, in
 * order; choices are not text and are left out.
 */
function draftText(raw: unknown): string[] {
  const out: string[] = []
  const walk = (v: unknown, key: string) => {
    if (typeof v === 'string') {
      if (['custom', 'customInput', 'other', 'reason', 'message', 'value', 'content'].includes(key) && v.trim()) out.push(v)
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, key))
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, key === 'content' || key === 'values' ? 'value' : k)
  }
  walk(raw, '')
  return out
}

const FREE = new Set(['text', 'number', 'date', 'directory'])
const MAX_TIMER = 2 ** 31 - 1

/**
 * UserInputCard renders one InputRequest by its mode (docs/design.md §A.3 table;
 * AskUser batches by AskUserForm), then the receipt it turned into, or the
 * non-resumable notice. Every model-written string is rendered as text.
 */
export function UserInputCard({ card, onSubmit, onCancel, onExpire }: CardProps) {
  const t = useT()
  const lang = useLang()
  const req = card.request
  const editing = card.phase === 'editing' || card.phase === 'submitting'
  const drafts = useDraftStore()

  // A resolved request (answered here or elsewhere, cancelled, expired) or
  // one that can no longer be answered has no draft to come back to.
  // A card with a draft that resolves while nobody here submitted it was
  // answered (or cancelled) elsewhere: the receipt says so and keeps the
  // text that was typed here, collapsed, since the draft itself goes.
  const [discarded, setDiscarded] = useState<{ text: string[] } | null>(null)
  const sawEditing = useRef(card.phase === 'editing')
  useEffect(() => {
    if (card.phase === 'editing') sawEditing.current = true
    else if (card.phase === 'submitting') sawEditing.current = false
  }, [card.phase])
  useEffect(() => {
    if (editing) return
    // An answer sent from here that landed although its reply was lost (a
    // 5xx, a network error) comes back live as its own receipt: no note.
    const ours = !!card.lastAnswer && !!card.receipt && isReceiptOf(card.lastAnswer, card.receipt)
    if (sawEditing.current && !ours && card.phase === 'resolved' && card.receipt && card.receipt.status !== 'expired') {
      const raw = drafts?.load(req.sessionId, req.id)
      if (raw !== undefined) setDiscarded({ text: draftText(raw) })
    }
    sawEditing.current = false
    drafts?.clear(req.sessionId, req.id)
  }, [drafts, editing, card.phase, card.receipt, card.lastAnswer, req.sessionId, req.id])

  // An approval's heading is worded in the page language from its tool's
  // name; its description is the tool's, shown once by ApprovalForm.
  const approval = isApproval(req)
  // An AskUser batch's title is its first question, which its form shows
  // anyway: the heading says how many questions follow instead.
  const title = approval
    ? approvalText[lang].runTitle(visible((req as unknown as ApprovalRequest).toolName ?? ''))
    : req.mode === 'questions' && req.questions?.length
      ? t.batchTitle(req.questions.length)
      : visible(req.title)

  // A submit that came back to editing (a 422, a network error, a 5xx)
  // had its controls disabled while it was sent, so the focus fell to the
  // page: it goes to the control that needs attention (attentionControl),
  // where the error is announced (role=alert) and describes it. A card
  // of a refused batch that the refusal does not name has no error and
  // takes no focus (the named card, or the batch's button, does).
  const sectionRef = useRef<HTMLElement>(null)
  const lastPhase = useRef(card.phase)
  useEffect(() => {
    const was = lastPhase.current
    lastPhase.current = card.phase
    if (was !== 'submitting' || card.phase !== 'editing' || !sectionRef.current) return
    if (!card.error && !card.fieldErrors?.length) return
    attentionControl(sectionRef.current)?.focus()
  }, [card.phase, card.fieldErrors, card.error])

  useEffect(() => {
    if (!editing || !onExpire || !req.expiresAt) return
    const ms = new Date(req.expiresAt).getTime() - Date.now()
    if (Number.isNaN(ms)) return
    if (ms <= 0) {
      onExpire()
      return
    }
    const timer = setTimeout(onExpire, Math.min(ms, MAX_TIMER))
    return () => clearTimeout(timer)
  }, [editing, onExpire, req.expiresAt])

  const unsent = card.lostAnswer ? draftText(card.lostAnswer) : (discarded?.text ?? [])
  return (
    <section
      ref={sectionRef}
      className={`card card-${card.phase}`}
      data-testid="input-card"
      data-request-id={req.id}
      data-phase={card.phase}
      data-mode={req.mode}
      aria-label={title}
      tabIndex={-1}
      onKeyDown={editing ? onCardKeyDown : undefined}
    >
      {card.phase === 'resolved' && card.receipt && (discarded || card.lostAnswer) && (
        <div className="elsewhere" data-testid="resolved-elsewhere" role="status">
          <div>
            {card.receipt.status === 'cancelled'
              ? t.cancelledElsewhere
              : card.receipt.status === 'not_resumable'
                ? t.notResumable
                : t.answeredElsewhere}
            {card.lostAnswer ? t.answerNotTaken : unsent.length === 0 && t.draftDiscarded}
          </div>
          {unsent.length > 0 && (
            <details data-testid="unsent-draft">
              <summary>{card.lostAnswer ? t.yourAnswer : t.unsentDraft}</summary>
              <pre className="unsent-draft">{unsent.map((s) => visible(s)).join('\n\n')}</pre>
            </details>
          )}
        </div>
      )}
      {card.phase === 'resolved' && card.receipt ? (
        isApproval(req) ? (
          <ApprovalReceiptView card={card} />
        ) : req.tool === 'elicitation' ? (
          <ElicitationReceipt card={card} />
        ) : (
          <ReceiptView card={card} />
        )
      ) : (
        <>
          <h3 className="card-title">{title}</h3>
          {req.waitingFor && (
            <p className="card-source" data-testid="waiting-for">
              {t.waitingFor(req.waitingFor.names.map((n) => visible(n)), req.waitingFor.approvals.length, req.waitingFor.quorum)}
            </p>
          )}
          {req.description && !approval && <p className="card-desc">{visible(req.description)}</p>}
          {card.phase === 'not_resumable' ? (
            <p className="not-resumable" data-testid="not-resumable" data-code={card.error?.code ?? 'not_resumable'} role="alert">
              {req.tool === 'elicitation' && (card.error?.code ?? 'not_resumable') === 'not_resumable'
                ? // An MCP server's in-session question whose process died: say why.
                  elicitationText[lang].notResumableWhy
                : card.error
                  ? errorText(t, card.error)
                  : t.notResumable}
            </p>
          ) : (
            <>
              {req.expiresAt && (
                <p className="expires" data-testid="expires-at">
                  {t.expiresAt}: <time dateTime={req.expiresAt}>{formatTime(req.expiresAt, lang)}</time>
                </p>
              )}
              {isApproval(req) ? (
                // An approval answer is {decision, arguments?, message?, remember?} (docs/design.md §10).
                <ApprovalForm card={card} onSubmit={(a) => onSubmit(a as unknown as Answer)} onCancel={onCancel} />
              ) : req.mode === 'form' ? (
                // An elicitation's answer is {decision, content?} (docs/design.md §11).
                <ElicitationForm card={card} onSubmit={(a) => onSubmit(a as unknown as Answer)} onCancel={onCancel} />
              ) : req.mode === 'url' ? (
                <UrlElicitation card={card} onSubmit={(a) => onSubmit(a as unknown as Answer)} onCancel={onCancel} />
              ) : req.mode === 'questions' ? (
                <AskUserForm card={card} onSubmit={onSubmit} onCancel={onCancel} />
              ) : (
                <AskForm card={card} onSubmit={onSubmit} onCancel={onCancel} />
              )}
            </>
          )}
        </>
      )}
    </section>
  )
}

/**
 * attentionControl is where the focus goes after a failed submit: the
 * first field a 422 marked invalid, else the retry of a card-level error,
 * else the card's submit (its main action), else the card itself.
 */
export function attentionControl(card: HTMLElement): HTMLElement | null {
  return (
    card.querySelector<HTMLElement>('[aria-invalid="true"]:not([disabled])') ??
    card.querySelector<HTMLElement>('[data-testid="retry"]:not([disabled])') ??
    card.querySelector<HTMLElement>('[data-testid="submit"]:not([disabled]), [data-primary]:not([disabled])') ??
    card
  )
}

type FormProps = { card: CardItem; onSubmit: (a: Answer) => void; onCancel: () => void }

/** AskForm is the ask_user form for the seven modes of docs/design.md §A.1. */
function AskForm({ card, onSubmit, onCancel }: FormProps) {
  const t = useT()
  const uid = useId()
  const req = card.request
  const mode = req.mode
  const free = FREE.has(mode)
  const [draft, setDraft] = useDraft<{ selections: string[]; custom: string }>(
    req,
    () => ({ selections: [], custom: '' }),
    (raw) => {
      const r = record(raw)
      if (!r) return undefined
      const ids = new Set((req.options ?? []).map((o) => o.id))
      const sel = free ? [] : strings(r.selections).filter((id) => ids.has(id))
      return { selections: mode === 'single' ? sel.slice(0, 1) : sel, custom: typeof r.custom === 'string' ? r.custom : '' }
    },
  )
  const { selections, custom } = draft
  const setSelections = (f: (cur: string[]) => string[]) => setDraft((d) => ({ ...d, selections: f(d.selections) }))
  // A number answer is checked here first, with the server's rules and
  // wording (numberProblem): its problem shows once a submit was tried,
  // then follows the typing; the server's stand until the next send.
  const [local, setLocal] = useState<FieldError[] | null>(null)
  const numberErrors = (v: string) => {
    const p = mode === 'number' && v.trim() ? numberProblem(req, v) : null
    return p ? [p] : []
  }
  const setCustom = (v: string) => {
    setDraft((d) => ({ ...d, custom: v }))
    if (local) setLocal(numberErrors(v))
  }
  const busy = card.phase === 'submitting'
  const errs = local ?? card.fieldErrors

  let hint = ''
  if (mode === 'toggle' && selections.length === 0) hint = t.toggleNeedsOne
  else if (mode === 'single' && selections.length === 0 && !(req.allowCustom && custom.trim())) hint = t.singleNeedsOne
  else if (free && !custom.trim()) hint = t.valueRequired

  const toggle = (id: string, on: boolean) =>
    setSelections((cur) => (mode === 'single' ? [id] : on ? [...cur.filter((x) => x !== id), id] : cur.filter((x) => x !== id)))

  const submit = (e: React.FormEvent) => {
    e.preventDefault()
    if (hint || busy) return
    const wrong = numberErrors(custom)
    if (wrong.length) {
      setLocal(wrong)
      document.getElementById(customId)?.focus()
      return
    }
    setLocal(null)
    onSubmit({ selections: free ? [] : selections, customInput: custom, cancelled: false })
  }

  // "Accept recommended" answers with the recommended option (the first
  // one for a single choice) and the note typed so far.
  const k = keyText[useLang()]
  const recs = free ? [] : (req.options ?? []).filter((o) => o.recommended)
  const recommended = mode === 'single' ? recs.slice(0, 1) : recs
  const acceptRecommended = () => {
    if (busy || !recommended.length) return
    onSubmit({ selections: recommended.map((o) => o.id), customInput: custom, cancelled: false })
  }

  const inputType = mode === 'single' ? 'radio' : 'checkbox'
  const hintId = `${uid}-hint`
  const customId = `${uid}-custom`
  const customInvalid = (errs ?? []).some((e) => matchField(e.field, 'customInput'))
  const lo = req.minimum ?? undefined
  const hi = req.maximum ?? undefined
  const numberHint = mode === 'number' ? t.numberHint(lo, hi, !!req.integer) : ''
  const fieldHintId = `${customId}-hint`
  const freeLabel =
    mode === 'number' ? t.numberInput : mode === 'date' ? t.dateInput : mode === 'directory' ? t.directoryInput : t.textInput

  return (
    <form onSubmit={submit} noValidate>
      <fieldset disabled={busy} className="card-body">
        {!free && (
          <div role="group" aria-label={visible(req.title)} className={`options options-${mode}`} data-key-group>
            {(req.options ?? []).map((o, n) => {
              const id = `${uid}-opt-${o.id}`
              const checked = selections.includes(o.id)
              return (
                <div key={o.id} className={`option${checked ? ' option-checked' : ''}`}>
                  <input
                    id={id}
                    type={inputType}
                    role={mode === 'toggle' ? 'switch' : undefined}
                    aria-checked={mode === 'toggle' ? checked : undefined}
                    name={`${uid}-options`}
                    value={o.id}
                    checked={checked}
                    data-testid={`option-${o.id}`}
                    data-key-option={n < 9 ? '' : undefined}
                    aria-keyshortcuts={n < 9 ? String(n + 1) : undefined}
                    aria-describedby={o.description ? `${id}-desc` : undefined}
                    onChange={(e) => toggle(o.id, e.target.checked)}
                    className={mode === 'toggle' ? 'switch' : undefined}
                  />
                  <label htmlFor={id}>
                    <span className="option-head">
                      {n < 9 && (
                        <kbd className="key-num" aria-hidden="true">
                          {n + 1}
                        </kbd>
                      )}
                      <span className="option-label">{visible(o.label)}</span>
                      {o.recommended && (
                        <span className="chip chip-recommended" data-testid={`recommended-${o.id}`}>
                          {t.recommended}
                        </span>
                      )}
                    </span>
                    {o.description && (
                      <span className="option-desc" id={`${id}-desc`}>
                        {visible(o.description)}
                      </span>
                    )}
                  </label>
                </div>
              )
            })}
          </div>
        )}
        <FieldMessages errors={errs} field="selections" />
        {(free || req.allowCustom) && (
          <div className="custom">
            <label htmlFor={customId}>{free ? freeLabel : t.customInput}</label>
            {mode === 'text' || !free ? (
              // Free text and the "其他说明" box (allowCustom) keep line breaks.
              <textarea
                id={customId}
                data-testid="custom-input"
                aria-invalid={customInvalid || undefined}
                aria-describedby={customInvalid ? `${customId}-err` : undefined}
                value={custom}
                rows={free ? 3 : 2}
                onChange={(e) => setCustom(e.target.value)}
              />
            ) : (
              <input
                id={customId}
                data-testid="custom-input"
                type={mode === 'number' ? 'number' : mode === 'date' ? 'date' : 'text'}
                // A whole number that cannot be negative gets the digits keypad.
                inputMode={mode === 'number' ? (req.integer && lo !== undefined && lo >= 0 ? 'numeric' : 'decimal') : undefined}
                step={mode === 'number' ? (req.integer ? 1 : 'any') : undefined}
                min={mode === 'number' ? lo : undefined}
                max={mode === 'number' ? hi : undefined}
                placeholder={mode === 'directory' ? 'src/app' : undefined}
                aria-invalid={customInvalid || undefined}
                aria-describedby={[mode === 'directory' || numberHint ? fieldHintId : '', customInvalid ? `${customId}-err` : ''].filter(Boolean).join(' ') || undefined}
                value={custom}
                onChange={(e) => setCustom(e.target.value)}
              />
            )}
            {mode === 'directory' && (
              <div className="hint" id={fieldHintId} data-testid="directory-hint">
                {t.directoryHint}
              </div>
            )}
            {numberHint && (
              <div className="hint" id={fieldHintId} data-testid="number-hint">
                {numberHint}
              </div>
            )}
            {(mode === 'text' || !free) && <TextCounter value={custom} />}
            <FieldMessages errors={errs} field="customInput" id={`${customId}-err`} />
          </div>
        )}
        <CardError card={card} unmatched={otherErrors(errs, ['selections', 'customInput'])} />
        <div className="actions">
          <button
            type="submit"
            className="primary"
            data-testid="submit"
            data-primary
            aria-keyshortcuts="Enter Control+Enter"
            disabled={!!hint || busy}
            aria-describedby={hint ? hintId : undefined}
          >
            {busy ? t.submitting : visible(req.submitLabel) || t.submit}
          </button>
          {recommended.length > 0 && (
            <button type="button" data-testid="accept-recommended" data-key-recommended aria-keyshortcuts="R" disabled={busy} onClick={acceptRecommended}>
              {k.acceptRecommended}: {recommended.map((o) => visible(o.label)).join(', ')}
            </button>
          )}
          <CancelTask onCancel={onCancel} disabled={busy} />
          {hint && (
            <span className="hint" id={hintId} data-testid="hint">
              {hint}
            </span>
          )}
        </div>
        <KeyHints options={!free} enter={!free || mode !== 'text'} multiline={mode === 'text' || (!free && !!req.allowCustom)} recommended={recommended.length > 0} />
      </fieldset>
    </form>
  )
}
