import { useContext, useId } from 'react'
import type { CardItem } from '../card'
import { RetryContext } from '../cardRetry'
import { errorText, fieldErrorText, retryable, type CodedFieldError } from '../errorText'
import { useLang, useT } from '../i18n'
import type { FieldError } from '../types'

/**
 * matchField reports whether a 422 detail's field belongs to a form field:
 * "selections" matches "selections" and "selections[1]"; "answers[0]"
 * matches "answers[0].selected" and "answers[0].other".
 */
export function matchField(detail: string, field: string): boolean {
  return detail === field || detail.startsWith(field + '[') || detail.startsWith(field + '.')
}

/**
 * FieldMessages shows the problems of one field next to it, each worded
 * by its code in the page language (the server's message when the code is
 * unknown).
 */
export function FieldMessages({ errors, field, id }: { errors?: FieldError[]; field: string; id?: string }) {
  const lang = useLang()
  const mine = (errors ?? []).filter((e) => matchField(e.field, field)) as CodedFieldError[]
  if (!mine.length) return null
  return (
    // The live region wraps the list: a role on the <ul> itself would take its list semantics away.
    <div id={id} data-testid={`field-error-${field}`} role="alert">
      <ul className="field-errors">
        {mine.map((e, i) => (
          <li key={i} data-code={e.code} data-field={e.field}>
            {fieldErrorText(lang, e)}
          </li>
        ))}
      </ul>
    </div>
  )
}

/** otherErrors returns the details that match none of the given fields. */
export function otherErrors(errors: FieldError[] | undefined, fields: string[]): FieldError[] {
  return (errors ?? []).filter((e) => !fields.some((f) => matchField(e.field, f)))
}

/**
 * CardError shows a card-level error (413, unmatched 422 details, 5xx, a
 * network error), worded by its code; when sending the same answer again
 * may work (network, 5xx) it offers the page's retry.
 */
export function CardError({ card, unmatched }: { card: CardItem; unmatched: FieldError[] }) {
  const t = useT()
  const lang = useLang()
  const retry = useContext(RetryContext)
  const msgId = useId()
  if (!card.error && !unmatched.length) return null
  const canRetry = !!retry && !!card.error && !!card.lastAnswer && card.phase === 'editing' && retryable(card.error)
  return (
    <div className="card-error" data-testid="card-error" data-code={card.error?.code} role="alert">
      {card.error && <div id={msgId}>{errorText(t, card.error)}</div>}
      {canRetry && (
        <button type="button" data-testid="retry" aria-describedby={msgId} onClick={() => retry(card)}>
          {t.retry}
        </button>
      )}
      {unmatched.map((e, i) => (
        <div key={i} data-code={(e as CodedFieldError).code} data-field={e.field}>
          {e.field ? `${e.field}: ` : ''}
          {fieldErrorText(lang, e)}
        </div>
      ))}
    </div>
  )
}
