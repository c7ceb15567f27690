import { describe, expect, it } from 'vitest'
import { Deduper, isInputRequest, readSSE, SSEParser, type SSEEvent } from './sse'

const enc = new TextEncoder()

function setup() {
  const text =
    ': ping\n\n' +
    'id: 1\nevent: session\ndata: {"sessionId":"s1","runId":"r1"}\n\n' +
    'id: 2\r\nevent: message_delta\r\ndata: {"messageId":"m1","delta":"你好，世界 🌏 ok"}\r\n\r\n' +
    ': ping\n' +
    'id: 3\nevent: message\ndata: {"messageId":"m1",\ndata: "role":"assistant","content":"多字节"}\n\n' +
    'id: 4\nevent: done\ndata: {"runId":"r1","status":"completed"}\n\n'
  const bytes = enc.encode(text)
  const all = (chunks: Uint8Array[]): SSEEvent[] => {
    const p = new SSEParser()
    const out: SSEEvent[] = []
    for (const c of chunks) out.push(...p.push(c))
    out.push(...p.end())
    return out
  }
  return { bytes, all }
}

describe('SSEParser', () => {
  it('parses whole frames, ignores comments, joins data lines', () => {
    const { bytes, all } = setup()
    const evs = all([bytes])
    expect(evs.map((e) => [e.id, e.event])).toEqual([
      [1, 'session'],
      [2, 'message_delta'],
      [3, 'message'],
      [4, 'done'],
    ])
    expect(evs[1].data).toEqual({ messageId: 'm1', delta: '你好，世界 🌏 ok' })
    expect(evs[2].data).toEqual({ messageId: 'm1', role: 'assistant', content: '多字节' })
  })

  it('gives the same events for every two-chunk split, mid-line and mid-character', () => {
    const { bytes, all } = setup()
    const want = all([bytes])
    for (let i = 1; i < bytes.length; i++) {
      expect(all([bytes.slice(0, i), bytes.slice(i)]), `split at ${i}`).toEqual(want)
    }
  })

  it('gives the same events when fed one byte at a time', () => {
    const { bytes, all } = setup()
    const chunks = Array.from(bytes, (b) => Uint8Array.of(b))
    expect(all(chunks)).toEqual(all([bytes]))
  })

  it('keeps a frame whose \\r\\n is split across chunks as one line break', () => {
    const p = new SSEParser()
    expect(p.push(enc.encode('id: 7\r'))).toEqual([])
    expect(p.push(enc.encode('\nevent: done\r\ndata: {}\r\n\r'))).toEqual([])
    expect(p.push(enc.encode('\n'))).toEqual([{ id: 7, event: 'done', data: {} }])
  })

  it('drops an unterminated last frame and frames without data', () => {
    const p = new SSEParser()
    expect(p.push(enc.encode('id: 1\nevent: x\n\nid: 2\nevent: done\ndata: {}'))).toEqual([])
    expect(p.end()).toEqual([])
  })
})

describe('isInputRequest (docs/design.md §A.3 minimal check)', () => {
  it('requires string id, toolCallId, title and mode', () => {
    const ok = { id: 'ask_1', toolCallId: 'call_1', title: 't', mode: 'single' }
    expect(isInputRequest(ok)).toBe(true)
    for (const k of ['id', 'toolCallId', 'title', 'mode'] as const) {
      expect(isInputRequest({ ...ok, [k]: undefined }), k).toBe(false)
      expect(isInputRequest({ ...ok, [k]: 1 }), k).toBe(false)
    }
    expect(isInputRequest(null)).toBe(false)
    expect(isInputRequest('x')).toBe(false)
  })
})

describe('Deduper', () => {
  it('accepts each id once and in increasing order only', () => {
    const d = new Deduper()
    const ev = (id: number | null): SSEEvent => ({ id, event: 'x', data: {} })
    expect([1, 2, 2, 1, 3].map((n) => d.accept(ev(n)))).toEqual([true, true, false, false, true])
    expect(d.accept(ev(null))).toBe(true)
    expect(d.last).toBe(3)
  })
})

describe('readSSE', () => {
  it('reads a ReadableStream split mid-character and stops when asked', async () => {
    const bytes = enc.encode('id: 1\nevent: a\ndata: "é"\n\nid: 2\nevent: b\ndata: 2\n\nid: 3\nevent: c\ndata: 3\n\n')
    let cancelled = false
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        // Split inside "é", then end right after frame b; the stream stays
        // open like a subscription, so only stopping ends the read.
        const e = bytes.indexOf(0xc3)
        const b3 = bytes.length - enc.encode('id: 3\nevent: c\ndata: 3\n\n').length
        c.enqueue(bytes.slice(0, e + 1))
        c.enqueue(bytes.slice(e + 1, b3))
      },
      cancel() {
        cancelled = true
      },
    })
    const seen: SSEEvent[] = []
    await readSSE(body, (ev) => {
      seen.push(ev)
      return ev.event === 'b'
    })
    expect(seen.map((e) => e.data)).toEqual(['é', 2])
    expect(cancelled).toBe(true)
  })
})
