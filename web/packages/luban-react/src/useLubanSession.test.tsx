import { act, render, renderHook, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { Api } from './api'
import { UserInputCard } from './components/UserInputCard'
import type { InputRequest, Receipt, Transcript } from './types'
import { frame, json, sse, startServer, type FakeServer } from './test/server'
import { useLubanSession } from './useLubanSession'

const LATER = new Date(Date.now() + 3600_000).toISOString()
const NOW = new Date().toISOString()

function request(id: string, title: string): InputRequest {
  return {
    id,
    toolCallId: `call_${id}`,
    sessionId: 's1',
    runId: 'r1',
    tool: 'ask_user',
    title,
    mode: 'single',
    options: [
      { id: 'a', label: '甲' },
      { id: 'b', label: '乙' },
    ],
    createdAt: NOW,
    expiresAt: LATER,
    resumable: true,
  }
}

function receipt(id: string, over: Partial<Receipt> = {}): Receipt {
  return { requestId: id, toolCallId: `call_${id}`, status: 'answered', selections: ['a'], customInput: '', resolvedAt: NOW, ...over }
}

function transcript(over: Partial<Transcript> = {}): Transcript {
  return {
    session: { id: 's1', title: 't', status: 'running', createdAt: NOW, updatedAt: NOW, agent: 'default' },
    lastEventId: 7,
    messages: [],
    interactions: [{ request: request('q1', '第一个问题'), status: 'answered', receipt: receipt('q1') }],
    errors: [],
    ...over,
  }
}

/** Questions is the README's example: another app rendering luban's questions. */
function Questions({ api, sessionId }: { api: Api; sessionId: string }) {
  const s = useLubanSession(sessionId, { api })
  return (
    <div data-testid="host" data-connection={s.connection} data-pending={s.pending.map((r) => r.id).join(',')}>
      {s.cards.map((c) => (
        <UserInputCard
          key={c.key}
          card={c}
          onSubmit={(a) => s.answer(c.request.id, a)}
          onCancel={() => s.cancel(c.request.id)}
          onExpire={() => s.expire(c.request.id)}
        />
      ))}
    </div>
  )
}

/**
 * follow routes the session's event stream to a handle the test writes to.
 * A read from the log's start (no Last-Event-ID: the page catching up on a
 * running session's streamed text) gets `replay`, the log up to the
 * transcript's lastEventId (7), and ends.
 */
function follow(srv: FakeServer, replay = [frame(7, 'session', { sessionId: 's1', runId: 'r1' })]) {
  const streams: ServerResponse[] = []
  srv.route('GET /api/sessions/s1/events', (req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    if (req.headers['last-event-id'] === undefined) {
      res.end(replay.join(''))
      return
    }
    res.write(': ping\n\n')
    streams.push(res)
  })
  return {
    streams,
    write: (f: string) => streams[streams.length - 1].write(f),
    lastEventIds: () =>
      srv.requests.filter((r) => r.url.startsWith('/api/sessions/s1/events') && r.headers['last-event-id'] !== undefined).map((r) => r.headers['last-event-id']),
  }
}

function card(id: string): HTMLElement {
  return screen.getAllByTestId('input-card').find((e) => e.dataset.requestId === id)!
}

describe('useLubanSession', () => {
  it('shows the transcript, follows after lastEventId, answers with a JSON continue and shows the run end', async () => {
    const srv = await startServer({ 'GET /api/sessions/s1': json(200, transcript()) })
    const ev = follow(srv)
    srv.route('POST /api/chat/continue', json(202, { receipt: receipt('q2', { selections: ['b'] }) }))
    const api = new Api({ base: srv.base, retryDelayMs: 1 })
    render(<Questions api={api} sessionId="s1" />)

    await waitFor(() => expect(screen.getByTestId('host')).toHaveAttribute('data-connection', 'live'))
    expect(card('q1')).toHaveAttribute('data-phase', 'resolved')
    await waitFor(() => expect(ev.streams).toHaveLength(1))
    expect(ev.lastEventIds()).toEqual(['7'])

    ev.write(frame(8, 'user_input_required', request('q2', '第二个问题')))
    await waitFor(() => expect(card('q2')).toHaveAttribute('data-phase', 'editing'))
    expect(screen.getByTestId('host')).toHaveAttribute('data-pending', 'q2')

    await userEvent.click(screen.getAllByTestId('option-b').at(-1)!)
    await userEvent.click(screen.getByTestId('submit'))
    await waitFor(() => expect(card('q2')).toHaveAttribute('data-phase', 'resolved'))
    const post = srv.requests.find((r) => r.method === 'POST')!
    expect(post.headers.accept).toBe('application/json')
    expect(post.body).toMatchObject({ sessionId: 's1', requestId: 'q2', selections: ['b'], cancelled: false })
    expect(screen.getByTestId('host')).toHaveAttribute('data-pending', '')

    // The stream repeats the resolution (no change), then the run ends.
    ev.write(frame(9, 'user_input_resolved', receipt('q2', { selections: ['b'] })))
    ev.write(frame(10, 'done', { runId: 'r1', status: 'completed' }))
    // A receipt shows its own resolution, never the run's end.
    await waitFor(() => expect(card('q2').querySelector('[data-testid="receipt"]')).toHaveAttribute('data-status', 'answered'))
    expect(card('q2').querySelector('[data-testid="run-status"]')).toBeNull()
  })

  it('a reply streaming when the session opens shows its text so far first, then the rest live, each piece once', async () => {
    const srv = await startServer({
      'GET /api/sessions/s1': json(200, transcript({ interactions: [], messages: [{ id: 'mu', runId: 'r1', role: 'user', content: '讲个故事', createdAt: NOW }] })),
    })
    // The log up to lastEventId 7: an earlier run's dead attempt, then this run's start and its reply so far.
    const ev = follow(srv, [
      frame(2, 'message_delta', { messageId: 'dead', delta: '死掉的' }),
      frame(3, 'done', { runId: 'r0', status: 'completed' }),
      frame(4, 'session', { sessionId: 's1', runId: 'r1' }),
      frame(6, 'message_delta', { messageId: 'ma', delta: '从前' }),
      frame(7, 'message_delta', { messageId: 'ma', delta: '有座山，' }),
    ])
    const api = new Api({ base: srv.base, retryDelayMs: 1 })
    const { result } = renderHook(() => useLubanSession('s1', { api }))
    const reply = () => result.current.items.filter((i) => i.kind === 'message' && i.role === 'assistant')
    await waitFor(() => expect(ev.streams).toHaveLength(1))
    expect(ev.lastEventIds()).toEqual(['7'])
    expect(reply()).toMatchObject([{ id: 'ma', content: '从前有座山，', streaming: true }])
    act(() => {
      ev.write(frame(8, 'message_delta', { messageId: 'ma', delta: '山里有座庙。' }))
    })
    await waitFor(() => expect(reply()).toMatchObject([{ id: 'ma', content: '从前有座山，山里有座庙。' }]))
    act(() => {
      ev.write(frame(9, 'message', { messageId: 'ma', role: 'assistant', content: '从前有座山，山里有座庙。' }))
    })
    await waitFor(() => expect(reply()).toMatchObject([{ id: 'ma', content: '从前有座山，山里有座庙。', streaming: false }]))
    expect(reply()).toHaveLength(1)
  })

  it('shows an answer given elsewhere and resumes with Last-Event-ID after a drop', async () => {
    const srv = await startServer({
      'GET /api/sessions/s1': json(200, transcript({ interactions: [{ request: request('q2', '等待中'), status: 'pending', receipt: null }] })),
    })
    const ev = follow(srv)
    const api = new Api({ base: srv.base, retryDelayMs: 1 })
    render(<Questions api={api} sessionId="s1" />)
    await waitFor(() => expect(card('q2')).toHaveAttribute('data-phase', 'editing'))
    await waitFor(() => expect(ev.streams).toHaveLength(1))

    ev.write(frame(8, 'message', { messageId: 'm', role: 'assistant', content: 'x' }))
    await waitFor(() => expect(ev.streams[0].writableLength).toBe(0))
    ev.streams[0].socket?.destroy()
    await waitFor(() => expect(ev.streams).toHaveLength(2))
    expect(ev.lastEventIds()).toEqual(['7', '8'])

    ev.write(frame(9, 'user_input_resolved', receipt('q2', { selections: ['a'] })))
    await waitFor(() => expect(card('q2')).toHaveAttribute('data-phase', 'resolved'))
    expect(screen.getByTestId('receipt-selections')).toHaveTextContent('甲')
    expect(srv.requests.some((r) => r.method === 'POST')).toBe(false)
  })

  it('keeps a refused answer editable with the field error, and shows the winner on 409', async () => {
    const srv = await startServer({
      'GET /api/sessions/s1': json(200, transcript({ interactions: [{ request: request('q2', '等待中'), status: 'pending', receipt: null }] })),
    })
    follow(srv)
    srv.route(
      'POST /api/chat/continue',
      json(422, { error: { code: 'invalid_answer', message: 'bad', details: [{ field: 'selections', code: 'unknown_option', message: 'unknown option' }] } }),
    )
    const api = new Api({ base: srv.base, retryDelayMs: 1 })
    render(<Questions api={api} sessionId="s1" />)
    await waitFor(() => expect(card('q2')).toHaveAttribute('data-phase', 'editing'))
    await userEvent.click(screen.getByTestId('option-a'))
    await userEvent.click(screen.getByTestId('submit'))
    await waitFor(() => expect(screen.getByTestId('field-error-selections')).toBeInTheDocument())
    expect(card('q2')).toHaveAttribute('data-phase', 'editing')
    expect(screen.getByTestId('host')).toHaveAttribute('data-pending', 'q2')

    srv.route('POST /api/chat/continue', json(409, { error: { code: 'already_resolved', message: 'done', receipt: receipt('q2', { selections: ['b'] }) } }))
    await userEvent.click(screen.getByTestId('submit'))
    await waitFor(() => expect(card('q2')).toHaveAttribute('data-phase', 'resolved'))
    expect(screen.getByTestId('receipt-selections')).toHaveTextContent('乙')
  })

  it('sends in a new session: names it (onSession), follows it after the first event, and a refused message comes back false', async () => {
    const srv = await startServer({
      'POST /api/chat': sse(
        frame(1, 'session', { sessionId: 's9', runId: 'r1' }),
        frame(2, 'message', { messageId: 'u1', role: 'user', content: '你好' }),
        frame(3, 'message_delta', { messageId: 'a1', delta: '好' }),
        frame(4, 'message', { messageId: 'a1', role: 'assistant', content: '好的' }),
        frame(5, 'done', { runId: 'r1', status: 'completed' }),
      ),
    })
    const watched: string[] = []
    srv.route('GET /api/sessions/s9/events', (req, res) => {
      watched.push(String(req.headers['last-event-id']))
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.write(': ping\n\n')
    })
    const named: string[] = []
    const api = new Api({ base: srv.base, retryDelayMs: 1 })
    const { result, rerender } = renderHook(({ id }: { id?: string }) => useLubanSession(id, { api, onSession: (sid) => named.push(sid) }), {
      initialProps: {} as { id?: string },
    })
    expect(result.current.connection).toBe('closed')
    let ok: boolean | undefined
    await act(async () => {
      ok = await result.current.send('你好')
    })
    expect(ok).toBe(true)
    expect(named).toEqual(['s9'])
    expect(result.current.sessionId).toBe('s9')
    expect(result.current.running).toBe(false)
    const messages = result.current.items.filter((i) => i.kind === 'message')
    expect(messages.map((m) => (m.kind === 'message' ? `${m.role}:${m.content}` : ''))).toEqual(['user:你好', 'assistant:好的'])
    await waitFor(() => expect(result.current.connection).toBe('live'))
    expect(Number(watched[0])).toBeGreaterThanOrEqual(1)
    expect(result.current.lastEventId).toBe(5)

    // The app puts the new id into its URL and passes it back: nothing is reloaded.
    rerender({ id: 's9' })
    expect(srv.requests.some((r) => r.url === '/api/sessions/s9')).toBe(false)
    expect(result.current.items).toHaveLength(messages.length + 1) // the run's end line

    // A message the server refuses before its run starts is not part of the session.
    srv.route('POST /api/chat', json(409, { error: { code: 'run_in_progress', message: 'a run is active' } }))
    await act(async () => {
      ok = await result.current.send('再来')
    })
    expect(ok).toBe(false)
    expect(result.current.items.some((i) => i.kind === 'message' && i.content === '再来')).toBe(false)
    expect(result.current.items.at(-1)).toMatchObject({ kind: 'notice', level: 'error', code: 'run_in_progress', status: 409 })
    expect(srv.requests.filter((r) => r.method === 'POST').at(-1)!.body).toEqual({ sessionId: 's9', message: '再来' })
  })

  it('a session whose stream the server refuses (deleted elsewhere) is lost, with a notice saying so', async () => {
    const srv = await startServer({
      'GET /api/sessions/s1': json(200, transcript()),
      'GET /api/sessions/s1/events': json(404, { error: { code: 'session_not_found', message: 'session not found' } }),
    })
    const api = new Api({ base: srv.base, retryDelayMs: 1 })
    const { result } = renderHook(() => useLubanSession('s1', { api }))
    await waitFor(() => expect(result.current.connection).toBe('lost'))
    expect(result.current.error).toMatchObject({ status: 404, code: 'session_not_found' })
    expect(result.current.items.at(-1)).toMatchObject({ kind: 'notice', level: 'error', code: 'session_not_found', context: 'load' })
    // The transcript's receipt is still shown.
    expect(result.current.cards.map((c) => c.phase)).toEqual(['resolved'])
  })
})
