// The MCP servers that wait for the signed-in person to authorize luban at
// their OAuth authorization server (docs/design.md §11, "OAuth"): a banner
// with one "Connect <server>" link each (GET /oauth/start/<server>, same
// origin: the browser goes to the authorization server and comes back to
// luban's callback). Read when the page opens, when it gets the focus again
// (back from the authorization server) and every 30 s. Server names come
// from the configuration and are rendered as text.
import { useEffect, useState } from 'react'
import { visible, type Api, type MCPAuthorization } from 'luban-react'
import { useLang, type Lang } from '../i18n'

const TEXT: Record<Lang, { label: string; needs: (s: string) => string; connect: (s: string) => string }> = {
  zh: {
    label: '需要授权的 MCP 服务器',
    needs: (s) => `MCP 服务器 ${s} 需要你授权后才能使用它的工具。`,
    connect: (s) => `连接 ${s}`,
  },
  en: {
    label: 'MCP servers waiting for authorization',
    needs: (s) => `The MCP server ${s} needs your authorization before its tools can be used.`,
    connect: (s) => `Connect ${s}`,
  },
}

/** POLL_MS is how often the list is read again while the page is open. */
const POLL_MS = 30_000

/** McpConnect renders nothing while no MCP server waits for the caller. */
export function McpConnect({ api }: { api: Api }) {
  const t = TEXT[useLang()]
  const [items, setItems] = useState<MCPAuthorization[]>([])
  useEffect(() => {
    let stopped = false
    const load = () =>
      api.mcpAuthorizations().then(
        // Only luban's own start links are followed (never another scheme).
        (a) => !stopped && setItems(a.filter((x) => x.connectUrl.startsWith('/oauth/start/'))),
        // A server without the endpoint, or a failed read, shows no banner.
        () => !stopped && setItems([]),
      )
    void load()
    const id = window.setInterval(load, POLL_MS)
    window.addEventListener('focus', load)
    return () => {
      stopped = true
      window.clearInterval(id)
      window.removeEventListener('focus', load)
    }
  }, [api])
  if (items.length === 0) return null
  return (
    <section className="mcp-connect" aria-label={t.label} data-testid="mcp-connect">
      {items.map((a) => (
        <p key={a.server} data-testid={`mcp-connect-${a.server}`}>
          {t.needs(visible(a.server))}{' '}
          <a href={a.connectUrl} data-testid={`mcp-connect-link-${a.server}`}>
            {t.connect(visible(a.server))}
          </a>
        </p>
      ))}
    </section>
  )
}
