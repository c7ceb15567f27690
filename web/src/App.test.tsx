import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import type { ServerResponse } from 'node:http'
import { describe, expect, it } from 'vitest'
import { Api, type InputRequest, type Receipt } from 'luban-react'
import { App } from './App'
import { frame, json, sse, startServer, type FakeServer } from '../packages/luban-react/src/test/server'

const NOW = '2026-03-01T08:00:00Z'
const LATER = new Date(Date.now() + 3600_000).toISOString()

function request(over: Partial<InputRequest> = {}): InputRequest {
  return {
    id: 'ask_1',
    toolCallId: 'call_1',
    sessionId: 's1',
    runId: 'r1',
    tool: 'ask_user',
    title: '请选择执行方式',
    mode: 'single',
    options: [
      { id: 'safe', label: '先分析', recommended: true },
      { id: 'implement', label: '直接实现' },
    ],
    submitLabel: '继续',
    createdAt: NOW,
    expiresAt: LATER,
    resumable: true,
    ...over,
  }
}

function receipt(over: Partial<Receipt> = {}): Receipt {
  return { requestId: 'ask_1', toolCallId: 'call_1', status: 'answered', selections: ['safe'], customInput: '', resolvedAt: NOW, ...over }
}

function transcript(id: string, status: string, interactions: unknown[] = []) {
  return {
    session: { id, title: 't', status, createdAt: NOW, updatedAt: NOW },
    messages: [
      { id: 'm0', runId: 'r1', role: 'user', content: '帮我改代码', createdAt: NOW },
      { id: 'm1', runId: 'r1', role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'ask_user', arguments: '{}' }], createdAt: NOW },
    ],
    interactions,
  }
}

async function setup(path = '/', routes: Parameters<typeof startServer>[0] = {}) {
  window.history.replaceState(null, '', path)
  const srv: FakeServer = await startServer({
    'GET /api/info': json(200, { model: 'scripted:demo', askTools: ['ask_user', 'AskUser'] }),
    'GET /api/sessions': json(200, { sessions: [{ id: 's1', title: '第一个会话', status: 'completed', updatedAt: NOW }] }),
    ...routes,
  })
  const api = new Api({ base: srv.base, retryDelayMs: 1, maxRetries: 1 })
  const user = userEvent.setup()
  render(<App api={api} initialLang="zh" />)
  const posts = (p: string) => srv.requests.filter((r) => r.method === 'POST' && r.url === p)
  return { srv, user, posts }
}

describe('App', () => {
  it('chats, renders the card, submits once and shows the receipt through the run end', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    const watch: ServerResponse[] = []
    const { srv, user, posts } = await setup('/', {
      'POST /api/chat': sse(
        frame(1, 'session', { sessionId: 's1', runId: 'r1' }),
        frame(2, 'message', { messageId: 'm0', role: 'user', content: '帮我改代码' }),
        frame(3, 'message_delta', { messageId: 'm1', delta: '先问一下：' }),
        frame(4, 'message', { messageId: 'm1', role: 'assistant', content: '先问一下：' }),
        frame(5, 'tool_call', { toolCallId: 'call_1', name: 'ask_user', arguments: '{"title":"x"}' }),
        frame(6, 'user_input_required', { title: 'broken', mode: 'single' }),
        frame(7, 'user_input_required', request()),
      ),
      // The session's event stream (the page follows it from the first
      // event it saw): the continuation comes here after the 202 answer.
      'GET /api/sessions/s1/events': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        res.write(': ping\n\n')
        watch.push(res)
      },
      'POST /api/chat/continue': async (_req, res) => {
        res.writeHead(202, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ receipt: receipt({ selections: ['implement'] }) }))
        const w = watch[watch.length - 1]
        w.write(frame(8, 'user_input_resolved', receipt({ selections: ['implement'] })))
        w.write(frame(9, 'tool_result', { toolCallId: 'call_1', name: 'ask_user', content: '{}', isError: false }))
        await gate
        w.write(frame(10, 'tool_call', { toolCallId: 'call_2', name: 'read_file', arguments: '{"path":"a.go"}' }))
        w.write(frame(11, 'tool_result', { toolCallId: 'call_2', name: 'read_file', content: 'package a', isError: false }))
        w.write(frame(12, 'message_delta', { messageId: 'm2', delta: '**完成** <img src=x onerror=alert(1)>' }))
        w.write(frame(13, 'message', { messageId: 'm2', role: 'assistant', content: '**完成** <img src=x onerror=alert(1)>' }))
        w.write(frame(14, 'done', { runId: 'r1', status: 'completed' }))
      },
    })
    expect(await screen.findByTestId('model-name')).toHaveTextContent('scripted:demo')
    expect(await screen.findByText('第一个会话')).toBeInTheDocument()

    await user.type(screen.getByTestId('composer'), '帮我改代码{Enter}')
    const card = await screen.findByTestId('input-card')
    expect(posts('/api/chat')[0].body).toEqual({ message: '帮我改代码' })
    expect(posts('/api/chat')[0].headers['content-type']).toBe('application/json')
    expect(window.location.pathname).toBe('/s/s1')
    // The user message arrived twice (local + event) but shows once; the
    // request failing the minimal check (docs/design.md §A.3) is not rendered.
    expect(screen.getAllByTestId('message-user')).toHaveLength(1)
    expect(screen.getAllByTestId('input-card')).toHaveLength(1)
    expect(screen.queryByText('broken')).toBeNull()

    await user.click(within(card).getByLabelText(/直接实现/))
    await user.click(within(card).getByTestId('submit'))
    // The receipt shows its own resolution; the run's state is not on it.
    expect(await screen.findByTestId('receipt-status')).toHaveTextContent('已提交')
    expect(within(screen.getByTestId('receipt')).queryByTestId('run-status')).toBeNull()
    expect(screen.getByTestId('running')).toBeInTheDocument()
    expect(screen.getByTestId('receipt-selections')).toHaveTextContent('直接实现')
    expect(posts('/api/chat/continue')).toHaveLength(1)
    expect(posts('/api/chat/continue')[0].headers.accept).toBe('application/json')
    expect(posts('/api/chat/continue')[0].body).toEqual({
      sessionId: 's1',
      requestId: 'ask_1',
      selections: ['implement'],
      customInput: '',
      cancelled: false,
    })

    release()
    await waitFor(() => expect(screen.getByTestId('run-status')).toHaveTextContent('任务已完成'))
    expect(within(screen.getByTestId('receipt')).queryByTestId('run-status')).toBeNull()
    const assistant = screen.getAllByTestId('message-assistant')
    expect(assistant).toHaveLength(2)
    // The Markdown renderer is a lazy chunk: plain text first, then the markup.
    await waitFor(() => expect(assistant[1].querySelector('strong')).toHaveTextContent('完成'))
    expect(assistant[1].querySelector('img')).toBeNull()
    expect(assistant[1]).toHaveTextContent('完成 <img src=x onerror=alert(1)>')
    const tool = screen.getByTestId('tool-call')
    expect(tool).toHaveAttribute('data-tool', 'read_file')
    expect(within(tool).getByTestId('tool-result')).toHaveTextContent('package a')
    // The new session is watched from the first event the page saw, never
    // replayed from 0.
    const watches = srv.requests.filter((r) => r.url.startsWith('/api/sessions/') && r.url.includes('/events'))
    expect(watches.length).toBeGreaterThan(0)
    for (const w of watches) expect(Number(w.headers['last-event-id'])).toBeGreaterThanOrEqual(1)
  })

  it('restores a pending card on refresh, and a 409 turns it into the existing receipt', async () => {
    const { user, srv } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'waiting_input', [{ request: request(), status: 'pending', receipt: null }])),
      'GET /api/interactions/pending': json(200, { pending: request(), last: null }),
      'POST /api/chat/continue': json(409, {
        error: { code: 'already_resolved', message: 'answered in another tab', receipt: receipt({ selections: ['safe'] }) },
      }),
    })
    const card = await screen.findByTestId('input-card')
    expect(card).toHaveAttribute('data-phase', 'editing')
    await waitFor(() => expect(srv.requests.some((r) => r.url === '/api/interactions/pending?sessionId=s1')).toBe(true))
    await user.click(within(card).getByLabelText(/直接实现/))
    await user.click(within(card).getByTestId('submit'))
    expect(await screen.findByTestId('receipt')).toHaveAttribute('data-status', 'answered')
    expect(screen.getByTestId('receipt-selections')).toHaveTextContent('先分析')
  })

  it('restores the last receipt when nothing is pending', async () => {
    await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'completed')),
      'GET /api/interactions/pending': json(200, { pending: null, last: receipt({ status: 'cancelled', selections: [] }) }),
    })
    expect(await screen.findByTestId('receipt')).toHaveAttribute('data-status', 'cancelled')
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('已取消')
  })

  it('shows 服务已重启 for a non-resumable pending request and sends nothing', async () => {
    const { srv } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'waiting_input', [{ request: request(), status: 'pending', receipt: null }])),
      'GET /api/interactions/pending': json(200, { pending: request({ resumable: false }), last: null }),
    })
    expect(await screen.findByTestId('not-resumable')).toHaveTextContent('服务已重启，请重新发起任务')
    expect(screen.queryByTestId('submit')).toBeNull()
    expect(srv.requests.filter((r) => r.method === 'POST')).toHaveLength(0)
  })

  it('an unknown session (deleted, or forgotten by a server without storage) says so neutrally and offers a new session', async () => {
    const { user } = await setup('/s/gone', {
      'GET /api/sessions/gone': json(404, { error: { code: 'session_not_found', message: 'session not found' } }),
    })
    const notice = await screen.findByTestId('notice')
    expect(notice).toHaveAttribute('data-code', 'session_not_found')
    expect(notice).toHaveTextContent('这个会话不存在或已被删除')
    expect(notice).not.toHaveTextContent('重启')
    expect(screen.queryByTestId('input-card')).toBeNull()
    // No raw id as a title, and nothing can be typed into a session that does not exist.
    expect(screen.getByTestId('chat')).not.toHaveTextContent('gone')
    expect(screen.getByTestId('composer')).toBeDisabled()
    expect(screen.getByTestId('composer-hint')).toHaveTextContent('请新建会话')
    await user.click(within(notice).getByTestId('gone-new-session'))
    await waitFor(() => expect(window.location.pathname).toBe('/'))
    expect(screen.getByTestId('composer')).toBeEnabled()
    expect(screen.queryByTestId('notice')).toBeNull()
  })

  it.each([
    [404, 'interaction_not_found'],
    [410, 'not_resumable'],
  ])('a %i %s answer to submit shows 服务已重启', async (status, code) => {
    const { user, posts } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'waiting_input', [{ request: request(), status: 'pending', receipt: null }])),
      'GET /api/interactions/pending': json(200, { pending: request(), last: null }),
      'POST /api/chat/continue': json(status, { error: { code, message: 'gone' } }),
    })
    const card = await screen.findByTestId('input-card')
    await user.click(within(card).getByTestId('cancel'))
    await user.click(within(card).getByTestId('cancel-yes'))
    expect(await screen.findByTestId('not-resumable')).toBeInTheDocument()
    expect(posts('/api/chat/continue')).toHaveLength(1)
    expect(posts('/api/chat/continue')[0].body).toEqual({ sessionId: 's1', requestId: 'ask_1', selections: [], customInput: '', cancelled: true })
  })

  it('a 410 interaction_expired turns the card into 已超时', async () => {
    const { user } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'waiting_input', [{ request: request(), status: 'pending', receipt: null }])),
      'GET /api/interactions/pending': json(200, { pending: request(), last: null }),
      'POST /api/chat/continue': json(410, { error: { code: 'interaction_expired', message: 'expired' } }),
    })
    const card = await screen.findByTestId('input-card')
    await user.click(within(card).getByLabelText(/先分析/))
    await user.click(within(card).getByTestId('submit'))
    expect(await screen.findByTestId('receipt-status')).toHaveTextContent('已超时')
    expect(screen.getByTestId('receipt-time')).toHaveTextContent('超时时间')
    expect(screen.queryByTestId('receipt-expires')).toBeNull()
  })

  it('a 422 keeps the card editable with the server message by the field', async () => {
    const { user, posts } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'waiting_input', [{ request: request(), status: 'pending', receipt: null }])),
      'GET /api/interactions/pending': json(200, { pending: request(), last: null }),
      'POST /api/chat/continue': json(422, {
        error: { code: 'invalid_answer', message: 'bad', details: [{ field: 'selections', message: '选项不存在' }] },
      }),
    })
    const card = await screen.findByTestId('input-card')
    await user.click(within(card).getByLabelText(/先分析/))
    await user.click(within(card).getByTestId('submit'))
    expect(await screen.findByTestId('field-error-selections')).toHaveTextContent('选项不存在')
    expect(card).toHaveAttribute('data-phase', 'editing')
    expect(within(card).getByTestId('option-safe')).toBeChecked()
    await user.click(within(card).getByTestId('submit'))
    await waitFor(() => expect(posts('/api/chat/continue')).toHaveLength(2))
  })

  it('follows a running session through the events replay and keeps watching after the run end', async () => {
    let closed = false
    const tr = transcript('s1', 'running')
    tr.messages.push({ id: 'm4', runId: 'r2', role: 'user', content: '再来', createdAt: NOW })
    await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, tr),
      'GET /api/interactions/pending': json(200, { pending: null, last: null }),
      'GET /api/sessions/s1/events': (_req, res) => {
        res.on('close', () => (closed = true))
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        res.write(frame(1, 'session', { sessionId: 's1', runId: 'r1' }))
        res.write(frame(2, 'message', { messageId: 'm0', role: 'user', content: '帮我改代码' }))
        res.write(frame(3, 'done', { runId: 'r1', status: 'completed' }))
        res.write(frame(4, 'session', { sessionId: 's1', runId: 'r2' }))
        res.write(frame(5, 'message_delta', { messageId: 'm5', delta: '继续中的回答' }))
        res.write(': ping\n\n')
        res.write(frame(6, 'message', { messageId: 'm5', role: 'assistant', content: '继续中的回答' }))
        res.write(frame(7, 'done', { runId: 'r2', status: 'completed' }))
        // Left open, as the server does; the page closes it.
      },
    })
    expect(await screen.findByText('继续中的回答')).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByTestId('running')).toBeNull())
    // The watch stays open: a next run started elsewhere shows here too.
    expect(closed).toBe(false)
    expect(screen.getAllByTestId('message-user')).toHaveLength(2)
  })

  it('resumes a running session after the transcript\'s lastEventId instead of replaying from 0', async () => {
    let closed = false
    const tr = { ...transcript('s1', 'running'), lastEventId: 3 }
    const { srv } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, tr),
      'GET /api/interactions/pending': json(200, { pending: null, last: null }),
      'GET /api/sessions/s1/events': (req, res) => {
        // The watch stays open (the catch-up read from 0 is closed once read).
        if (req.headers['last-event-id'] !== undefined) res.on('close', () => (closed = true))
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        const after = Number(req.headers['last-event-id'] ?? 0)
        const all = [
          frame(1, 'session', { sessionId: 's1', runId: 'r1' }),
          frame(2, 'message', { messageId: 'm0', role: 'user', content: '帮我改代码' }),
          frame(3, 'tool_call', { toolCallId: 'call_1', name: 'ask_user', arguments: '{}' }),
          // A replayed overlap (same id as the transcript's last) is dropped.
          frame(3, 'message', { messageId: 'mx', role: 'assistant', content: '重复的旧事件' }),
          frame(4, 'message', { messageId: 'm2', role: 'assistant', content: '接着上次继续' }),
          frame(5, 'done', { runId: 'r1', status: 'completed' }),
        ]
        for (const f of all) if (Number(/^id: (\d+)/.exec(f)![1]) >= after) res.write(f)
      },
    })
    expect(await screen.findByText('接着上次继续')).toBeInTheDocument()
    await waitFor(() => expect(screen.queryByTestId('running')).toBeNull())
    expect(closed).toBe(false)
    const events = srv.requests.filter((r) => r.url.startsWith('/api/sessions/s1/events'))
    // One read from the start for a reply streaming now (none here: nothing
    // of it is shown), then the watch after lastEventId.
    expect(events.map((r) => r.headers['last-event-id'])).toEqual([undefined, '3'])
    expect(screen.queryByText('重复的旧事件')).toBeNull()
    expect(screen.getAllByTestId('message-user')).toHaveLength(1)
    expect(screen.queryByTestId('running')).toBeNull()
  })

  it('a 410 interaction_expired with error.receipt shows that receipt as 已超时', async () => {
    const resolvedAt = '2026-03-01T09:30:00Z'
    const { user } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'waiting_input', [{ request: request(), status: 'pending', receipt: null }])),
      'GET /api/interactions/pending': json(200, { pending: request(), last: null }),
      'POST /api/chat/continue': json(410, {
        error: { code: 'interaction_expired', message: 'expired', receipt: receipt({ status: 'expired', selections: [], resolvedAt }) },
      }),
    })
    const card = await screen.findByTestId('input-card')
    await user.click(within(card).getByLabelText(/先分析/))
    await user.click(within(card).getByTestId('submit'))
    expect(await screen.findByTestId('receipt')).toHaveAttribute('data-status', 'expired')
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('已超时')
    // The server's resolvedAt, not the request's expiresAt, is the 超时时间.
    expect(within(screen.getByTestId('receipt-time')).getByText((_, el) => el?.tagName === 'TIME')).toHaveAttribute('datetime', resolvedAt)
    expect(screen.queryByTestId('receipt-expires')).toBeNull()
  })

  it('shows session statuses as localized labels with a cue, in Chinese and English', async () => {
    const sessions = ['waiting_input', 'running', 'completed', 'cancelled', 'expired', 'failed', 'idle', 'mystery'].map((status, i) => ({
      id: `s${i}`,
      title: `会话 ${i}`,
      status,
      updatedAt: NOW,
    }))
    const { user } = await setup('/', { 'GET /api/sessions': json(200, { sessions }) })
    const zh = ['等待回答', '运行中', '已完成', '已取消', '已超时', '失败', '空闲', 'mystery']
    const en = ['Waiting for answer', 'Running', 'Completed', 'Cancelled', 'Timed out', 'Failed', 'Idle', 'mystery']
    for (const [i, s] of sessions.entries()) {
      const badge = await screen.findByTestId(`session-status-s${i}`)
      expect(badge).toHaveTextContent(zh[i])
      expect(badge).toHaveAttribute('data-status', s.status)
      expect(badge).toHaveClass(`status-${s.status}`)
      expect(badge.querySelector('.status-dot')).toHaveAttribute('aria-hidden', 'true')
    }
    expect(screen.getByTestId('session-list')).not.toHaveTextContent('waiting_input')
    await user.click(screen.getByTestId('lang-switch'))
    for (const i of sessions.keys()) expect(screen.getByTestId(`session-status-s${i}`)).toHaveTextContent(en[i])
  })

  it('a fresh page welcomes, and with a scripted model says the demo walks every question type', async () => {
    const { user } = await setup('/', {
      'POST /api/chat': sse(frame(1, 'session', { sessionId: 's9', runId: 'r1' }), frame(2, 'done', { runId: 'r1', status: 'completed' })),
    })
    const welcome = await screen.findByTestId('welcome')
    expect(welcome).toHaveTextContent('luban')
    expect(welcome).toHaveTextContent('问题卡片')
    expect(await screen.findByTestId('welcome-demo')).toHaveTextContent('scripted:demo')
    expect(screen.getByTestId('welcome-demo')).toHaveTextContent('发送任意消息开始演示')
    expect(screen.getByTestId('welcome-demo')).toHaveTextContent('批准两次写文件（luban-demo/deploy-plan.md 和 luban-demo/checklist.md），可以用“全部批准”一次批准')
    expect(screen.getByTestId('welcome-demo')).toHaveTextContent('一个 MCP 服务器的表单')
    await user.click(screen.getByTestId('lang-switch'))
    expect(screen.getByTestId('welcome-demo')).toHaveTextContent('Send any message to start the demo')
    expect(screen.getByTestId('welcome-demo')).toHaveTextContent('asks you to approve writing two files in one reply (luban-demo/deploy-plan.md and luban-demo/checklist.md), both at once with Approve all')
    expect(screen.getByTestId('welcome-demo')).toHaveTextContent('the form of an MCP server')
    await user.type(screen.getByTestId('composer'), 'hi{Enter}')
    await waitFor(() => expect(screen.queryByTestId('welcome')).toBeNull())
  })

  it('only the built-in demo (scripted:demo) gets the demo line, not another scripted scenario', async () => {
    await setup('/', { 'GET /api/info': json(200, { model: 'scripted:smoke', askTools: ['ask_user'] }) })
    expect(await screen.findByTestId('model-name')).toHaveTextContent('scripted:smoke')
    expect(screen.getByTestId('welcome')).toHaveTextContent('在下方输入消息开始')
    expect(screen.queryByTestId('welcome-demo')).toBeNull()
  })

  it('the welcome without a scripted model has no demo line, and an open session has no welcome', async () => {
    await setup('/', { 'GET /api/info': json(200, { model: 'openai:gpt-x', askTools: ['ask_user'] }) })
    expect(await screen.findByTestId('model-name')).toHaveTextContent('openai:gpt-x')
    expect(screen.getByTestId('welcome')).toHaveTextContent('在下方输入消息开始')
    expect(screen.queryByTestId('welcome-demo')).toBeNull()
    await userEvent.click(await screen.findByTestId('session-s1'))
    await waitFor(() => expect(screen.queryByTestId('welcome')).toBeNull())
  })

  it('drops a dead attempt\'s streaming bubble when the takeover\'s final message comes, and any unfinished one at done', async () => {
    // Each step() lets the server write the next part of the stream.
    const gates: (() => void)[] = []
    const steps = [0, 1, 2].map(() => new Promise<void>((r) => gates.push(r)))
    let n = 0
    const step = () => gates[n++]()
    const { user } = await setup('/', {
      'POST /api/chat': async (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
        res.write(frame(1, 'session', { sessionId: 's1', runId: 'r1' }))
        res.write(frame(2, 'message', { messageId: 'm0', role: 'user', content: '讲个故事' }))
        // The first process streamed part of the reply, then died (kill -9).
        res.write(frame(3, 'message_delta', { messageId: 'dead', delta: '从前有' }))
        await steps[0]
        // The next process took the run over and answered in full.
        res.write(frame(4, 'message_delta', { messageId: 'm1', delta: '从前有座山，' }))
        await steps[1]
        res.write(frame(5, 'message', { messageId: 'm1', role: 'assistant', content: '从前有座山，山里有座庙。' }))
        res.write(frame(6, 'tool_call', { toolCallId: 'call_2', name: 'read_file', arguments: '{}' }))
        res.write(frame(7, 'tool_result', { toolCallId: 'call_2', name: 'read_file', content: 'x', isError: false }))
        // A second turn starts streaming, and the run is cancelled mid-reply:
        // no final message; the page keeps the text it showed.
        res.write(frame(8, 'message_delta', { messageId: 'm2', delta: '半句' }))
        await steps[2]
        res.write(frame(9, 'done', { runId: 'r1', status: 'cancelled' }))
        res.end()
      },
    })
    await user.type(await screen.findByTestId('composer'), '讲个故事{Enter}')
    expect(await screen.findByText('从前有')).toBeInTheDocument()
    step()
    await waitFor(() => expect(screen.getAllByTestId('message-assistant')).toHaveLength(2))
    step()
    await waitFor(() => expect(screen.getByText('半句')).toBeInTheDocument())
    const shown = screen.getAllByTestId('message-assistant')
    expect(shown.map((m) => m.getAttribute('data-message-id'))).toEqual(['m1', 'm2'])
    expect(shown[0]).toHaveTextContent('从前有座山，山里有座庙。')
    step()
    // Stopped mid-reply (the run was cancelled): the text so far stays,
    // marked stopped; only a dead attempt's bubble goes.
    await waitFor(() => expect(screen.getByTestId('message-stopped')).toBeInTheDocument())
    expect(screen.getByText('半句')).toBeInTheDocument()
    expect(screen.getAllByTestId('message-assistant').map((m) => m.getAttribute('data-message-id'))).toEqual(['m1', 'm2'])
    expect(screen.getAllByTestId('message-user')).toHaveLength(1)
  })

  it('a sign-in link with a rejected token: says so and what to do, in both languages, and drops the token from the address', async () => {
    const { user } = await setup('/?token=wrong', {
      'GET /api/info': json(401, { error: { code: 'unauthorized', message: 'authentication required' } }),
      'GET /api/sessions': json(401, { error: { code: 'unauthorized', message: 'authentication required' } }),
    })
    const box = await screen.findByTestId('unauthorized')
    expect(box).toHaveAttribute('data-reason', 'token_rejected')
    expect(within(box).getByRole('heading')).toHaveTextContent('令牌无效')
    expect(box).toHaveTextContent('服务器不接受这个链接里的令牌')
    expect(box).toHaveTextContent('luban serve 启动时')
    expect(box).not.toHaveTextContent('authentication required')
    expect(window.location.search).toBe('')
    expect(screen.queryByTestId('composer')).toBeNull()
    expect(screen.queryByTestId('new-session')).toBeNull()
    expect(screen.queryByTestId('inbox-button')).toBeNull()
    await user.click(screen.getByTestId('lang-switch'))
    expect(within(box).getByRole('heading')).toHaveTextContent('Token rejected')
    expect(box).toHaveTextContent('does not accept the token in this link')
    expect(box).toHaveTextContent('Open the URL that luban serve printed')
  })

  it('the header shows a placeholder, not the session id, until the title is known', async () => {
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    await setup('/s/sess_raw_id_123', {
      'GET /api/sessions': json(200, { sessions: [] }),
      'GET /api/sessions/sess_raw_id_123': async (_req, res) => {
        await gate
        const tr = transcript('sess_raw_id_123', 'completed')
        res.writeHead(200, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ ...tr, session: { ...tr.session, title: '部署计划' }, messages: [] }))
      },
      'GET /api/sessions/sess_raw_id_123/events': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      },
    })
    const header = await screen.findByTestId('session-header')
    expect(within(header).getByTestId('session-title-loading')).toHaveAttribute('aria-busy', 'true')
    expect(header).not.toHaveTextContent('sess_raw_id_123')
    release()
    await waitFor(() => expect(within(header).getByRole('heading')).toHaveTextContent('部署计划'))
    expect(screen.queryByTestId('session-title-loading')).toBeNull()
  })

  it('every English button label is in sentence case', async () => {
    const { user } = await setup('/s/s1', {
      'GET /api/sessions/s1': json(200, transcript('s1', 'waiting_input', [{ request: request({ submitLabel: undefined }), status: 'pending', receipt: null }])),
      'GET /api/sessions/s1/events': (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/event-stream' })
      },
    })
    await screen.findByTestId('input-card')
    await user.click(screen.getByTestId('lang-switch'))
    await user.click(screen.getByTestId('cancel'))
    const labels = screen.getAllByRole('button').map((b) => b.textContent?.trim() ?? '')
    expect(labels).toEqual(expect.arrayContaining(['New session', 'Accept recommended: 先分析', 'Keep answering', 'Cancel the task', 'Submit']))
    for (const l of labels.filter((l) => /^[a-z]/i.test(l))) expect(l, l).toMatch(/^[A-Z]/)
  })

  it('asks to open the printed URL on 401, and switches to English', async () => {
    const { user } = await setup('/', {
      'GET /api/info': json(401, { error: { code: 'unauthorized', message: 'no' } }),
      'GET /api/sessions': json(401, { error: { code: 'unauthorized', message: 'no' } }),
    })
    expect(await screen.findByTestId('unauthorized')).toHaveTextContent('请打开服务器启动时打印的网址')
    await user.click(screen.getByTestId('lang-switch'))
    expect(screen.getByTestId('unauthorized')).toHaveTextContent('open the URL printed by the server')
    expect(screen.getByTestId('theme-toggle')).toHaveTextContent('Theme: system')
    expect(document.documentElement.lang).toBe('en')
  })
})

describe('a chat message over the bound', () => {
  async function page(lang: 'zh' | 'en', body: unknown) {
    window.history.replaceState(null, '', '/')
    const srv = await startServer({
      'GET /api/info': json(200, { model: 'openai:gpt-4o-mini', askTools: ['ask_user'] }),
      'GET /api/agents': json(200, { agents: [] }),
      'GET /api/sessions': json(200, { sessions: [] }),
      'POST /api/chat': json(413, body),
    })
    render(<App api={new Api({ base: srv.base, retryDelayMs: 1, maxRetries: 1 })} initialLang={lang} />)
    return { srv, user: userEvent.setup() }
  }
  const withDetails = {
    error: {
      code: 'payload_too_large',
      message: 'payload too large: message is longer than 32000 characters',
      details: [{ field: 'message', code: 'too_long', message: 'too long', params: { max: 32000, got: 40000, unit: 'characters' } }],
    },
  }

  it('counts from 90 % of 32,000 and says the refusal by the composer with its bound and the verb Send', async () => {
    const { srv, user } = await page('zh', withDetails)
    const composer = await screen.findByTestId('composer')
    const { fireEvent } = await import('@testing-library/react')
    fireEvent.change(composer, { target: { value: '长'.repeat(28_799) } })
    expect(screen.queryByTestId('text-counter')).toBeNull()
    fireEvent.change(composer, { target: { value: '长'.repeat(40_000) } })
    expect(screen.getByTestId('text-counter')).toHaveTextContent('40,000 / 32,000 字，超出 8,000 字')
    await user.click(screen.getByTestId('send'))
    const err = await screen.findByTestId('composer-error')
    expect(err).toHaveTextContent('消息太长了，最多 32,000 个字；请删减后再发送')
    expect(err).toHaveAttribute('role', 'alert')
    expect(err.closest('form')).toBe(composer.closest('form'))
    expect(composer).toHaveValue('长'.repeat(40_000))
    expect(composer).toHaveAttribute('aria-invalid', 'true')
    expect(composer.getAttribute('aria-describedby')).toContain('composer-error')
    // Not in the transcript, and never the cards' "submit".
    expect(screen.queryByTestId('notice')).toBeNull()
    expect(document.body.textContent).not.toContain('提交')
    expect(srv.requests.filter((r) => r.url === '/api/chat')).toHaveLength(1)
    // Editing the text takes the error away.
    fireEvent.change(composer, { target: { value: '短' } })
    expect(screen.queryByTestId('composer-error')).toBeNull()
  })

  it('in English, and without details (an older server): the sentence without a number', async () => {
    await page('en', { error: { code: 'payload_too_large', message: 'payload too large' } })
    const composer = await screen.findByTestId('composer')
    const { fireEvent } = await import('@testing-library/react')
    fireEvent.change(composer, { target: { value: 'x'.repeat(31_000) } })
    expect(screen.getByTestId('text-counter')).toHaveTextContent('31,000 / 32,000 characters')
    fireEvent.change(composer, { target: { value: 'x'.repeat(33_000) } })
    fireEvent.click(screen.getByTestId('send'))
    expect(await screen.findByTestId('composer-error')).toHaveTextContent(/^The message is too long; shorten it and send again$/)
    expect(document.body.textContent).not.toMatch(/submit/i)
  })
})
