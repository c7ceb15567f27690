// A real loopback HTTP server for component tests: each route answers with
// JSON or raw SSE bytes, and every request is recorded with its body.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach } from 'vitest'

/** Recorded is one request the server saw. */
export type Recorded = { method: string; url: string; headers: IncomingMessage['headers']; body: unknown }

/** Route answers one request; `body` is the parsed JSON body or null. */
export type Route = (req: IncomingMessage, res: ServerResponse, body: unknown) => void | Promise<void>

/** FakeServer is a started server with mutable routes. */
export type FakeServer = {
  base: string
  requests: Recorded[]
  route: (key: string, r: Route) => void
  close: () => Promise<void>
}

const servers: FakeServer[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()))
})

/** frame encodes one SSE frame (docs/design.md §3). */
export function frame(id: number, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`
}

/** json answers a JSON body with a status. */
export function json(status: number, body: unknown): Route {
  return (_req, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json' })
    res.end(JSON.stringify(body))
  }
}

/** sse answers a complete SSE stream made of frames. */
export function sse(...frames: string[]): Route {
  return (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
    for (const f of frames) res.write(f)
    res.end()
  }
}

/**
 * startServer listens on 127.0.0.1:0. Routes are keyed "METHOD /path"
 * (without the query); unknown routes answer 404 `not_found`.
 */
export async function startServer(routes: Record<string, Route> = {}): Promise<FakeServer> {
  const table = new Map(Object.entries(routes))
  const requests: Recorded[] = []
  const open = new Set<import('node:net').Socket>()
  const srv = createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const c of req) chunks.push(c as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    let body: unknown = null
    if (raw) body = JSON.parse(raw)
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body })
    const path = (req.url ?? '').split('?')[0]
    const r = table.get(`${req.method} ${path}`)
    if (!r) return json(404, { error: { code: 'not_found', message: path } })(req, res, body)
    await r(req, res, body)
  })
  srv.on('connection', (s) => {
    open.add(s)
    s.on('close', () => open.delete(s))
  })
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as AddressInfo
  const s: FakeServer = {
    base: `http://127.0.0.1:${port}`,
    requests,
    route: (k, r) => void table.set(k, r),
    close: () =>
      new Promise<void>((resolve) => {
        for (const sock of open) sock.destroy()
        srv.close(() => resolve())
      }),
  }
  servers.push(s)
  return s
}
