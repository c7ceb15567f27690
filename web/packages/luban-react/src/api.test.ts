import { describe, expect, it } from 'vitest'
import { Api, ApiError, StreamLostError } from './api'
import { Deduper, type SSEEvent } from './sse'
import { frame, json, sse, startServer } from './test/server'

async function setup() {
  const srv = await startServer()
  const api = new Api({ base: srv.base, retryDelayMs: 1, maxRetries: 2 })
  const seen: SSEEvent[] = []
  const reconnects: number[] = []
  const h = { onEvent: (e: SSEEvent) => seen.push(e), onReconnecting: (n: number) => reconnects.push(n) }
  return { srv, api, seen, reconnects, h, dedupe: new Deduper() }
}

describe('Api streams', () => {
  it('reconnects with Last-Event-ID after a drop and shows no event twice', async () => {
    const { srv, api, seen, reconnects, h, dedupe } = await setup()
    srv.route('POST /api/chat', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.write(frame(1, 'session', { sessionId: 's1', runId: 'r1' }))
      // Half a frame, then the connection drops.
      res.write(frame(2, 'message_delta', { messageId: 'm1', delta: '你好' }) + 'id: 3\nevent: mess')
      setImmediate(() => res.socket?.destroy())
    })
    srv.route('GET /api/sessions/s1/events', (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      // Replays from after the last id it was given, plus one duplicate.
      res.write(frame(2, 'message_delta', { messageId: 'm1', delta: '你好' }))
      res.write(frame(3, 'message', { messageId: 'm1', role: 'assistant', content: '你好' }))
      res.write(': ping\n\n')
      res.write(frame(4, 'done', { runId: 'r1', status: 'completed' }))
      // The subscription stays open; the client closes it after `done`.
    })

    await api.chat({ message: 'hi' }, dedupe, h)

    expect(seen.map((e) => [e.id, e.event])).toEqual([
      [1, 'session'],
      [2, 'message_delta'],
      [3, 'message'],
      [4, 'done'],
    ])
    expect(reconnects).toEqual([1])
    const sub = srv.requests.find((r) => r.url.startsWith('/api/sessions/s1/events'))
    expect(sub?.headers['last-event-id']).toBe('2')
    expect(srv.requests[0].body).toEqual({ message: 'hi' })
  })

  it('gives up with StreamLostError after maxRetries', async () => {
    const { srv, api, reconnects, h, dedupe } = await setup()
    srv.route('POST /api/chat/continue', sse(frame(5, 'user_input_resolved', { requestId: 'a', toolCallId: 'c', status: 'answered' })))
    srv.route('GET /api/sessions/s1/events', json(503, { error: { code: 'unavailable', message: 'down' } }))
    const body = { sessionId: 's1', requestId: 'a', selections: [], customInput: '', cancelled: false }
    await expect(api.continueChat(body, dedupe, h)).rejects.toBeInstanceOf(StreamLostError)
    expect(reconnects).toEqual([1, 2])
  })

  it('turns a JSON error before the stream into ApiError with its fields', async () => {
    const { srv, api, h, dedupe } = await setup()
    const receipt = { requestId: 'a', toolCallId: 'c', status: 'answered', selections: ['x'], customInput: '', resolvedAt: '2026-01-01T00:00:00Z' }
    srv.route('POST /api/chat/continue', json(409, { error: { code: 'already_resolved', message: 'dup', receipt } }))
    const body = { sessionId: 's1', requestId: 'a', selections: ['x'], customInput: '', cancelled: false }
    const err = await api.continueChat(body, dedupe, h).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(ApiError)
    expect((err as ApiError).status).toBe(409)
    expect((err as ApiError).code).toBe('already_resolved')
    expect((err as ApiError).receipt).toEqual(receipt)
    expect(srv.requests[0].headers['content-type']).toBe('application/json')
  })
})
