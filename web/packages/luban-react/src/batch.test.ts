import { describe, expect, it } from 'vitest'
import { splitBatchFailure } from './batch'
import { emptySession, reduceSession, type SessionAction, type SessionState } from './session'
import type { CardItem } from './card'
import type { InputRequest, Receipt } from './types'

const NOW = '2026-03-01T08:00:00Z'

function approval(n: number, over: Partial<InputRequest> = {}): InputRequest {
  return {
    id: `req_${n}`,
    toolCallId: `call_${n}`,
    sessionId: 's1',
    runId: 'r1',
    tool: 'approval',
    title: 'write_file',
    mode: 'approval',
    createdAt: NOW,
    resumable: true,
    toolName: 'write_file',
    arguments: { path: `f${n}.md` },
    ...over,
  } as InputRequest
}

function receipt(n: number, over: Partial<Receipt> = {}): Receipt {
  return { requestId: `req_${n}`, toolCallId: `call_${n}`, status: 'answered', selections: [], customInput: '', resolvedAt: NOW, decision: 'approve', ...over } as Receipt
}

const reduce = (s: SessionState, ...as: SessionAction[]) => as.reduce(reduceSession, s)
const cards = (s: SessionState) => s.items.filter((i): i is CardItem => i.kind === 'input')
const phases = (s: SessionState) => cards(s).map((c) => [c.request.id, c.phase])
const approve = { decision: 'approve' } as never

/** paused is a session whose run waits on two approvals of one message. */
function paused(): SessionState {
  return reduce(
    { ...emptySession, sessionId: 's1' },
    { type: 'pending', pending: { pending: approval(1), last: null, requests: [approval(1), approval(2)] } as never },
  )
}

describe('splitBatchFailure', () => {
  const ids = ['req_1', 'req_2', 'req_3']

  it('gives each entry the details that name it, their fields without the entry prefix', () => {
    const s = splitBatchFailure(ids, {
      status: 422,
      code: 'invalid_answer',
      message: 'bad',
      details: [
        { field: 'answers[1].decision', code: 'enum', message: 'decision: approve, edit or reject' },
        { field: 'answers[1].arguments.path', code: 'required', message: 'required' },
        { field: 'answers[2]', code: 'required', message: 'x' },
      ],
    })
    expect(s.rest).toBeUndefined()
    expect([...s.perCard.keys()]).toEqual(['req_2', 'req_3'])
    expect(s.perCard.get('req_2')).toEqual({
      status: 422,
      code: 'invalid_answer',
      message: 'bad',
      details: [
        { field: 'decision', code: 'enum', message: 'decision: approve, edit or reject' },
        { field: 'arguments.path', code: 'required', message: 'required' },
      ],
    })
    expect(s.perCard.get('req_3')?.details).toEqual([{ field: '', code: 'required', message: 'x' }])
  })

  it('names the card of a 409 by its receipt', () => {
    const rec = receipt(3)
    const s = splitBatchFailure(ids, { status: 409, code: 'already_resolved', message: 'gone', receipt: rec })
    expect([...s.perCard.entries()]).toEqual([['req_3', { status: 409, code: 'already_resolved', message: 'gone', receipt: rec }]])
    expect(s.rest).toBeUndefined()
  })

  it('keeps what names no entry for the batch: a network error, a detail about the body or out of range', () => {
    const net = { status: 0, code: 'network', message: 'down' }
    expect(splitBatchFailure(ids, net)).toEqual({ perCard: new Map(), rest: net })
    const s = splitBatchFailure(ids, {
      status: 422,
      code: 'invalid_answer',
      message: 'bad',
      details: [
        { field: 'answers[0].decision', code: 'required', message: 'x' },
        { field: 'answers[7].decision', code: 'required', message: 'y' },
        { field: 'answers', code: 'duplicate', message: 'z' },
      ],
    })
    expect([...s.perCard.keys()]).toEqual(['req_1'])
    expect(s.rest?.details?.map((d) => d.field)).toEqual(['answers[7].decision', 'answers'])
  })
})

describe('session reducer: several questions of one pause', () => {
  it('restores a card for every request of `requests`, in call order', () => {
    const s = paused()
    expect(phases(s)).toEqual([
      ['req_1', 'editing'],
      ['req_2', 'editing'],
    ])
    // A second restore (a reload) shows nothing twice, and a not resumable one says so.
    const again = reduce(s, { type: 'pending', pending: { pending: approval(1), last: null, requests: [approval(1), approval(2, { resumable: false })] } as never })
    expect(phases(again)).toEqual([
      ['req_1', 'editing'],
      ['req_2', 'not_resumable'],
    ])
  })

  it('falls back to `pending` when the server sends no `requests`', () => {
    // An older server's answer: no requests.
    const s = reduce(emptySession, { type: 'pending', pending: { pending: approval(1), last: null } as never })
    expect(phases(s)).toEqual([['req_1', 'editing']])
    const none = reduce(emptySession, { type: 'pending', pending: { pending: null, last: null } as never })
    expect(cards(none)).toHaveLength(0)
    // Entries that fail the minimal check are not rendered.
    const bad = reduce(emptySession, { type: 'pending', pending: { pending: null, last: null, requests: [{ title: 'broken' }, approval(2)] } as never })
    expect(phases(bad)).toEqual([['req_2', 'editing']])
  })

  it('an answer to one of two leaves the run waiting; the last one resumes it', () => {
    let s = paused()
    s = reduce(s, { type: 'event', event: { id: 5, event: 'user_input_resolved', data: receipt(2) } })
    expect(phases(s)).toEqual([
      ['req_1', 'editing'],
      ['req_2', 'resolved'],
    ])
    expect(s.running).toBe(false)
    s = reduce(s, { type: 'cardSubmitting', requestId: 'req_1', answer: approve }, { type: 'cardAnswered', receipt: receipt(1) })
    expect(s.running).toBe(true)
  })

  it('a batch puts every card in flight, and its receipts resolve each, resuming the run once all are', () => {
    let s = reduce(paused(), { type: 'batchSubmitting', entries: [{ requestId: 'req_1', answer: approve }, { requestId: 'req_2', answer: approve }] })
    expect(phases(s)).toEqual([
      ['req_1', 'submitting'],
      ['req_2', 'submitting'],
    ])
    expect(cards(s).map((c) => c.lastAnswer)).toEqual([approve, approve])
    // The stream may bring one receipt before the 202: the run still waits.
    s = reduce(s, { type: 'event', event: { id: 5, event: 'user_input_resolved', data: receipt(1) } })
    expect(s.running).toBe(false)
    s = reduce(s, { type: 'batchAnswered', requestIds: ['req_1', 'req_2'], receipts: [receipt(1), receipt(2)] })
    expect(phases(s)).toEqual([
      ['req_1', 'resolved'],
      ['req_2', 'resolved'],
    ])
    expect(s.running).toBe(true)
    expect(cards(s).map((c) => c.lostAnswer)).toEqual([undefined, undefined])
  })

  it('an entry the 202 has no receipt for (a vote towards a quorum) is open again', () => {
    let s = reduce(paused(), { type: 'batchSubmitting', entries: [{ requestId: 'req_1', answer: approve }, { requestId: 'req_2', answer: approve }] })
    s = reduce(s, { type: 'batchAnswered', requestIds: ['req_1', 'req_2'], receipts: [receipt(2)] })
    expect(phases(s)).toEqual([
      ['req_1', 'editing'],
      ['req_2', 'resolved'],
    ])
    expect(s.running).toBe(false)
  })

  it('a refused batch shows the error on the card it names and leaves every card answerable', () => {
    let s = reduce(paused(), { type: 'batchSubmitting', entries: [{ requestId: 'req_1', answer: approve }, { requestId: 'req_2', answer: approve }] })
    s = reduce(s, {
      type: 'batchFailed',
      requestIds: ['req_1', 'req_2'],
      error: { status: 422, code: 'invalid_answer', message: 'bad', details: [{ field: 'answers[1].decision', code: 'required', message: 'x' }] },
    })
    expect(phases(s)).toEqual([
      ['req_1', 'editing'],
      ['req_2', 'editing'],
    ])
    const [a, b] = cards(s)
    expect(a.fieldErrors).toBeUndefined()
    expect(a.error).toBeUndefined()
    expect(b.fieldErrors).toEqual([{ field: 'decision', code: 'required', message: 'x' }])
    expect(s.batchError).toBeUndefined()
    expect(s.running).toBe(false)
  })

  it('a 409 resolves the card it names with the winner; a failure naming none is the batch error, cleared by the next try', () => {
    let s = reduce(paused(), { type: 'batchSubmitting', entries: [{ requestId: 'req_1', answer: approve }, { requestId: 'req_2', answer: approve }] })
    const won = receipt(2, { decision: 'reject', message: 'no' } as never)
    s = reduce(s, { type: 'batchFailed', requestIds: ['req_1', 'req_2'], error: { status: 409, code: 'already_resolved', message: 'gone', receipt: won } })
    expect(phases(s)).toEqual([
      ['req_1', 'editing'],
      ['req_2', 'resolved'],
    ])
    expect(cards(s)[1].lostAnswer).toEqual(approve)
    s = reduce(s, { type: 'batchSubmitting', entries: [{ requestId: 'req_1', answer: approve }] })
    s = reduce(s, { type: 'batchFailed', requestIds: ['req_1'], error: { status: 0, code: 'network', message: 'down' } })
    expect(phases(s)[0]).toEqual(['req_1', 'editing'])
    expect(cards(s)[0].error).toBeUndefined()
    expect(s.batchError).toEqual({ status: 0, code: 'network', message: 'down' })
    s = reduce(s, { type: 'cardSubmitting', requestId: 'req_1', answer: approve })
    expect(s.batchError).toBeUndefined()
  })
})
