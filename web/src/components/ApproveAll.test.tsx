// "Approve all" on the page (docs/design.md §17 "Batch"): a card for every
// pending request of a session, answerable in any order, and one batch
// POST /api/chat/continue for every approval, against a real loopback server.
import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { Api, type InputRequest, type Receipt } from 'luban-react'
import { App } from '../App'
import { frame, json, startServer, type FakeServer, type Route } from '../../packages/luban-react/src/test/server'

const NOW = '2026-03-01T08:00:00Z'
const LATER = new Date(Date.now() + 3600_000).toISOString()

function approval(n: number, over: Record<string, unknown> = {}): InputRequest {
  return {
    id: `req_${n}`,
    toolCallId: `call_${n}`,
    sessionId: 's1',
    runId: 'r1',
    tool: 'approval',
    title: 'write_file',
    mode: 'approval',
    createdAt: NOW,
    expiresAt: LATER,
    resumable: true,
    toolName: 'write_file',
    arguments: { path: `notes/${n}.md`, content: `第 ${n} 行` },
    ...over,
  } as unknown as InputRequest
}

function receipt(n: number, over: Record<string, unknown> = {}): Receipt {
  return { requestId: `req_${n}`, toolCallId: `call_${n}`, status: 'answered', selections: [], customInput: '', resolvedAt: NOW, decision: 'approve', ...over } as Receipt
}

/** transcript is session s1 paused on the two approvals of one assistant message. */
function transcript(reqs: InputRequest[]) {
  return {
    session: { id: 's1', title: '两个文件', status: 'waiting_input', createdAt: NOW, updatedAt: NOW },
    lastEventId: 4,
    messages: [
      { id: 'm0', runId: 'r1', role: 'user', content: '写两个文件', createdAt: NOW },
      {
        id: 'm1',
        runId: 'r1',
        role: 'assistant',
        content: '',
        toolCalls: reqs.map((r) => ({ id: r.toolCallId, name: 'write_file', arguments: JSON.stringify((r as unknown as { arguments: unknown }).arguments) })),
        createdAt: NOW,
      },
    ],
    interactions: reqs.map((r) => ({ request: r, status: 'pending', receipt: null })),
  }
}

/**
 * setup opens /s/s1 on a server whose session waits on reqs; pending is
 * its GET /api/interactions/pending answer. The session's event stream
 * stays open (watch holds it) so a test can send events on it.
 */
async function setup(reqs: InputRequest[], pending: unknown, continueRoute: Route, lang: 'zh' | 'en' = 'zh') {
  window.history.replaceState(null, '', '/s/s1')
  const watch: ServerResponse[] = []
  const srv: FakeServer = await startServer({
    'GET /api/info': json(200, { model: 'scripted:batch', askTools: ['ask_user'] }),
    'GET /api/agents': json(200, { agents: [] }),
    'GET /api/sessions': json(200, { sessions: [{ id: 's1', title: '两个文件', status: 'waiting_input', updatedAt: NOW }] }),
    'GET /api/sessions/s1': json(200, transcript(reqs)),
    'GET /api/interactions/pending': json(200, pending),
    'GET /api/sessions/s1/events': (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      res.write(': ping\n\n')
      watch.push(res)
    },
    'POST /api/chat/continue': continueRoute,
  })
  const api = new Api({ base: srv.base, retryDelayMs: 1, maxRetries: 1 })
  const user = userEvent.setup()
  render(<App api={api} initialLang={lang} />)
  const continues = () => srv.requests.filter((r) => r.method === 'POST' && r.url === '/api/chat/continue')
  await waitFor(() => expect(srv.requests.some((r) => r.url === '/api/interactions/pending?sessionId=s1')).toBe(true))
  return { srv, user, continues, watch }
}

const card = (n: number) => document.querySelector<HTMLElement>(`[data-testid="input-card"][data-request-id="req_${n}"]`)!

describe('Approve all', () => {
  it('restores a card for every pending request and approves both with ONE batch continue', async () => {
    const reqs = [approval(1), approval(2)]
    const { user, continues, watch } = await setup(reqs, { pending: reqs[0], last: null, requests: reqs }, (_req, res) => {
      res.writeHead(202, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ receipt: receipt(1), receipts: [receipt(1), receipt(2)] }))
    })
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(2))
    expect(card(1)).toHaveAttribute('data-phase', 'editing')
    expect(card(2)).toHaveAttribute('data-phase', 'editing')
    const bar = screen.getByTestId('approve-all-bar')
    expect(bar).toHaveTextContent('2 个工具调用在等待批准')
    expect(screen.getByTestId('composer-hint')).toHaveTextContent('请先批准或拒绝上面的这些工具调用')

    // A native button, reached and pressed from the keyboard.
    const button = within(bar).getByTestId('approve-all')
    expect(button.tagName).toBe('BUTTON')
    expect(button).toHaveTextContent('全部批准（2 个）')
    expect(button).toHaveAccessibleDescription('2 个工具调用在等待批准')
    button.focus()
    await user.keyboard('{Enter}')

    await waitFor(() => expect(card(1)).toHaveAttribute('data-phase', 'resolved'))
    expect(card(2)).toHaveAttribute('data-phase', 'resolved')
    for (const n of [1, 2]) {
      const r = within(card(n)).getByTestId('receipt')
      expect(r).toHaveAttribute('data-decision', 'approve')
      expect(within(r).getByTestId('receipt-status')).toHaveTextContent('已批准')
    }
    expect(continues()).toHaveLength(1)
    expect(continues()[0].headers.accept).toBe('application/json')
    expect(continues()[0].body).toEqual({
      sessionId: 's1',
      answers: [
        { requestId: 'req_1', decision: 'approve' },
        { requestId: 'req_2', decision: 'approve' },
      ],
    })
    expect(screen.queryByTestId('approve-all-bar')).toBeNull()
    // Every answer is in: the run goes on.
    expect(screen.getByTestId('running')).toBeInTheDocument()
    // The stream's copies of the receipts change nothing.
    for (const w of watch) w.write(frame(5, 'user_input_resolved', receipt(1)) + frame(6, 'user_input_resolved', receipt(2)))
    expect(screen.getAllByTestId('input-card')).toHaveLength(2)
  })

  it('answers the cards in any order, one by one: the run waits until the last', async () => {
    const reqs = [approval(1), approval(2)]
    const { user, continues } = await setup(reqs, { pending: reqs[0], last: null, requests: reqs }, async (_req, res, body) => {
      const id = (body as { requestId: string }).requestId
      res.writeHead(202, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ receipt: receipt(Number(id.slice(4))) }))
    })
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(2))
    await user.click(within(card(2)).getByTestId('approval-approve'))
    await waitFor(() => expect(card(2)).toHaveAttribute('data-phase', 'resolved'))
    expect(card(1)).toHaveAttribute('data-phase', 'editing')
    expect(screen.queryByTestId('running')).toBeNull()
    // One approval left: no batch to offer.
    expect(screen.queryByTestId('approve-all-bar')).toBeNull()
    await user.click(within(card(1)).getByTestId('approval-approve'))
    await waitFor(() => expect(card(1)).toHaveAttribute('data-phase', 'resolved'))
    expect(screen.getByTestId('running')).toBeInTheDocument()
    expect(continues().map((r) => (r.body as { requestId: string }).requestId)).toEqual(['req_2', 'req_1'])
  })

  it('an entry recorded without a receipt (null) is open again, the others resolved', async () => {
    const reqs = [approval(1), approval(2)]
    await setup(reqs, { pending: reqs[0], last: null, requests: reqs }, json(202, { receipt: receipt(1), receipts: [receipt(1), null] }))
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(2))
    await userEvent.setup().click(screen.getByTestId('approve-all'))
    await waitFor(() => expect(card(1)).toHaveAttribute('data-phase', 'resolved'))
    await waitFor(() => expect(card(2)).toHaveAttribute('data-phase', 'editing'))
    expect(screen.queryByTestId('running')).toBeNull()
  })

  it('an approval that needs a quorum is answered on its own: Approve all leaves it out', async () => {
    const quorum = { names: ['finance'], awaiting: [], quorum: 2, approvals: [] }
    const reqs = [approval(1), approval(2), approval(3, { waitingFor: quorum })]
    const { continues } = await setup(
      reqs,
      { pending: reqs[0], last: null, requests: reqs },
      json(202, { receipt: receipt(1), receipts: [receipt(1), receipt(2)] }),
    )
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(3))
    expect(screen.getByTestId('approve-all-bar')).toHaveAttribute('data-count', '2')
    await userEvent.setup().click(screen.getByTestId('approve-all'))
    await waitFor(() => expect(card(2)).toHaveAttribute('data-phase', 'resolved'))
    const body = continues()[0].body as { answers: { requestId: string }[] }
    expect(body.answers.map((a) => a.requestId)).toEqual(['req_1', 'req_2'])
    expect(card(3)).toHaveAttribute('data-phase', 'editing')
  })

  it('one approval beside a quorum approval offers no batch', async () => {
    const reqs = [approval(1), approval(2, { waitingFor: { names: ['finance'], awaiting: [], quorum: 2, approvals: [] } })]
    await setup(reqs, { pending: reqs[0], last: null, requests: reqs }, json(500, {}))
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(2))
    expect(screen.queryByTestId('approve-all-bar')).toBeNull()
  })

  it('a refused batch (422) shows the error on the card it names and leaves every card answerable', async () => {
    const reqs = [approval(1), approval(2)]
    let refuse = true
    const { user, continues } = await setup(reqs, { pending: reqs[0], last: null, requests: reqs }, (_req, res, body) => {
      if (refuse) {
        refuse = false
        return json(422, {
          error: {
            code: 'invalid_answer',
            message: 'answers[0].decision: required',
            details: [{ field: 'answers[0].decision', code: 'required', message: 'required' }],
          },
        })(_req, res, body)
      }
      res.writeHead(202, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ receipt: receipt(2) }))
    })
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(2))
    await user.click(screen.getByTestId('approve-all'))
    await waitFor(() => expect(within(card(1)).getByTestId('card-error')).toBeInTheDocument())
    expect(card(1)).toHaveAttribute('data-phase', 'editing')
    expect(card(2)).toHaveAttribute('data-phase', 'editing')
    expect(within(card(2)).queryByTestId('card-error')).toBeNull()
    const err = within(card(1)).getByTestId('card-error')
    expect(err).toHaveAttribute('role', 'alert')
    expect(within(err).getByText(/^decision: /)).toHaveAttribute('data-code', 'required')
    // The named card takes the focus, where its error is announced; the
    // other card, back to editing without an error, does not take it.
    expect(card(1).contains(document.activeElement)).toBe(true)
    expect(screen.queryByTestId('approve-all-error')).toBeNull()
    // Both stay answerable: the batch again, or each on its own.
    expect(screen.getByTestId('approve-all')).toBeEnabled()
    expect(within(card(1)).getByTestId('approval-approve')).toBeEnabled()
    expect(within(card(2)).getByTestId('approval-approve')).toBeEnabled()
    await user.click(within(card(2)).getByTestId('approval-approve'))
    await waitFor(() => expect(card(2)).toHaveAttribute('data-phase', 'resolved'))
    expect(continues()[1].body).toEqual({ sessionId: 's1', requestId: 'req_2', decision: 'approve', cancelled: false })
    expect(card(1)).toHaveAttribute('data-phase', 'editing')
  })

  it('a failure that names no card is said by the bar, which takes the focus back', async () => {
    const reqs = [approval(1), approval(2)]
    const { user } = await setup(reqs, { pending: reqs[0], last: null, requests: reqs }, json(503, { error: { code: 'unavailable', message: 'draining' } }))
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(2))
    await user.click(screen.getByTestId('approve-all'))
    const err = await screen.findByTestId('approve-all-error')
    expect(err).toHaveAttribute('role', 'alert')
    expect(err).toHaveTextContent('出错了')
    expect(screen.getByTestId('approve-all')).toHaveFocus()
    expect(screen.getByTestId('approve-all')).toHaveAccessibleDescription(/出错了/)
    expect(card(1)).toHaveAttribute('data-phase', 'editing')
    expect(card(2)).toHaveAttribute('data-phase', 'editing')
  })

  it('speaks English with the page', async () => {
    const reqs = [approval(1), approval(2), approval(3)]
    await setup(reqs, { pending: reqs[0], last: null, requests: reqs }, json(500, {}), 'en')
    const bar = await screen.findByTestId('approve-all-bar')
    expect(bar).toHaveAttribute('data-count', '3')
    expect(bar).toHaveTextContent('3 tool calls wait for your approval')
    expect(within(bar).getByTestId('approve-all')).toHaveTextContent('Approve all 3')
    expect(screen.getByTestId('composer-hint')).toHaveTextContent('Approve or reject the tool calls above first')
  })

  it('a server that sends only `pending` still restores its card; one approval offers no batch', async () => {
    const reqs = [approval(1, { toolName: '<img src=x onerror=alert(1)>' })]
    await setup(reqs, { pending: reqs[0], last: null }, json(500, {}))
    await waitFor(() => expect(screen.getAllByTestId('input-card')).toHaveLength(1))
    expect(card(1)).toHaveAttribute('data-phase', 'editing')
    expect(screen.queryByTestId('approve-all-bar')).toBeNull()
    // Model-written text is text.
    expect(card(1).querySelector('img')).toBeNull()
    expect(card(1)).toHaveTextContent('<img src=x onerror=alert(1)>')
  })
})
