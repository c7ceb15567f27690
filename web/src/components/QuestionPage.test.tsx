import { render, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { Api, LangContext } from 'luban-react'
import { QuestionPage, questionFromPath } from './QuestionPage'

const FUTURE = new Date(Date.now() + 3600_000).toISOString()
const request = {
  id: 'ask_1', toolCallId: 'call_1', sessionId: 'sess_1', runId: 'run_1', tool: 'ask_user', mode: 'single', title: 'Which environment?',
  options: [{ id: 'dev', label: 'Dev' }, { id: 'prod', label: 'Prod' }], createdAt: new Date().toISOString(), expiresAt: FUTURE, resumable: true,
  source: { kind: 'mcp', client: 'claude-code', clientVersion: '2.1.0' },
}

function respond(status: number, body: unknown) {
  return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } })
}

afterEach(() => vi.restoreAllMocks())

function show() {
  return render(
    <LangContext.Provider value="en">
      <QuestionPage api={new Api()} requestId="ask_1" />
    </LangContext.Provider>,
  )
}

describe('/q/{requestId}', () => {
  it('parses only /q/{id}', () => {
    expect(questionFromPath('/q/ask_1')).toBe('ask_1')
    expect(questionFromPath('/q/')).toBeUndefined()
    expect(questionFromPath('/q/a/b')).toBeUndefined()
    expect(questionFromPath('/s/x')).toBeUndefined()
  })

  it('shows just that question with who asked, answers it there and shows the receipt', async () => {
    const calls: [string, RequestInit | undefined][] = []
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const url = String(input)
      calls.push([url, init])
      if (url === '/api/interactions/ask_1') return respond(200, { request, status: 'pending', receipt: null })
      if (url === '/api/chat/continue')
        return respond(202, { receipt: { requestId: 'ask_1', toolCallId: 'call_1', status: 'answered', selections: ['prod'], customInput: '', resolvedAt: new Date().toISOString() } })
      return respond(404, { error: { code: 'not_found', message: url } })
    })
    show()
    expect(await screen.findByRole('heading', { name: 'Which environment?' })).toBeInTheDocument()
    expect(screen.getByTestId('question-source')).toHaveTextContent('Asked by claude-code 2.1.0 over MCP')
    expect(screen.getByTestId('question-session')).toHaveAttribute('href', '/s/sess_1')
    const user = userEvent.setup()
    await user.click(screen.getByTestId('option-prod'))
    await user.click(screen.getByTestId('submit'))
    expect(await screen.findByTestId('receipt')).toHaveAttribute('data-status', 'answered')
    const sent = calls.find(([u]) => u === '/api/chat/continue')![1]!
    expect(JSON.parse(String(sent.body))).toMatchObject({ sessionId: 'sess_1', requestId: 'ask_1', selections: ['prod'], cancelled: false })
    expect(screen.queryByTestId('run-status')).toBeNull()
  })

  it('shows a resolved question as its receipt', async () => {
    vi.spyOn(globalThis, 'fetch').mockResolvedValue(
      respond(200, { request, status: 'cancelled', receipt: { requestId: 'ask_1', toolCallId: 'call_1', status: 'cancelled', selections: [], customInput: '', resolvedAt: new Date().toISOString() } }),
    )
    show()
    expect(await screen.findByTestId('receipt')).toHaveAttribute('data-status', 'cancelled')
    expect(screen.queryByTestId('submit')).toBeNull()
  })

  it("says not found for another principal's or an unknown question", async () => {
    vi.spyOn(globalThis, 'fetch').mockResolvedValue(respond(404, { error: { code: 'interaction_not_found', message: 'interaction not found' } }))
    show()
    await waitFor(() => expect(screen.getByTestId('question-error')).toHaveAttribute('data-code', 'interaction_not_found'))
    expect(screen.getByTestId('question-error')).toHaveTextContent('not found')
    expect(screen.queryByTestId('input-card')).toBeNull()
  })
})
