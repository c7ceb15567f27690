// The state of one question card, shared by the cards and whoever holds
// them (the luban page's chat reducer, or useLubanSession).
import type { Answer, FieldError, InputRequest, Receipt, RunStatus } from './types'

/** CardPhase is the life of a question card (docs/design.md §A.6.3). */
export type CardPhase = 'editing' | 'submitting' | 'resolved' | 'not_resumable'

/** CardItem is a question card; it becomes a read-only receipt once resolved. */
export type CardItem = {
  kind: 'input'
  key: string
  request: InputRequest
  phase: CardPhase
  receipt?: Receipt
  /** fieldErrors are a 422 `invalid_answer`'s details, shown by their fields. */
  fieldErrors?: FieldError[]
  /**
   * error is why the last submit did not land (413, 5xx, a network error),
   * shown on the editable card; in phase not_resumable its code says why
   * the card cannot be answered (not_resumable, interaction_not_found,
   * session_not_found).
   */
  error?: { code: string; message: string; status?: number }
  /**
   * lastAnswer is the answer last submitted, kept for a retry: sending it
   * again is safe, since a request is consumed once and a second try of an
   * answer that did land gets the 409 receipt (shown as success).
   */
  lastAnswer?: Answer
  /**
   * lostAnswer is this card's answer when a 409 already_resolved showed a
   * receipt that is not it: another window answered first, this one was
   * not taken.
   */
  lostAnswer?: Answer
  /**
   * runStatus is "continuing" after an answer until `done` names the end,
   * for a holder that wants to show the run's state; the cards never show
   * it (a receipt shows its own resolution, not the run's).
   */
  runStatus?: RunStatus | 'continuing'
}

/**
 * CardFailure is why a submit failed: an ApiError (status, code, details,
 * receipt), or a network error (status 0, code "network"; "stream_lost"
 * when a stream dropped for good).
 */
export type CardFailure = {
  status: number
  code: string
  message: string
  details?: FieldError[]
  receipt?: Receipt
}

/**
 * expiredReceipt is the receipt a client shows when a request's expiresAt
 * passed before the server's own receipt arrived: status expired, resolved
 * at expiresAt (now when the request has none).
 */
export function expiredReceipt(r: InputRequest): Receipt {
  return {
    requestId: r.id,
    toolCallId: r.toolCallId,
    status: 'expired',
    selections: [],
    customInput: '',
    resolvedAt: r.expiresAt ?? new Date().toISOString(),
  }
}

/** newCard is an open card for r; keyed `card-<requestId>`; not_resumable when the server says so. */
export function newCard(r: InputRequest): CardItem {
  return { kind: 'input', key: `card-${r.id}`, request: r, phase: r.resumable === false ? 'not_resumable' : 'editing' }
}

/**
 * resolvedCard is c after its receipt: read-only, errors cleared, and
 * "continuing" under an answer until a `done` names the run's end. A card
 * whose own answer is in flight and whose receipt is another's (another
 * window won the race; this answer's 409 comes after and changes nothing)
 * keeps that answer as lost, as a 409 would.
 */
export function resolvedCard(c: CardItem, rec: Receipt): CardItem {
  const lost = c.phase === 'submitting' && c.lastAnswer && !isReceiptOf(c.lastAnswer, rec) ? c.lastAnswer : c.lostAnswer
  return {
    ...c,
    phase: 'resolved',
    receipt: rec,
    fieldErrors: undefined,
    error: undefined,
    lostAnswer: lost,
    runStatus: c.runStatus ?? (rec.status === 'answered' ? 'continuing' : undefined),
  }
}

const sameSet = (a: string[] | undefined, b: string[] | undefined) => JSON.stringify([...(a ?? [])].sort()) === JSON.stringify([...(b ?? [])].sort())

/**
 * isReceiptOf reports whether receipt r records answer a (a retry of an
 * answer that did land), judged on what the person chose and typed: the
 * status, ask_user selections and text, each AskUser answer, an approval's
 * decision and message. An answer it cannot judge (an elicitation, none
 * kept) counts as recorded.
 */
export function isReceiptOf(a: Answer | undefined, r: Receipt): boolean {
  if (!a) return true
  const x = a as unknown as Record<string, unknown>
  const y = r as unknown as Record<string, unknown>
  if (a.cancelled || r.status === 'cancelled') return !!a.cancelled === (r.status === 'cancelled')
  if (r.status !== 'answered') return false
  if (typeof x.decision === 'string' && typeof y.decision === 'string') return (x.decision === 'reject') === (y.decision === 'reject') && (x.message ?? '') === (y.message ?? '')
  if ('content' in x || 'decision' in x) return true
  if (a.answers?.length || r.answers?.length)
    return (a.answers ?? []).length === (r.answers ?? []).length && (a.answers ?? []).every((q, i) => sameSet(q.selected, r.answers?.[i]?.selected) && (q.other ?? '') === (r.answers?.[i]?.other ?? ''))
  return sameSet(a.selections, r.selections) && (a.customInput ?? '') === (r.customInput ?? '')
}

/**
 * failCard is c after a failed submit (docs/design.md §3 error codes). Only a card
 * still submitting changes: an answer that landed meanwhile (its
 * user_input_resolved came on another stream) stays resolved. 422 keeps it
 * editable with the details by field; 409 already_resolved shows the
 * server's receipt (a retry of an answer that did land is a success); 410
 * interaction_expired shows an expired receipt; 404 session_not_found /
 * interaction_not_found and 410 not_resumable make it not_resumable with
 * that code; a 413 with details is shown by its field like a 422; anything else (413, 5xx, a network error) puts it back to
 * editing, the input kept, with a card-level error and lastAnswer ready to
 * retry.
 */
export function failCard(c: CardItem, e: CardFailure): CardItem {
  if (c.phase !== 'submitting') return c
  // A 413 that names its field (free text over the bound, {max}) is shown by that field like a 422.
  if (e.status === 422 || (e.status === 413 && e.details?.length)) return { ...c, phase: 'editing', fieldErrors: e.details ?? [], error: e.details?.length ? undefined : { code: e.code, message: e.message, status: e.status } }
  if (e.code === 'already_resolved' && e.receipt)
    return { ...c, phase: 'resolved', receipt: e.receipt, fieldErrors: undefined, error: undefined, lostAnswer: isReceiptOf(c.lastAnswer, e.receipt) ? undefined : c.lastAnswer }
  if (e.code === 'interaction_expired') return { ...c, phase: 'resolved', receipt: e.receipt ?? expiredReceipt(c.request), fieldErrors: undefined, error: undefined }
  if (e.code === 'interaction_not_found' || e.code === 'not_resumable' || e.code === 'session_not_found')
    return { ...c, phase: 'not_resumable', error: { code: e.code, message: e.message, status: e.status } }
  return { ...c, phase: 'editing', fieldErrors: undefined, error: { code: e.code, message: e.message, status: e.status } }
}
