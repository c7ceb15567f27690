// A fetch-based Server-Sent Events client (issue 4 "SSE client"). EventSource
// cannot POST, so chat and continue streams are read from fetch bodies here.
// Frames are `id: <n>\nevent: <name>\ndata: <json>\n\n` (docs/design.md §3).
import type { InputRequest } from './types'

/** SSEEvent is one dispatched frame; `data` is the parsed JSON payload. */
export type SSEEvent = {
  /** The frame's `id:` as a number, or null when the frame had none. */
  id: number | null
  /** The `event:` name; "message" when the frame had none (SSE spec). */
  event: string
  /** The JSON-decoded data, or the raw string when it is not JSON. */
  data: unknown
}

/**
 * SSEParser turns byte chunks into events. A chunk may end anywhere: in the
 * middle of a line, between "\r" and "\n", or inside a multibyte UTF-8
 * character (the TextDecoder runs in stream mode). Comment lines such as the
 * heartbeat `: ping` are ignored.
 */
export class SSEParser {
  private decoder = new TextDecoder('utf-8')
  private buf = ''
  private id: string | null = null
  private event = ''
  private data: string[] = []

  /** push decodes one chunk and returns the events it completed. */
  push(chunk: Uint8Array): SSEEvent[] {
    this.buf += this.decoder.decode(chunk, { stream: true })
    return this.drain(false)
  }

  /** end flushes the decoder; an unterminated last frame is dropped (SSE spec). */
  end(): SSEEvent[] {
    this.buf += this.decoder.decode()
    return this.drain(true)
  }

  private drain(final: boolean): SSEEvent[] {
    const out: SSEEvent[] = []
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf)
      if (!m) break
      // A lone "\r" at the very end may be the first half of "\r\n".
      if (m[0] === '\r' && m.index === this.buf.length - 1 && !final) break
      const line = this.buf.slice(0, m.index)
      this.buf = this.buf.slice(m.index + m[0].length)
      const ev = this.line(line)
      if (ev) out.push(ev)
    }
    return out
  }

  private line(line: string): SSEEvent | null {
    if (line === '') return this.dispatch()
    if (line.startsWith(':')) return null
    const colon = line.indexOf(':')
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'id') this.id = value
    else if (field === 'event') this.event = value
    else if (field === 'data') this.data.push(value)
    return null
  }

  private dispatch(): SSEEvent | null {
    const hasData = this.data.length > 0
    const raw = this.data.join('\n')
    const name = this.event || 'message'
    const id = this.id
    this.event = ''
    this.data = []
    this.id = null
    if (!hasData) return null
    let data: unknown = raw
    try {
      data = JSON.parse(raw)
    } catch {
      // Not JSON: keep the raw text.
    }
    const n = id === null ? NaN : Number(id)
    return { id: Number.isFinite(n) ? n : null, event: name, data }
  }
}

/**
 * isInputRequest is the minimal check (docs/design.md §A.3): a
 * `user_input_required` payload is rendered only when `id`, `toolCallId`,
 * `title` and `mode` are strings.
 */
export function isInputRequest(data: unknown): data is InputRequest {
  if (typeof data !== 'object' || data === null) return false
  const d = data as Record<string, unknown>
  return (
    typeof d.id === 'string' &&
    typeof d.toolCallId === 'string' &&
    typeof d.title === 'string' &&
    typeof d.mode === 'string'
  )
}

/**
 * Deduper drops events already seen, by the per-session increasing event id
 * (docs/design.md §3). Events without an id always pass. `last` is the value for the
 * `Last-Event-ID` header of a reconnect.
 */
export class Deduper {
  /** last is the highest event id accepted so far; 0 before any. */
  last = 0

  /** accept reports whether ev is new, and records its id. */
  accept(ev: SSEEvent): boolean {
    if (ev.id === null) return true
    if (ev.id <= this.last) return false
    this.last = ev.id
    return true
  }
}

/**
 * readSSE reads a response body and calls onEvent for each event. When
 * onEvent returns true the rest of the current chunk is still delivered and
 * then reading stops (the body is cancelled), which ends a subscription that
 * would otherwise stay open. It resolves when the body ends or reading
 * stopped, and rejects when reading fails (a drop).
 */
export async function readSSE(
  body: ReadableStream<Uint8Array>,
  onEvent: (ev: SSEEvent) => boolean | void,
): Promise<void> {
  const parser = new SSEParser()
  const reader = body.getReader()
  for (;;) {
    const { done, value } = await reader.read()
    const events = done ? parser.end() : parser.push(value)
    let stop = false
    for (const ev of events) if (onEvent(ev)) stop = true
    if (done) return
    if (stop) {
      await reader.cancel().catch(() => undefined)
      return
    }
  }
}

/**
 * isTerminal reports whether an event ends a stream for the page: the run
 * paused (`user_input_required`) or ended (`done`, `error`).
 */
export function isTerminal(ev: SSEEvent): boolean {
  return ev.event === 'done' || ev.event === 'error' || ev.event === 'user_input_required'
}
