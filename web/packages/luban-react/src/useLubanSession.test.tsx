import { render, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { Api } from './api'
import { UserInputCard } from './components/UserInputCard'
import type { InputRequest, Receipt, Transcript } from './types'
import { frame, json, startServer, type FakeServer } from './test/server'
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

/** follow routes the session's event stream to a handle the test writes to. */
function follow(srv: FakeServer) {
  const streams: ServerResponse[] = []
  srv.route('GET /api/sessions/s1/events', (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    res.write(': ping\n\n')
    streams.push(res)
  })
  return {
    streams,
    write: (f: string) => streams[streams.length - 1].write(f),
    lastEventIds: () => srv.requests.filter((r) => r.url.startsWith('/api/sessions/s1/events')).map((r) => r.headers['last-event-id']),
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
})
