// The principal's own event stream (docs/design.md §12): one GET /api/events per
// page, followed for as long as the page lives, reconnected with
// Last-Event-ID after every drop so no feed entry is lost or shown twice.
import { ApiError, Deduper, readSSE, type Api, type SSEEvent } from 'luban-react'

/** FeedHandlers receive what happens on the principal's stream. */
export type FeedHandlers = {
  /**
   * onOpen is called each time the stream is (re)opened, after the server
   * fixed its starting point: a list read then misses nothing the stream
   * will not bring.
   */
  onOpen: () => void
  /** onEvent gets each feed entry once, in feed order. */
  onEvent: (ev: SSEEvent) => void
}

/** FeedOptions tune the reconnects; the defaults suit the page. */
export type FeedOptions = {
  /** retryDelayMs is the first reconnect delay, doubled per failed attempt; default 500. */
  retryDelayMs?: number
  /** maxDelayMs caps the reconnect delay; default 30 000. */
  maxDelayMs?: number
}

/**
 * followFeed follows GET /api/events until signal aborts. A dropped or
 * refused (5xx, network) stream is reopened after a growing delay with the
 * last seen id; a 4xx answer (401 signed out, 404 an older server) ends it
 * by rejecting with that ApiError. It resolves when signal aborts.
 */
export async function followFeed(api: Api, h: FeedHandlers, signal: AbortSignal, opts: FeedOptions = {}): Promise<void> {
  const first = opts.retryDelayMs ?? 500
  const cap = opts.maxDelayMs ?? 30_000
  const dedupe = new Deduper()
  let failures = 0
  while (!signal.aborted) {
    try {
      const res = await api.principalEvents(dedupe.last, signal)
      failures = 0
      h.onOpen()
      if (res.body) {
        await readSSE(res.body, (ev) => {
          if (signal.aborted) return true
          if (dedupe.accept(ev)) h.onEvent(ev)
        })
      }
    } catch (e) {
      if (signal.aborted) return
      if (e instanceof ApiError && e.status < 500) throw e
    }
    if (signal.aborted) return
    failures++
    await sleep(Math.min(first * 2 ** Math.min(failures - 1, 16), cap), signal)
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms)
    signal.addEventListener('abort', () => {
      clearTimeout(t)
      resolve()
    })
  })
}
