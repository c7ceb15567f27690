import { useId, useRef, useState } from 'react'
import { record, strings, useDraft } from '../drafts'
import type { CardItem } from '../card'
import { useT } from '../i18n'
import type { Answer, Question } from '../types'
import { CardError, FieldMessages, matchField, otherErrors } from './fieldErrors'
import { visible } from '../visible'
import { TextCounter } from './TextCounter'
import { KeyHints } from './KeyHints'
import { CancelTask } from './CancelTask'

type QState = { selected: string[]; otherOn: boolean; other: string; focused: number }

/** answered reports whether a question has a choice or non-empty Other text. */
function answered(q: QState): boolean {
  return q.selected.length > 0 || (q.otherOn && q.other.trim() !== '')
}

/**
 * AskUserForm is the card of an AskUser batch (AgentScope AskUser): 1–4
 * questions, each with its header chip, its context above the options,
 * single or multi select, and an "Other" free-text choice. A single-select
 * question with previews shows the focused option's preview beside the
 * options, as text in a <pre>. The answer is `answers: [{question,
 * selected: [labels], other}]` with empty selections and customInput.
 */
export function AskUserForm({ card, onSubmit, onCancel }: { card: CardItem; onSubmit: (a: Answer) => void; onCancel: () => void }) {
  const t = useT()
  const uid = useId()
  const questions = card.request.questions ?? []
  const [state, setState] = useDraft<QState[]>(
    card.request,
    () => questions.map(() => ({ selected: [], otherOn: false, other: '', focused: 0 })),
    (raw) => restoreBatch(questions, raw),
  )
  const busy = card.phase === 'submitting'
  const ready = questions.length > 0 && state.every(answered)

  const set = (i: number, f: (q: QState) => QState) => setState((cur) => cur.map((q, n) => (n === i ? f(q) : q)))

  // nudged counts submits tried with a question still open: each one moves
  // the focus to the first open question and says so in a live region.
  const [nudged, setNudged] = useState(0)
  const submit = (e: React.FormEvent) => {
    e.preventDefault()
    if (busy) return
    if (!ready) {
      setNudged((n) => n + 1)
      jumpToUnanswered()
      return
    }
    onSubmit({
      selections: [],
      customInput: '',
      cancelled: false,
      answers: questions.map((q, i) => ({
        question: q.question,
        selected: state[i].selected,
        other: state[i].otherOn ? state[i].other : '',
      })),
    })
  }

  // The questions (0-based) without an answer yet, in order.
  const open = questions.flatMap((_, i) => (state[i] && answered(state[i]) ? [] : [i]))
  const formRef = useRef<HTMLFormElement>(null)
  const jumpToUnanswered = () => {
    const q = formRef.current?.querySelector<HTMLElement>('[data-unanswered]')
    const first = q?.querySelector<HTMLElement>('input:not([disabled])')
    q?.scrollIntoView?.({ block: 'nearest' })
    first?.focus()
  }

  const fields = questions.map((_, i) => `answers[${i}]`)
  const hintId = `${uid}-hint`
  return (
    <form onSubmit={submit} noValidate ref={formRef}>
      <fieldset disabled={busy} className="card-body">
        {questions.map((q, i) => (
          <QuestionField key={i} index={i} q={q} s={state[i]} uid={uid} errs={card.fieldErrors} set={(f) => set(i, f)} unanswered={!answered(state[i])} />
        ))}
        <FieldMessages errors={card.fieldErrors?.filter((e) => e.field === 'answers')} field="answers" />
        <CardError card={card} unmatched={otherErrors(card.fieldErrors, [...fields, 'answers'])} />
        <div className="actions">
          <button
            type="submit"
            className="primary"
            data-testid="submit"
            data-primary
            aria-keyshortcuts={ready ? 'Enter Control+Enter' : undefined}
            disabled={!ready || busy}
            aria-describedby={!ready ? hintId : undefined}
          >
            {busy ? t.submitting : visible(card.request.submitLabel) || t.submit}
          </button>
          <CancelTask onCancel={onCancel} disabled={busy} />
          {!ready && (
            // The hint names the questions still open; pressing it goes to the first.
            <button type="button" className="hint hint-jump" id={hintId} data-testid="hint" onClick={jumpToUnanswered}>
              {open.length ? t.unanswered(open.map((i) => i + 1)) : t.questionNeedsAnswer}
            </button>
          )}
        </div>
        <p className="visually-hidden" role="status" data-testid="batch-status">
          {nudged > 0 && !ready ? (open.length ? t.unanswered(open.map((i) => i + 1)) : t.questionNeedsAnswer) + '\u200b'.repeat(nudged % 2) : ''}
        </p>
        <KeyHints options enter multiline />
      </fieldset>
    </form>
  )
}

/**
 * restoreBatch is a stored draft checked against the batch as asked now:
 * one state per question, choices among its labels (one for a
 * single-select question), else undefined.
 */
function restoreBatch(questions: Question[], raw: unknown): QState[] | undefined {
  if (!Array.isArray(raw) || raw.length !== questions.length) return undefined
  return questions.map((q, i) => {
    const r = record(raw[i]) ?? {}
    const labels = new Set(q.options.map((o) => o.label))
    const sel = strings(r.selected).filter((l) => labels.has(l))
    const focused = typeof r.focused === 'number' && Number.isInteger(r.focused) && r.focused >= 0 && r.focused < q.options.length ? r.focused : 0
    const otherOn = r.otherOn === true
    return {
      selected: q.multi_select ? sel : otherOn ? [] : sel.slice(0, 1),
      otherOn,
      other: typeof r.other === 'string' ? r.other : '',
      focused,
    }
  })
}

type QProps = {
  index: number
  q: Question
  s: QState
  uid: string
  errs: CardItem['fieldErrors']
  set: (f: (q: QState) => QState) => void
  /** unanswered marks the question (data-unanswered) for the hint's jump and the chat's first focus. */
  unanswered: boolean
}

function QuestionField({ index: i, q, s, uid, errs, set, unanswered }: QProps) {
  const t = useT()
  const multi = q.multi_select
  const withPreview = !multi && q.options.some((o) => o.preview)
  const name = `${uid}-q${i}`
  const otherId = `${name}-other`
  const choose = (label: string, on: boolean) =>
    set((cur) =>
      multi
        ? { ...cur, selected: on ? [...cur.selected.filter((l) => l !== label), label] : cur.selected.filter((l) => l !== label) }
        : { ...cur, selected: [label], otherOn: false },
    )
  const setOther = (on: boolean) => set((cur) => ({ ...cur, otherOn: on, selected: multi || !on ? cur.selected : [] }))
  const focus = (j: number) => set((cur) => (cur.focused === j ? cur : { ...cur, focused: j }))
  const preview = q.options[s.focused]?.preview
  // A 422 about this question marks its choices invalid, described by the message under them.
  const errId = `${name}-err`
  const invalid = (errs ?? []).some((e) => matchField(e.field, `answers[${i}]`))
  const described = (own?: string) => [own, invalid ? errId : ''].filter(Boolean).join(' ') || undefined

  const options = (
    <div className="options" role="group" aria-labelledby={`${name}-legend`} data-key-group>
      {q.options.map((o, j) => {
        const id = `${name}-o${j}`
        const checked = s.selected.includes(o.label)
        return (
          <div key={j} className={`option${checked ? ' option-checked' : ''}`} onMouseEnter={() => withPreview && focus(j)}>
            <input
              id={id}
              type={multi ? 'checkbox' : 'radio'}
              name={name}
              checked={checked}
              data-testid={`q${i}-option-${j}`}
              data-key-option={j < 9 ? '' : undefined}
              aria-keyshortcuts={j < 9 ? String(j + 1) : undefined}
              onFocus={() => focus(j)}
              onChange={(e) => {
                choose(o.label, e.target.checked)
                focus(j)
              }}
              aria-invalid={invalid || undefined}
              aria-describedby={described(o.description ? `${id}-desc` : undefined)}
            />
            <label htmlFor={id}>
              <span className="option-head">
                {j < 9 && (
                  <kbd className="key-num" aria-hidden="true">
                    {j + 1}
                  </kbd>
                )}
                <span className="option-label">{visible(o.label)}</span>
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
      <div className={`option option-other${s.otherOn ? ' option-checked' : ''}`}>
        <input
          id={otherId}
          type={multi ? 'checkbox' : 'radio'}
          name={name}
          checked={s.otherOn}
          data-testid={`q${i}-other`}
          data-key-option={q.options.length < 9 ? '' : undefined}
          data-key-focus={`${otherId}-text`}
          aria-keyshortcuts={q.options.length < 9 ? String(q.options.length + 1) : undefined}
          aria-invalid={invalid || undefined}
          aria-describedby={described()}
          onChange={(e) => setOther(e.target.checked)}
        />
        <label htmlFor={otherId}>
          <span className="option-head">
            {q.options.length < 9 && (
              <kbd className="key-num" aria-hidden="true">
                {q.options.length + 1}
              </kbd>
            )}
            <span className="option-label">{t.other}</span>
          </span>
        </label>
        <textarea
          id={`${otherId}-text`}
          rows={1}
          className="other-input"
          aria-label={`${t.other}: ${visible(q.question)}`}
          placeholder={t.otherPlaceholder}
          data-testid={`q${i}-other-input`}
          data-key-enter=""
          value={s.other}
          onChange={(e) => {
            const v = e.target.value
            set((cur) => ({ ...cur, other: v, otherOn: v.trim() !== '' || cur.otherOn, selected: multi || !v.trim() ? cur.selected : [] }))
          }}
        />
        <TextCounter value={s.other} />
      </div>
    </div>
  )

  return (
    <fieldset className="question" data-testid={`question-${i}`} data-unanswered={unanswered || undefined}>
      <legend id={`${name}-legend`}>
        <span className="chip" data-testid={`question-header-${i}`}>
          {visible(q.header)}
        </span>{' '}
        <span className="question-text">{visible(q.question)}</span>
      </legend>
      {q.context && (
        <pre className="context" data-testid={`question-context-${i}`}>
          {visible(q.context)}
        </pre>
      )}
      {withPreview ? (
        <div className="with-preview">
          {options}
          <div className="preview" aria-live="polite">
            <div className="preview-label" data-testid={`q${i}-preview-label`}>
              {t.preview}: {s.otherOn ? t.other : visible(q.options[s.focused]?.label)}
            </div>
            <pre data-testid={`q${i}-preview`}>{s.otherOn ? visible(s.other.trim()) || t.noPreview : (visible(preview) ?? t.noPreview)}</pre>
          </div>
        </div>
      ) : (
        options
      )}
      <FieldMessages errors={errs} field={`answers[${i}]`} id={errId} />
    </fieldset>
  )
}
