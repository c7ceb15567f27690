import { describe, expect, it } from 'vitest'
import { emptySession as initialState, reduceSession as reduce, type SessionState as ChatState } from './session'
import type { SSEEvent } from './sse'

const ev = (id: number, event: string, data: unknown): SSEEvent => ({ id, event, data })
const run = (s: ChatState, ...evs: SSEEvent[]) => evs.reduce((st, e) => reduce(st, { type: 'event', event: e }), s)

describe('session reducer', () => {
  it('a reply cut by stop stays shown, marked stopped; the run end shows once', () => {
    let s = run(
      initialState,
      ev(1, 'session', { sessionId: 's', runId: 'r1' }),
      ev(2, 'message', { messageId: 'u1', role: 'user', content: '写一首诗' }),
      ev(3, 'message_delta', { messageId: 'a1', delta: '床前明月光，' }),
    )
    expect(s.running).toBe(true)
    s = run(s, ev(4, 'done', { runId: 'r1', status: 'cancelled' }))
    expect(s.running).toBe(false)
    const msgs = s.items.filter((i) => i.kind === 'message')
    expect(msgs).toMatchObject([{ role: 'user' }, { role: 'assistant', content: '床前明月光，', stopped: true, streaming: false }])
    expect(s.items.filter((i) => i.kind === 'notice' && i.code === 'run_cancelled')).toHaveLength(1)
    // A later run's end replaces the line: one run end, after the last run.
    s = run(s, ev(5, 'message', { messageId: 'u2', role: 'user', content: '再来' }), ev(6, 'done', { runId: 'r2', status: 'completed' }))
    expect(s.items.filter((i) => i.kind === 'notice').map((i) => (i.kind === 'notice' ? i.code : ''))).toEqual(['run_completed'])
  })

  it('a stopped reply the server stored keeps its mark, live (message event) and from the transcript', () => {
    const s = run(
      initialState,
      ev(1, 'message', { messageId: 'u1', role: 'user', content: '写一首诗' }),
      ev(2, 'message_delta', { messageId: 'a1', delta: '床前' }),
      ev(3, 'message', { messageId: 'a1', role: 'assistant', content: '床前明月光，', stopped: true }),
      ev(4, 'done', { runId: 'r1', status: 'cancelled' }),
    )
    expect(s.items.filter((i) => i.kind === 'message')).toMatchObject([{ role: 'user' }, { role: 'assistant', content: '床前明月光，', stopped: true, streaming: false }])
    const t = reduce(initialState, {
      type: 'transcript',
      transcript: {
        session: { id: 's', title: '', status: 'cancelled', updatedAt: '' },
        lastEventId: 4,
        messages: [
          { id: 'u1', runId: 'r1', role: 'user', content: '写一首诗', createdAt: '' },
          { id: 'a1', runId: 'r1', role: 'assistant', content: '床前明月光，', stopped: true, createdAt: '' },
        ],
        interactions: [],
        errors: [],
      },
    } as unknown as Parameters<typeof reduce>[1])
    expect(t.items.filter((i) => i.kind === 'message')).toMatchObject([{ role: 'user' }, { role: 'assistant', content: '床前明月光，', stopped: true }])
  })

  it('a dead attempt (no final message, a run that did not stop by the user) goes', () => {
    const s = run(initialState, ev(1, 'message_delta', { messageId: 'a1', delta: '半句' }), ev(2, 'done', { runId: 'r1', status: 'completed' }))
    expect(s.items.filter((i) => i.kind === 'message')).toHaveLength(0)
  })

  it('an error event is a run_error entry with the run user message to retry, once per run', () => {
    let s = run(initialState, ev(1, 'session', { sessionId: 's', runId: 'r1' }), ev(2, 'message', { messageId: 'u1', role: 'user', content: '你好' }))
    s = run(s, ev(3, 'error', { code: 'model_error', message: 'refused', runId: 'r1' }), ev(4, 'error', { code: 'model_error', message: 'refused', runId: 'r1' }))
    const errs = s.items.filter((i) => i.kind === 'run_error')
    expect(errs).toMatchObject([{ runId: 'r1', code: 'model_error', retryText: '你好' }])
    expect(s.running).toBe(false)
  })

  it('the same request again updates whom it waits for (an approval towards a quorum)', () => {
    const wf = (n: number) => ({ names: ['finance'], awaiting: [], quorum: 2, approvals: Array.from({ length: n }, () => ({ id: 'bob', name: 'Bob' })) })
    const req = { id: 'q', toolCallId: 'c', sessionId: 's', runId: 'r', tool: 'approval', title: 't', mode: 'approval', createdAt: '', expiresAt: '', resumable: true }
    let s = run(initialState, ev(1, 'user_input_required', { ...req, waitingFor: wf(0) }))
    s = run(s, ev(2, 'user_input_required', { ...req, waitingFor: wf(1) }))
    const cards = s.items.filter((i) => i.kind === 'input')
    expect(cards).toHaveLength(1)
    expect(cards[0]).toMatchObject({ request: { id: 'q', waitingFor: { quorum: 2, approvals: [{ id: 'bob' }] } } })
  })

  it('a failed submit of a card that resolved meanwhile leaves the receipt alone; a 409 receipt is success', () => {
    const req = { id: 'q', toolCallId: 'c', sessionId: 's', runId: 'r', tool: 'ask_user', title: 't', mode: 'single', createdAt: '', expiresAt: '', resumable: true }
    const rec = { requestId: 'q', toolCallId: 'c', status: 'answered', selections: ['a'], customInput: '', resolvedAt: '' }
    let s = run(initialState, ev(1, 'user_input_required', req))
    const answer = { selections: ['a'], customInput: '', cancelled: false }
    s = reduce(s, { type: 'cardSubmitting', requestId: 'q', answer })
    s = reduce(s, { type: 'cardFailed', requestId: 'q', error: { status: 0, code: 'network', message: '' } })
    expect(s.items[0]).toMatchObject({ phase: 'editing', error: { code: 'network' }, lastAnswer: answer })
    s = reduce(s, { type: 'cardSubmitting', requestId: 'q', answer })
    s = reduce(s, { type: 'cardFailed', requestId: 'q', error: { status: 409, code: 'already_resolved', message: '', receipt: rec as never } })
    expect(s.items[0]).toMatchObject({ phase: 'resolved', receipt: { selections: ['a'] } })
    s = reduce(s, { type: 'cardFailed', requestId: 'q', error: { status: 0, code: 'stream_lost', message: '' } })
    expect(s.items[0]).toMatchObject({ phase: 'resolved' })
  })

  it("a JSON answer's receipt resolves the card and resumes the run unless the stream's came first; lastEventId follows the events", () => {
    const req = { id: 'q', toolCallId: 'c', sessionId: 's', runId: 'r', tool: 'ask_user', title: 't', mode: 'single', createdAt: '', expiresAt: '', resumable: true }
    const rec = { requestId: 'q', toolCallId: 'c', status: 'answered', selections: ['a'], customInput: '', resolvedAt: '' } as never
    let s = run(initialState, ev(4, 'user_input_required', req))
    expect(s.lastEventId).toBe(4)
    s = reduce(s, { type: 'cardSubmitting', requestId: 'q', answer: { selections: ['a'], customInput: '', cancelled: false } })
    s = reduce(s, { type: 'cardAnswered', receipt: rec })
    expect(s.items[0]).toMatchObject({ phase: 'resolved' })
    expect(s.running).toBe(true)
    // The run ended on the stream; a late 202 changes nothing.
    s = run(s, ev(5, 'user_input_resolved', rec), ev(6, 'done', { runId: 'r', status: 'completed' }))
    expect(s.running).toBe(false)
    expect(reduce(s, { type: 'cardAnswered', receipt: rec })).toBe(s)
    expect(s.lastEventId).toBe(6)
    // A replayed old event does not move it back.
    expect(run(s, ev(2, 'message', { messageId: 'x', role: 'assistant', content: 'old' })).lastEventId).toBe(6)
  })
})
