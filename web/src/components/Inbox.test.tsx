import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import type { ServerResponse } from 'node:http'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { Api, type InboxItem } from 'luban-react'
import { LangContext } from '../i18n'
import { frame, json, startServer, type Route } from '../../packages/luban-react/src/test/server'
import { Inbox } from './Inbox'

const LATER = new Date(Date.now() + 3600_000).toISOString()

function item(n: number, over: Partial<InboxItem> = {}): InboxItem {
  return {
    id: `ask_${n}`,
    toolCallId: `call_${n}`,
    sessionId: `sess_${n}`,
    runId: `run_${n}`,
    tool: 'ask_user',
    title: `问题 ${n}`,
    mode: 'single',
    options: [
      { id: 'a', label: '甲' },
      { id: 'b', label: '乙' },
    ],
    createdAt: '2026-03-01T08:00:00Z',
    expiresAt: LATER,
    resumable: true,
    status: 'pending',
    receipt: null,
    sessionTitle: `会话 ${n}`,
    agent: 'coder',
    ...over,
  }
}

/** feed is a GET /api/events route whose open streams the test writes to. */
function feed() {
  const open: ServerResponse[] = []
  const lastIds: (string | undefined)[] = []
  const route: Route = (req, res) => {
    lastIds.push(req.headers['last-event-id'] as string | undefined)
    res.writeHead(200, { 'Content-Type': 'text/event-stream' })
    res.write(': hi\n\n')
    open.push(res)
  }
  return { route, open, lastIds }
}

beforeEach(() => {
  document.title = 'luban'
})

afterEach(() => {
  vi.unstubAllGlobals()
  localStorage.clear()
})

async function setup(list: () => InboxItem[], routes: Record<string, Route> = {}) {
  const f = feed()
  const srv = await startServer({
    'GET /api/interactions': (_req, res) => json(200, { interactions: list() })(_req, res, null),
    'GET /api/events': f.route,
    ...routes,
  })
  const api = new Api({ base: srv.base })
  const opened: string[] = []
  const answered: string[] = []
  const user = userEvent.setup()
  render(
    <LangContext.Provider value="zh">
      <Inbox api={api} onOpenSession={(id) => opened.push(id)} onAnswered={(id) => answered.push(id)} feedRetryMs={5} />
    </LangContext.Provider>,
  )
  return { srv, f, user, opened, answered }
}

describe('Inbox', () => {
  it('counts waiting questions in the header and the tab title, live over one feed that resumes with Last-Event-ID', async () => {
    let rows = [item(1)]
    const { srv, f } = await setup(() => rows)
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('1'))
    await waitFor(() => expect(document.title).toBe('(1) luban'))
    expect(f.lastIds).toEqual([undefined])

    // Another session asks: the feed says so, the list is read again.
    rows = [item(1), item(2)]
    f.open[0].write(frame(7, 'user_input_required', item(2)))
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('2'))
    await waitFor(() => expect(document.title).toBe('(2) luban'))

    // A drop: the reconnect asks for what came after id 7.
    f.open[0].destroy()
    await waitFor(() => expect(f.lastIds).toEqual([undefined, '7']))
    rows = []
    f.open[1].write(frame(8, 'user_input_resolved', { sessionId: 'sess_1', requestId: 'ask_1' }))
    f.open[1].write(frame(8, 'user_input_resolved', { sessionId: 'sess_1', requestId: 'ask_1' }))
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('0'))
    await waitFor(() => expect(document.title).toBe('luban'))
    // One subscription at a time, never one per session.
    expect(srv.requests.filter((r) => r.url === '/api/events')).toHaveLength(2)
  })

  it('lists each question with its session and agent, and answers it in place', async () => {
    // The first session has no title: it reads as untitled, not as its id.
    const first = item(1, { sessionTitle: '' })
    let rows = [first, item(2, { sessionTitle: 'deploy \u202Egnp.exe', agent: 'ops', source: { kind: 'mcp', client: 'Claude\u202E', clientVersion: '1.0.3' } })]
    let body: unknown = null
    const { srv, user, opened, answered } = await setup(() => rows, {
      'POST /api/chat/continue': (_req, res, b) => {
        body = b
        rows = [first]
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        res.write(frame(20, 'user_input_resolved', { requestId: 'ask_2', toolCallId: 'call_2', status: 'answered', selections: ['b'], customInput: '', resolvedAt: '2026-03-01T08:01:00Z' }))
        res.write(frame(21, 'done', { runId: 'run_2', status: 'completed' }))
        res.end()
      },
    })
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('2'))
    await user.click(screen.getByTestId('inbox-button'))
    const entries = await screen.findAllByTestId('inbox-item')
    expect(entries.map((e) => e.getAttribute('data-request-id'))).toEqual(['ask_1', 'ask_2'])
    expect(within(entries[0]).getByTestId('inbox-session')).toHaveTextContent(/^未命名会话$/)
    const second = entries[1]
    // Model and user text as text, bidi controls made visible.
    expect(within(second).getByTestId('inbox-session')).toHaveTextContent('deploy ⟨U+202E⟩gnp.exe')
    expect(within(second).getByTestId('inbox-agent')).toHaveTextContent('ops')
    // Which MCP host asked: its clientInfo name and version, as text.
    expect(within(second).getByTestId('inbox-source')).toHaveTextContent('由 Claude⟨U+202E⟩ 1.0.3 通过 MCP 提问')
    expect(within(entries[0]).queryByTestId('inbox-source')).toBeNull()
    await user.click(within(second).getByText('乙'))
    await user.click(within(second).getByTestId('submit'))

    const card = () => within(screen.getAllByTestId('inbox-item')[1]).getByTestId('input-card')
    await waitFor(() => expect(card()).toHaveAttribute('data-phase', 'resolved'))
    expect(body).toEqual({ sessionId: 'sess_2', requestId: 'ask_2', selections: ['b'], customInput: '', cancelled: false })
    expect(answered).toEqual(['sess_2'])
    expect(within(card()).getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
    // The answered one leaves the count once the list is read again.
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('1'))
    expect(srv.requests.filter((r) => r.method === 'POST')).toHaveLength(1)

    // Escape closes the panel and gives the focus back to the button.
    within(screen.getByTestId('inbox')).getByTestId('inbox-close').focus()
    await user.keyboard('{Escape}')
    expect(screen.queryByTestId('inbox')).toBeNull()
    expect(screen.getByTestId('inbox-button')).toHaveFocus()
    expect(screen.getByRole('button', { name: /收件箱\s*1/ })).toBe(screen.getByTestId('inbox-button'))
    await user.click(screen.getByTestId('inbox-button'))
    await user.click(within(screen.getAllByTestId('inbox-item')[0]).getByTestId('inbox-session'))
    expect(opened).toEqual(['sess_1'])
    expect(screen.queryByTestId('inbox')).toBeNull()
  })

  it('a rejected answer keeps the question answerable and shows why', async () => {
    const rows = [item(1, { mode: 'text', options: undefined })]
    const { user } = await setup(() => rows, {
      'POST /api/chat/continue': json(422, { error: { code: 'invalid_answer', message: 'too long', details: [{ field: 'customInput', code: 'too_long', message: 'too long' }] } }),
    })
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('1'))
    await user.click(screen.getByTestId('inbox-button'))
    const entry = await screen.findByTestId('inbox-item')
    await user.type(within(entry).getByRole('textbox'), 'x')
    await user.click(within(entry).getByTestId('submit'))
    await waitFor(() => expect(within(entry).getByTestId('input-card')).toHaveAttribute('data-phase', 'editing'))
    expect(within(entry).getByText('太长了')).toBeInTheDocument()
    expect(screen.getByTestId('inbox-count')).toHaveTextContent('1')
  })

  it('asks for notification permission only on a click and notifies only while the tab is hidden', async () => {
    const shown: { title: string; body?: string }[] = []
    const requestPermission = vi.fn(async () => {
      FakeNotification.permission = 'granted'
      return 'granted' as NotificationPermission
    })
    class FakeNotification {
      static permission: NotificationPermission = 'default'
      static requestPermission = requestPermission
      onclick: (() => void) | null = null
      constructor(title: string, opts?: NotificationOptions) {
        shown.push({ title, body: opts?.body })
      }
      close() {}
    }
    vi.stubGlobal('Notification', FakeNotification)
    let hidden = false
    vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => (hidden ? 'hidden' : 'visible'))

    let rows: InboxItem[] = []
    const { f, user } = await setup(() => rows)
    await waitFor(() => expect(f.open).toHaveLength(1))
    await user.click(screen.getByTestId('inbox-button'))
    expect(requestPermission).not.toHaveBeenCalled()

    // Before opting in nothing is shown, hidden or not.
    hidden = true
    rows = [item(1)]
    f.open[0].write(frame(1, 'user_input_required', item(1)))
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('1'))
    expect(shown).toEqual([])

    await user.click(screen.getByTestId('inbox-notify'))
    expect(requestPermission).toHaveBeenCalledTimes(1)
    await waitFor(() => expect(screen.getByTestId('inbox-notify')).toHaveAttribute('aria-pressed', 'true'))

    // Visible tab: no notification.
    hidden = false
    rows = [item(1), item(2)]
    f.open[0].write(frame(2, 'user_input_required', item(2)))
    await waitFor(() => expect(screen.getByTestId('inbox-count')).toHaveTextContent('2'))
    expect(shown).toEqual([])

    // Hidden tab: one, with the question as plain text.
    hidden = true
    rows = [item(1), item(2), item(3)]
    f.open[0].write(frame(3, 'user_input_required', item(3, { title: '<b>x</b> \u202Eabc' })))
    await waitFor(() => expect(shown).toHaveLength(1))
    expect(shown[0]).toEqual({ title: 'luban 有新问题等你回答', body: '<b>x</b> ⟨U+202E⟩abc' })
  })
})
