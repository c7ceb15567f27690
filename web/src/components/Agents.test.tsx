import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { Api, type AgentView } from 'luban-react'
import { App } from '../App'
import { frame, json, sse, startServer } from '../../packages/luban-react/src/test/server'

const NOW = '2026-03-01T08:00:00Z'

const helper: AgentView = { name: 'helper', model: 'openai:gpt-4o-mini', tools: ['ask_user', 'current_time'], askTools: ['ask_user'] }
const writer: AgentView = { name: 'writer', model: 'openai:gpt-4o', tools: ['ask_user', 'read_file', 'write_file'], askTools: ['ask_user'] }

async function setup(agents: AgentView[], path = '/', sessions: unknown[] = [], routes: Parameters<typeof startServer>[0] = {}) {
  window.history.replaceState(null, '', path)
  const srv = await startServer({
    'GET /api/info': json(200, { model: 'openai:gpt-4o-mini', askTools: ['ask_user'] }),
    'GET /api/agents': json(200, { agents }),
    'GET /api/sessions': json(200, { sessions }),
    'POST /api/chat': sse(
      frame(1, 'session', { sessionId: 's9', runId: 'r9' }),
      frame(2, 'message', { messageId: 'm0', role: 'user', content: '写计划' }),
      frame(3, 'message', { messageId: 'm1', role: 'assistant', content: '好的' }),
      frame(4, 'done', { runId: 'r9', status: 'completed' }),
    ),
    ...routes,
  })
  const api = new Api({ base: srv.base, retryDelayMs: 1, maxRetries: 1 })
  const user = userEvent.setup()
  render(<App api={api} initialLang="zh" />)
  const chats = () => srv.requests.filter((r) => r.method === 'POST' && r.url === '/api/chat').map((r) => r.body)
  return { srv, user, chats }
}

describe('agents on the page', () => {
  it('with two agents a new chat offers a picker, the default preselected, and sends the picked agent', async () => {
    const { srv, user, chats } = await setup([helper, writer])
    const picker = (await screen.findByTestId('agent-picker')) as HTMLSelectElement
    expect(screen.getByLabelText('智能体')).toBe(picker)
    expect(picker.value).toBe('helper')
    expect([...picker.options].map((o) => o.textContent)).toEqual(['helper (默认) · openai:gpt-4o-mini', 'writer · openai:gpt-4o'])
    expect(screen.getByTestId('agent-picker-tools')).toHaveTextContent('工具: ask_user, current_time')

    await user.selectOptions(picker, 'writer')
    expect(picker.value).toBe('writer')
    expect(screen.getByTestId('agent-picker-tools')).toHaveTextContent('ask_user, read_file, write_file')
    srv.route('GET /api/sessions', json(200, { sessions: [{ id: 's9', title: '写计划', status: 'completed', createdAt: NOW, updatedAt: NOW, agent: 'writer' }] }))
    await user.type(screen.getByTestId('composer'), '写计划{Enter}')
    await waitFor(() => expect(chats()).toEqual([{ message: '写计划', agent: 'writer' }]))

    // The open session names its agent in its header and in the list; a
    // session has no picker (it keeps its agent).
    const header = await screen.findByTestId('session-header')
    await waitFor(() => expect(within(header).getByTestId('session-agent')).toHaveTextContent('writer'))
    // The title comes with the session list, which the page reloads after
    // the run's first frame: wait for it rather than race it.
    await waitFor(() => expect(within(header).getByRole('heading')).toHaveTextContent('写计划'))
    expect(await screen.findByTestId('session-agent-s9')).toHaveTextContent('writer')
    expect(screen.queryByTestId('agent-picker')).toBeNull()

    // A new session starts from the picker again; sending without touching
    // it sends the default.
    await user.click(screen.getByTestId('new-session'))
    await user.selectOptions(await screen.findByTestId('agent-picker'), 'helper')
    await user.type(screen.getByTestId('composer'), '你好{Enter}')
    await waitFor(() => expect(chats()).toHaveLength(2))
    expect(chats()[1]).toEqual({ message: '你好', agent: 'helper' })
  })

  it('an existing session shows the agent it keeps, from its transcript before the list has it', async () => {
    await setup([helper, writer], '/s/s5', [], {
      'GET /api/sessions/s5': json(200, {
        session: { id: 's5', title: '旧会话', status: 'completed', createdAt: NOW, updatedAt: NOW, agent: 'writer' },
        lastEventId: 3,
        messages: [{ id: 'm0', runId: 'r1', role: 'user', content: 'hi', createdAt: NOW }],
        interactions: [],
      }),
      'GET /api/interactions/pending': json(200, { pending: null, last: null }),
    })
    const header = await screen.findByTestId('session-header')
    await waitFor(() => expect(within(header).getByTestId('session-agent')).toHaveAttribute('data-agent', 'writer'))
    expect(within(header).getByRole('heading')).toHaveTextContent('旧会话')
    expect(screen.queryByTestId('agent-picker')).toBeNull()
  })

  it('a host-written session title shows its bidi and control characters as markers in the header and the list', async () => {
    const title = 'Approve invoice \u202Egpj.exe\u0000'
    await setup([helper], '/s/s6', [{ id: 's6', title, status: 'waiting_input', createdAt: NOW, updatedAt: NOW, agent: 'helper' }], {
      'GET /api/sessions/s6': json(200, {
        session: { id: 's6', title, status: 'waiting_input', createdAt: NOW, updatedAt: NOW, agent: 'helper' },
        lastEventId: 1,
        messages: [],
        interactions: [],
      }),
      'GET /api/interactions/pending': json(200, { pending: null, last: null }),
    })
    const header = await screen.findByTestId('session-header')
    await waitFor(() => expect(within(header).getByRole('heading')).toHaveTextContent('Approve invoice ⟨U+202E⟩gpj.exe⟨U+0000⟩'))
    expect(await screen.findByTestId('session-s6')).toHaveTextContent('Approve invoice ⟨U+202E⟩gpj.exe⟨U+0000⟩')
  })

  it('with one agent there is no picker, no agent in the body, and no agent names', async () => {
    const { user, chats } = await setup([helper], '/', [{ id: 's1', title: '一', status: 'completed', createdAt: NOW, updatedAt: NOW, agent: 'helper' }])
    await screen.findByTestId('session-s1')
    expect(screen.queryByTestId('agent-picker')).toBeNull()
    expect(screen.queryByTestId('session-agent-s1')).toBeNull()
    await user.type(screen.getByTestId('composer'), '写计划{Enter}')
    await waitFor(() => expect(chats()).toEqual([{ message: '写计划' }]))
    await screen.findByTestId('session-header')
    expect(screen.queryByTestId('session-agent')).toBeNull()
  })

  it('a session of an agent no longer configured is named even with one agent', async () => {
    await setup([helper], '/', [{ id: 's2', title: '二', status: 'completed', createdAt: NOW, updatedAt: NOW, agent: 'retired' }])
    expect(await screen.findByTestId('session-agent-s2')).toHaveTextContent('retired')
  })

  it('an older server without GET /api/agents keeps the page working without a picker', async () => {
    const { user, chats } = await setup([])
    await user.type(screen.getByTestId('composer'), 'hi{Enter}')
    await waitFor(() => expect(chats()).toEqual([{ message: 'hi' }]))
    expect(screen.queryByTestId('agent-picker')).toBeNull()
  })
})
