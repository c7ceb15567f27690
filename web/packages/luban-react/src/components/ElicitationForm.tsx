import { useId, useRef, useState } from 'react'
import { record, strings, useDraft } from '../drafts'
import type { CardItem } from '../card'
import { useLang } from '../i18n'
import type { FieldError, FormField } from '../types'
import { visible } from '../visible'
import { checkForm, elicitationText, initialValue, type ElicitationText, type FormValue } from './elicitation'
import { CardError, FieldMessages, otherErrors } from './fieldErrors'
import { KeyHints } from './KeyHints'

/** ElicitationAnswer is the answer of an elicitation card (docs/design.md §11). */
export type ElicitationAnswer = { decision: 'accept'; content?: Record<string, unknown>; cancelled: false } | { decision: 'decline'; cancelled: false }

type Props = {
  card: CardItem
  /** onSubmit sends accept (with the form's content) or decline. */
  onSubmit: (a: ElicitationAnswer) => void
  /** onCancel sends `cancelled: true` (MCP's cancel). */
  onCancel: () => void
}

/**
 * ElicitationForm is the card of an MCP server's form elicitation (docs/design.md
 * §11): one control per derived field (string, number, integer, boolean,
 * date, enum, multi) with its required mark, bounds and default, checked
 * here before sending (the same rules the server applies against
 * requestedSchema) and the server's 422 details shown by their fields. The
 * actions are MCP's three: submit (accept), decline, cancel. Everything the
 * server wrote is rendered as text.
 */
export function ElicitationForm({ card, onSubmit, onCancel }: Props) {
  const s = elicitationText[useLang()]
  const uid = useId()
  const fields = card.request.fields ?? []
  const busy = card.phase === 'submitting'
  const [values, setValues] = useDraft<Record<string, FormValue>>(
    card.request,
    () => Object.fromEntries(fields.map((f) => [f.name, initialValue(f)])),
    (raw) => restoreValues(fields, raw),
  )
  const [local, setLocal] = useState<FieldError[] | null>(null)
  const formRef = useRef<HTMLFormElement>(null)
  // Local problems are shown once the person tried to submit, then kept up
  // to date as they type; the server's stand until the next send.
  const errs = local ?? card.fieldErrors ?? []
  const set = (name: string, v: FormValue) => {
    const next = { ...values, [name]: v }
    setValues(next)
    if (local) setLocal(checkForm(fields, next, s).errors)
  }

  const submit = (e: React.FormEvent) => {
    e.preventDefault()
    if (busy) return
    const r = checkForm(fields, values, s)
    setLocal(r.errors)
    if (r.errors.length) {
      const first = r.errors[0].field.slice('content.'.length)
      formRef.current?.querySelector<HTMLElement>(`[data-field="${CSS.escape(first)}"]`)?.focus()
      return
    }
    setLocal(null)
    onSubmit({ decision: 'accept', content: r.content, cancelled: false })
  }

  return (
    <form ref={formRef} onSubmit={submit} noValidate data-testid="elicitation-form">
      <fieldset disabled={busy} className="card-body">
        {card.request.server && (
          <p className="card-source" data-testid="elicitation-server">
            {s.fromServer(visible(card.request.server))}
          </p>
        )}
        {fields.map((f) => (
          <Field key={f.name} f={f} id={`${uid}-${f.name}`} value={values[f.name]} errors={errs} onChange={(v) => set(f.name, v)} />
        ))}
        <CardError card={card} unmatched={otherErrors(errs, fields.map((f) => `content.${f.name}`))} />
        {local && local.length > 0 && (
          <p className="hint" data-testid="hint" role="status">
            {s.fixFields}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary" data-testid="submit" data-primary aria-keyshortcuts="Enter Control+Enter">
            {s.accept}
          </button>
          <button type="button" data-testid="decline" onClick={() => !busy && onSubmit({ decision: 'decline', cancelled: false })}>
            {s.decline}
          </button>
          <button type="button" data-testid="cancel" onClick={() => !busy && onCancel()}>
            {s.cancel}
          </button>
        </div>
        <KeyHints options={fields.some((f) => f.type === 'enum' || f.type === 'multi')} enter />
      </fieldset>
    </form>
  )
}

/**
 * restoreValues is a stored draft checked against the fields as asked now:
 * each field's value of its type (a choice among its options), the
 * field's starting value where the draft has none or a wrong one.
 */
function restoreValues(fields: FormField[], raw: unknown): Record<string, FormValue> | undefined {
  const r = record(raw)
  if (!r) return undefined
  return Object.fromEntries(
    fields.map((f) => {
      const v = r[f.name]
      const allowed = new Set((f.options ?? []).map((o) => o.value))
      let out: FormValue = initialValue(f)
      if (f.type === 'boolean') {
        if (typeof v === 'boolean') out = v
      } else if (f.type === 'multi') {
        if (Array.isArray(v)) out = strings(v).filter((x) => allowed.has(x))
      } else if (typeof v === 'string' && (f.type !== 'enum' || v === '' || allowed.has(v))) out = v
      return [f.name, out]
    }),
  )
}

function Field({ f, id, value, errors, onChange }: { f: FormField; id: string; value: FormValue; errors: FieldError[]; onChange: (v: FormValue) => void }) {
  const s = elicitationText[useLang()]
  const key = `content.${f.name}`
  const invalid = errors.some((e) => e.field === key || e.field.startsWith(key + '.') || e.field.startsWith(key + '['))
  const descId = f.description ? `${id}-desc` : undefined
  const errId = `${id}-err`
  const describedBy = [descId, invalid ? errId : undefined].filter(Boolean).join(' ') || undefined
  const label = visible(f.title || f.name)
  const mark = f.required ? (
    <span className="field-required" data-testid={`required-${f.name}`} title={s.required}>
      {' *'}
      <span className="visually-hidden">{s.required}</span>
    </span>
  ) : null
  const bounds = boundsText(f, s)
  const common = {
    id,
    'data-field': f.name,
    'data-testid': `field-${f.name}`,
    'aria-invalid': invalid || undefined,
    'aria-describedby': describedBy,
    'aria-required': f.required || undefined,
  }

  let control: React.ReactNode
  if (f.type === 'enum' || f.type === 'multi') {
    const multi = f.type === 'multi'
    const cur = multi ? (Array.isArray(value) ? value : []) : typeof value === 'string' ? value : ''
    control = (
      <div
        role={multi ? 'group' : 'radiogroup'}
        aria-labelledby={`${id}-label`}
        aria-describedby={describedBy}
        // aria-required is allowed on a radiogroup, not on a group (axe
        // aria-allowed-attr); a required multi says so in its label.
        aria-required={(!multi && f.required) || undefined}
        className="options"
        data-key-group
      >
        {(f.options ?? []).map((o, i) => {
          const oid = `${id}-opt-${i}`
          const checked = multi ? (cur as string[]).includes(o.value) : cur === o.value
          return (
            <div key={o.value} className={`option${checked ? ' option-checked' : ''}`}>
              <input
                id={oid}
                type={multi ? 'checkbox' : 'radio'}
                name={id}
                value={o.value}
                checked={checked}
                data-testid={`field-${f.name}-${o.value}`}
                data-field={i === 0 ? f.name : undefined}
                data-key-option={i < 9 ? '' : undefined}
                aria-keyshortcuts={i < 9 ? String(i + 1) : undefined}
                aria-invalid={invalid || undefined}
                onChange={(e) => {
                  if (!multi) return onChange(o.value)
                  const arr = cur as string[]
                  onChange(e.target.checked ? [...arr.filter((x) => x !== o.value), o.value] : arr.filter((x) => x !== o.value))
                }}
              />
              <label htmlFor={oid}>
                <span className="option-head">
                  {i < 9 && (
                    <kbd className="key-num" aria-hidden="true">
                      {i + 1}
                    </kbd>
                  )}
                  <span className="option-label">{visible(o.label)}</span>
                </span>
              </label>
            </div>
          )
        })}
      </div>
    )
  } else if (f.type === 'boolean') {
    control = (
      <div className="option">
        <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
        <label htmlFor={id}>{s.yes}</label>
      </div>
    )
  } else {
    const num = f.type === 'number' || f.type === 'integer'
    const type = num ? 'number' : f.type === 'date' ? 'date' : f.format === 'email' ? 'email' : f.format === 'uri' ? 'url' : 'text'
    control = (
      <input
        {...common}
        type={type}
        inputMode={f.type === 'integer' ? 'numeric' : f.type === 'number' ? 'decimal' : undefined}
        step={f.type === 'integer' ? 1 : num ? 'any' : undefined}
        min={num && f.minimum != null ? f.minimum : undefined}
        max={num && f.maximum != null ? f.maximum : undefined}
        minLength={f.minLength ?? undefined}
        maxLength={f.maxLength ?? undefined}
        value={typeof value === 'string' ? value : ''}
        onChange={(e) => onChange(e.target.value)}
      />
    )
  }

  return (
    <div className={`form-field form-field-${f.type}${invalid ? ' form-field-invalid' : ''}`} data-testid={`form-field-${f.name}`} data-type={f.type}>
      {f.type === 'enum' || f.type === 'multi' || f.type === 'boolean' ? (
        <div className="field-label" id={`${id}-label`}>
          {label}
          {mark}
        </div>
      ) : (
        <label htmlFor={id} className="field-label" id={`${id}-label`}>
          {label}
          {mark}
        </label>
      )}
      {f.description && (
        <div className="field-desc" id={descId}>
          {visible(f.description)}
        </div>
      )}
      {control}
      {bounds && (
        <div className="hint" data-testid={`bounds-${f.name}`}>
          {bounds}
        </div>
      )}
      <FieldMessages errors={errors} field={key} id={errId} />
    </div>
  )
}

/** boundsText states a field's bounds, e.g. "1–10", "≤ 80 characters", "choose 2–3". */
function boundsText(f: FormField, s: ElicitationText): string {
  const range = (lo?: number | null, hi?: number | null) => {
    if (lo != null && hi != null) return `${lo}–${hi}`
    if (lo != null) return `≥ ${lo}`
    if (hi != null) return `≤ ${hi}`
    return ''
  }
  if (f.type === 'number' || f.type === 'integer') return range(f.minimum, f.maximum)
  const r = f.type === 'multi' ? range(f.minItems, f.maxItems) : f.type === 'string' ? range(f.minLength, f.maxLength) : ''
  if (!r) return ''
  return f.type === 'multi' ? s.itemsRange(r) : s.charsRange(r)
}
