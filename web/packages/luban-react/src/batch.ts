// Several pending requests of one session answered at once (docs/design.md
// §17 "Batch"): POST /api/chat/continue {sessionId, answers: [{requestId,
// …}, …]}, all or none. A refusal names the entry it is about: a 422's
// details by field (`answers[1].decision`), a 409's receipt by requestId.
import type { CardFailure } from './card'
import type { FieldError } from './types'

const ENTRY = /^answers\[(\d+)\](?:\.(.*))?$/

/**
 * BatchSplit is a refused batch told apart by entry: perCard holds, by
 * requestId, the failure as a single answer of that request would have
 * met it (its details' fields without the `answers[i].` prefix, the
 * receipt when it is that request's); rest is what names no entry, or
 * undefined when every part of the failure named one.
 */
export type BatchSplit = { perCard: Map<string, CardFailure>; rest?: CardFailure }

/**
 * splitBatchFailure splits the failure of a batch whose entries answered
 * requestIds, in order. A failure that names no entry (a network error, a
 * 5xx, a 422 about the whole body) is all rest; details that name no entry
 * beside ones that do are rest with only those details.
 */
export function splitBatchFailure(requestIds: string[], e: CardFailure): BatchSplit {
  const perCard = new Map<string, CardFailure>()
  const restDetails: FieldError[] = []
  const named = (id: string): CardFailure => {
    let f = perCard.get(id)
    if (!f) {
      f = { status: e.status, code: e.code, message: e.message }
      perCard.set(id, f)
    }
    return f
  }
  for (const d of e.details ?? []) {
    const m = ENTRY.exec(d.field)
    const id = m ? requestIds[Number(m[1])] : undefined
    if (!m || id === undefined) {
      restDetails.push(d)
      continue
    }
    const f = named(id)
    f.details = [...(f.details ?? []), { ...d, field: m[2] ?? '' }]
  }
  if (e.receipt && requestIds.includes(e.receipt.requestId)) named(e.receipt.requestId).receipt = e.receipt
  if (perCard.size === 0) return { perCard, rest: e }
  return { perCard, rest: restDetails.length ? { ...e, details: restDetails, receipt: undefined } : undefined }
}
