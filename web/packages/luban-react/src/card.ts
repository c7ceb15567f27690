// The state of one question card, shared by the cards and whoever holds
// them (the luban page's chat reducer, or useLubanSession).
import type { ApiError } from './api'
import type { FieldError, InputRequest, Receipt, RunStatus } from './types'

/** CardPhase is the life of a question card (seed 000 §6.3). */
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
  /** error is a code or message to show on an editable card (413, 5xx). */
  error?: { code: string; message: string }
  /** runStatus is "continuing" after an answer until `done` names the end. */
  runStatus?: RunStatus | 'continuing'
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
 * "continuing" under an answer until a `done` names the run's end.
 */
export function resolvedCard(c: CardItem, rec: Receipt): CardItem {
  return {
    ...c,
    phase: 'resolved',
    receipt: rec,
    fieldErrors: undefined,
    error: undefined,
    runStatus: c.runStatus ?? (rec.status === 'answered' ? 'continuing' : undefined),
  }
}

/**
 * failCard is c after a refused answer (DESIGN §3 error codes): 422 keeps it
 * editable with the details by field; 409 already_resolved shows the
 * server's receipt; 410 interaction_expired shows an expired receipt; 404
 * interaction_not_found and 410 not_resumable make it not_resumable; any
 * other error keeps it editable with a card-level message.
 */
export function failCard(c: CardItem, e: ApiError): CardItem {
  if (e.status === 422) return { ...c, phase: 'editing', fieldErrors: e.details ?? [], error: e.details?.length ? undefined : { code: e.code, message: e.message } }
  if (e.code === 'already_resolved' && e.receipt) return { ...c, phase: 'resolved', receipt: e.receipt, fieldErrors: undefined, error: undefined }
  if (e.code === 'interaction_expired') return { ...c, phase: 'resolved', receipt: e.receipt ?? expiredReceipt(c.request), fieldErrors: undefined, error: undefined }
  if (e.code === 'interaction_not_found' || e.code === 'not_resumable') return { ...c, phase: 'not_resumable' }
  return { ...c, phase: 'editing', fieldErrors: undefined, error: { code: e.code, message: e.message } }
}
