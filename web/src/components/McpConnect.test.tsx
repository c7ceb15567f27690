import { render, screen, waitFor } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { Api, LangContext } from 'luban-react'
import { json, startServer } from '../../packages/luban-react/src/test/server'
import { McpConnect } from './McpConnect'

describe('McpConnect', () => {
  it('shows one Connect link per MCP server waiting for the caller, as text, and only luban start links', async () => {
    const srv = await startServer({
      'GET /api/mcp/authorizations': json(200, {
        authorizations: [
          { server: 'github', since: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:10:00Z', connectUrl: '/oauth/start/github' },
          { server: '<b>x</b>', since: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:10:00Z', connectUrl: '/oauth/start/%3Cb%3Ex%3C%2Fb%3E' },
          { server: 'evil', since: '2026-01-01T00:00:00Z', expiresAt: '2026-01-01T00:10:00Z', connectUrl: 'javascript:alert(1)' },
        ],
      }),
    })
    render(
      <LangContext.Provider value="en">
        <McpConnect api={new Api({ base: srv.base, retryDelayMs: 1, maxRetries: 1 })} />
      </LangContext.Provider>,
    )
    const link = await screen.findByTestId('mcp-connect-link-github')
    expect(link).toHaveTextContent('Connect github')
    expect(link).toHaveAttribute('href', '/oauth/start/github')
    expect(screen.getByTestId('mcp-connect-github')).toHaveTextContent('The MCP server github needs your authorization')
    expect(screen.getByTestId('mcp-connect-link-<b>x</b>')).toHaveTextContent('Connect <b>x</b>')
    expect(screen.queryByTestId('mcp-connect-evil')).toBeNull()
    expect(screen.getByRole('region', { name: 'MCP servers waiting for authorization' })).toBeInTheDocument()
  })

  it('renders nothing when no server waits, or the read fails', async () => {
    for (const route of [json(200, { authorizations: [] }), json(404, { error: { code: 'not_found', message: 'x' } })]) {
      const srv = await startServer({ 'GET /api/mcp/authorizations': route })
      const { container, unmount } = render(
        <LangContext.Provider value="zh">
          <McpConnect api={new Api({ base: srv.base, retryDelayMs: 1, maxRetries: 1 })} />
        </LangContext.Provider>,
      )
      await waitFor(() => expect(srv.requests.some((r) => r.url === '/api/mcp/authorizations')).toBe(true))
      expect(container).toBeEmptyDOMElement()
      unmount()
    }
  })
})
