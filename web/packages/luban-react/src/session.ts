// One session as a chat shows it, as a pure reducer: transcript, pending
// restore and SSE events all fold into one list of items (useLubanSession
// holds it). Entities are keyed by their own ids (messageId, toolCallId,
// requestId) so a replayed event or a transcript overlap never shows
// anything twice.
import { splitBatchFailure } from './batch'
import { expiredReceipt, failCard, newCard, resolvedCard, type CardFailure, type CardItem } from './card'
import { isInputRequest, type SSEEvent } from './sse'
import type { Answer, EventName, FieldError, EventPayloads, InputRequest, Pending, Receipt, RunStatus, Transcript } from './types'

/** MessageItem is a user or assistant message; streaming while deltas arrive. */
export type MessageItem = {
  kind: 'message'
  key: string
  id: string
  /**
   * stopped marks an assistant reply cut by the user's stop: the text
   * streamed until then, as the server stores it (message.stopped).
   */
  stopped?: boolean
  role: 'user' | 'assistant'
  content: string
  /** reasoning is the model's thinking, shown folded, never part of content. */
  reasoning?: string
  streaming?: boolean
  local?: boolean
}

/** ToolItem is one tool call and, once it came, its result. */
export type ToolItem = {
  kind: 'tool'
  key: string
  toolCallId: string
  name: string
  /** arguments is the JSON text the model sent; undefined when unknown. */
  arguments?: string
  result?: { content: string; isError: boolean }
}

/**
 * NoticeItem is a line from the client itself: a failure (code an API error
 * code, `network` or `stream_lost`; status, message and details as the
 * server sent them, message English, for errorText to word), or a run's end
 * (code `run_<status>`, shown once, after the last run). context `load` marks
 * a session that could not be read (GET /api/sessions/{id} failed).
 */
export type NoticeItem = {
  kind: 'notice'
  key: string
  level: 'error' | 'info'
  code: string
  message: string
  status?: number
  details?: FieldError[]
  context?: 'load'
}

/**
 * RunErrorItem is why a run failed, a transcript entry of its own (live
 * from the `error` event, after a reload from the transcript's errors).
 * retryText is the run's user message, sent again by the retry action.
 */
export type RunErrorItem = { kind: 'run_error'; key: string; runId: string; code: string; message: string; retryText?: string }

/** Item is one row of the chat view. */
export type Item = MessageItem | ToolItem | CardItem | NoticeItem | RunErrorItem

/**
 * SessionState is one session as a chat shows it: its items in order,
 * whether a run is active, and lastEventId, the highest event id applied
 * (the transcript's lastEventId at first). batchError is why the last
 * batch answer did not land when the failure named none of its requests
 * (a network error, a 5xx, a refusal of the whole body); a failure that
 * names a request is shown on that request's card instead.
 */
export type SessionState = { sessionId?: string; runId?: string; running: boolean; items: Item[]; lastEventId: number; batchError?: CardFailure }

/** SessionAction is everything that changes SessionState. */
export type SessionAction =
  | { type: 'reset'; sessionId?: string }
  | { type: 'transcript'; transcript: Transcript }
  | { type: 'pending'; pending: Pending }
  | { type: 'event'; event: SSEEvent }
  | { type: 'localUser'; text: string }
  | { type: 'localFailed'; text: string }
  | { type: 'running'; running: boolean }
  | { type: 'cardSubmitting'; requestId: string; answer?: Answer }
  | { type: 'cardAnswered'; receipt: Receipt }
  | { type: 'cardFailed'; requestId: string; error: CardFailure }
  | { type: 'batchSubmitting'; entries: { requestId: string; answer: Answer }[] }
  | { type: 'batchAnswered'; requestIds: string[]; receipts: Receipt[] }
  | { type: 'batchFailed'; requestIds: string[]; error: CardFailure }
  | { type: 'cardExpired'; requestId: string }
  | { type: 'notice'; notice: Omit<NoticeItem, 'kind' | 'key'> }

/** emptySession is a new session before its first message. */
export const emptySession: SessionState = { running: false, items: [], lastEventId: 0 }

let seq = 0
const key = (p: string) => `${p}-${++seq}`

/** insertCard puts a card right after its tool call, or at the end. */
function insertCard(items: Item[], card: CardItem): Item[] {
  const at = items.findIndex((i) => i.kind === 'tool' && i.toolCallId === card.request.toolCallId)
  if (at < 0) return [...items, card]
  return [...items.slice(0, at + 1), card, ...items.slice(at + 1)]
}

function updateCard(items: Item[], requestId: string, f: (c: CardItem) => CardItem): Item[] {
  return items.map((i) => (i.kind === 'input' && i.request.id === requestId ? f(i) : i))
}

function resolveCard(items: Item[], rec: Receipt): Item[] {
  return updateCard(items, rec.requestId, (c) => resolvedCard(c, rec))
}

/** isOpen reports whether a card still waits for its answer (editing, or its answer in flight). */
const isOpen = (i: Item): i is CardItem => i.kind === 'input' && (i.phase === 'editing' || i.phase === 'submitting')

/**
 * resumes reports whether items, after rec was applied, show a run going
 * on: an answer resolved the last open card (several questions of one
 * pause resume the run only when every one is resolved, docs/design.md
 * §17 "Batch"), else running stays as it was.
 */
function resumes(items: Item[], rec: { status?: unknown }, running: boolean): boolean {
  return rec.status === 'answered' && !items.some(isOpen) ? true : running
}

/**
 * pendingRequests are the requests of a GET /api/interactions/pending
 * answer: every pending request (`requests`, in call order), or the one
 * `pending` of a server that does not send `requests`; entries that fail
 * the minimal check (docs/design.md §A.3) are left out.
 */
function pendingRequests(p: Pending): InputRequest[] {
  // An older server sends no requests, whatever the type says.
  const all: unknown = p.requests
  if (Array.isArray(all)) return all.filter(isInputRequest)
  return p.pending && isInputRequest(p.pending) ? [p.pending] : []
}

const RUN_END = 'run_'

/**
 * withRunEnd puts the line naming how the last run ended at the end, once:
 * an earlier run's line goes (a reload shows only the session's status).
 */
function withRunEnd(items: Item[], status: string): Item[] {
  const rest = items.filter((i) => !(i.kind === 'notice' && i.code.startsWith(RUN_END)))
  if (!isRunStatus(status) || status === 'failed') return rest
  return [...rest, { kind: 'notice', key: key('done'), level: 'info', code: RUN_END + status, message: status }]
}

/** withoutRunEnd drops the last run's end line (a new run started). */
function withoutRunEnd(items: Item[]): Item[] {
  return items.some((i) => i.kind === 'notice' && i.code.startsWith(RUN_END)) ? items.filter((i) => !(i.kind === 'notice' && i.code.startsWith(RUN_END))) : items
}

/** lastUserText is the text of the last user message shown. */
function lastUserText(items: Item[]): string | undefined {
  for (let n = items.length - 1; n >= 0; n--) {
    const i = items[n]
    if (i.kind === 'message' && i.role === 'user') return i.content
  }
  return undefined
}

function fromTranscript(t: Transcript): Item[] {
  let items: Item[] = []
  // Where each run's entries end, and its first user message: a run's
  // error goes after its last entry and retries its user message.
  const runEnd = new Map<string, number>()
  const runUser = new Map<string, string>()
  for (const m of t.messages ?? []) {
    if (m.role === 'tool') {
      const result = { content: m.content, isError: !!m.isError }
      const at = items.findIndex((i) => i.kind === 'tool' && i.toolCallId === m.toolCallId)
      if (at >= 0) items = items.map((i, n) => (n === at ? { ...(i as ToolItem), result } : i))
      else items = [...items, { kind: 'tool', key: `tool-${m.toolCallId}`, toolCallId: m.toolCallId ?? '', name: m.name ?? '', result }]
      if (m.runId) runEnd.set(m.runId, Math.max(runEnd.get(m.runId) ?? -1, at >= 0 ? at : items.length - 1))
      continue
    }
    if (m.role === 'user' && m.runId && !runUser.has(m.runId)) runUser.set(m.runId, m.content)
    if (m.content || m.reasoning) {
      const item: MessageItem = { kind: 'message', key: `msg-${m.id}`, id: m.id, role: m.role, content: m.content }
      if (m.reasoning) item.reasoning = m.reasoning
      if (m.stopped) item.stopped = true
      items.push(item)
    }
    for (const tc of m.toolCalls ?? []) {
      items.push({ kind: 'tool', key: `tool-${tc.id}`, toolCallId: tc.id, name: tc.name, arguments: tc.arguments })
    }
    if (m.runId) runEnd.set(m.runId, items.length - 1)
  }
  const errors = (t.errors ?? [])
    .map((e) => ({ e, at: runEnd.get(e.runId) ?? items.length - 1 }))
    .sort((a, b) => b.at - a.at)
  for (const { e, at } of errors) {
    const item: RunErrorItem = { kind: 'run_error', key: `run-error-${e.runId}`, runId: e.runId, code: e.code, message: e.message }
    const retry = runUser.get(e.runId)
    if (retry) item.retryText = retry
    items = [...items.slice(0, at + 1), item, ...items.slice(at + 1)]
  }
  for (const it of t.interactions ?? []) {
    const card = newCard(it.request)
    if (it.status !== 'pending') {
      card.phase = 'resolved'
      card.receipt = it.receipt ?? expiredReceipt(it.request)
    }
    items = insertCard(items, card)
  }
  return withRunEnd(items, t.session?.status ?? '')
}

/**
 * dropDeadStreams removes assistant bubbles that are still streaming (their
 * `message_delta`s came, their final `message` did not) and stand before the
 * message `finalId`, or anywhere when `finalId` is absent or not shown yet
 * (a `done`, or a final message that gets appended). The event log keeps a
 * dead attempt's deltas after a takeover; the transcript does not.
 */
function dropDeadStreams(items: Item[], finalId?: string): Item[] {
  const at = finalId === undefined ? -1 : items.findIndex((i) => i.kind === 'message' && i.id === finalId)
  const end = at < 0 ? items.length : at
  const dead = (i: Item, n: number) => n < end && i.kind === 'message' && i.role === 'assistant' && i.streaming === true && i.id !== finalId
  return items.some(dead) ? items.filter((i, n) => !dead(i, n)) : items
}

/** stopStreams marks every still-streaming assistant bubble as stopped by the user. */
function stopStreams(items: Item[]): Item[] {
  return items.map((i) => (i.kind === 'message' && i.streaming ? { ...i, streaming: false, stopped: true } : i))
}

function isRunStatus(s: unknown): s is RunStatus {
  return s === 'completed' || s === 'cancelled' || s === 'expired' || s === 'failed'
}

/**
 * payload is an event's data as the generated payload type of its name
 * (types.gen.ts), every field optional: the page still checks what it uses,
 * since a frame may come from an older or a broken server.
 */
function payload<K extends EventName>(ev: SSEEvent, _name: K): Partial<EventPayloads[K]> {
  return (typeof ev.data === 'object' && ev.data !== null ? ev.data : {}) as Partial<EventPayloads[K]>
}

/** text is v when it is a string, else ''. */
const text = (v: unknown): string => (typeof v === 'string' ? v : '')

function applyEvent(s: SessionState, ev: SSEEvent): SessionState {
  switch (ev.event) {
    case 'session': {
      const d = payload(ev, 'session')
      return { ...s, sessionId: text(d.sessionId) || s.sessionId, runId: text(d.runId) || s.runId, running: true }
    }
    case 'message_delta': {
      const d = payload(ev, 'message_delta')
      const id = text(d.messageId)
      const cur = s.items.find((i): i is MessageItem => i.kind === 'message' && i.id === id)
      if (!cur) {
        const m: MessageItem = { kind: 'message', key: `msg-${id}`, id, role: 'assistant', content: text(d.delta), streaming: true }
        return { ...s, running: true, items: [...withoutRunEnd(s.items), m] }
      }
      if (!cur.streaming) return s
      return { ...s, items: s.items.map((i) => (i === cur ? { ...cur, content: cur.content + text(d.delta) } : i)) }
    }
    case 'reasoning_delta': {
      // A reasoning model's thinking as it streams: kept apart from the
      // text, on the same bubble, shown folded.
      const d = payload(ev, 'reasoning_delta')
      const id = text(d.messageId)
      const piece = text(d.delta)
      const cur = s.items.find((i): i is MessageItem => i.kind === 'message' && i.id === id)
      if (!cur) {
        const m: MessageItem = { kind: 'message', key: `msg-${id}`, id, role: 'assistant', content: '', reasoning: piece, streaming: true }
        return { ...s, items: [...s.items, m] }
      }
      if (!cur.streaming) return s
      return { ...s, items: s.items.map((i) => (i === cur ? { ...cur, reasoning: (cur.reasoning ?? '') + piece } : i)) }
    }
    case 'message': {
      const d = payload(ev, 'message')
      const id = text(d.messageId)
      const role = d.role
      if (role !== 'user' && role !== 'assistant') return s
      const content = text(d.content)
      const reasoning = role === 'assistant' ? text(d.reasoning) : ''
      const stopped = role === 'assistant' && d.stopped === true
      const withReasoning = (i: MessageItem): MessageItem => {
        const r = reasoning ? { ...i, reasoning } : i
        return stopped ? { ...r, stopped } : r
      }
      // A final assistant message ends every earlier streaming bubble that
      // never got its own: those are attempts that died (kill -9) before
      // another process took the run over, and a reload would not show them.
      // A user message starts a run (in this tab or another one).
      const base = role === 'assistant' ? { ...s, items: dropDeadStreams(s.items, id) } : { ...s, running: true, items: withoutRunEnd(s.items) }
      if (base.items.some((i) => i.kind === 'message' && i.id === id)) {
        return {
          ...base,
          items: base.items.map((i) => (i.kind === 'message' && i.id === id ? withReasoning({ ...i, content, streaming: false }) : i)),
        }
      }
      const local = base.items.findIndex((i) => i.kind === 'message' && i.local && i.role === role && i.content === content)
      const m: MessageItem = withReasoning({ kind: 'message', key: `msg-${id}`, id, role, content })
      if (local >= 0) return { ...base, items: base.items.map((i, n) => (n === local ? m : i)) }
      if (!content && !reasoning) return base
      return { ...base, items: [...base.items, m] }
    }
    case 'tool_call': {
      const d = payload(ev, 'tool_call')
      const id = text(d.toolCallId)
      if (s.items.some((i) => i.kind === 'tool' && i.toolCallId === id)) return s
      const t: ToolItem = { kind: 'tool', key: `tool-${id}`, toolCallId: id, name: text(d.name), arguments: text(d.arguments) }
      return { ...s, running: true, items: [...s.items, t] }
    }
    case 'tool_result': {
      const d = payload(ev, 'tool_result')
      const id = text(d.toolCallId)
      const result = { content: text(d.content), isError: d.isError === true }
      if (!s.items.some((i) => i.kind === 'tool' && i.toolCallId === id)) {
        const t: ToolItem = { kind: 'tool', key: `tool-${id}`, toolCallId: id, name: text(d.name), result }
        return { ...s, items: [...s.items, t] }
      }
      return { ...s, items: s.items.map((i) => (i.kind === 'tool' && i.toolCallId === id ? { ...i, result } : i)) }
    }
    case 'user_input_required': {
      // The minimal check (docs/design.md §A.3): nothing else is rendered.
      if (!isInputRequest(ev.data)) return s
      const r = ev.data
      if (s.items.some((i) => i.kind === 'input' && i.request.id === r.id)) {
        // The same request again: whom it waits for changed (an approval
        // towards a quorum, docs/design.md §16).
        const items = s.items.map((i) =>
          i.kind === 'input' && i.request.id === r.id ? { ...i, request: { ...i.request, assignees: r.assignees, waitingFor: r.waitingFor } } : i,
        )
        return { ...s, running: false, items }
      }
      return { ...s, running: false, items: insertCard(s.items, newCard(r)) }
    }
    case 'user_input_resolved': {
      const rec = payload(ev, 'user_input_resolved')
      if (typeof rec.requestId !== 'string') return s
      // An answer (any decision of an approval) to the last open question
      // resumes the run; a cancel or an expiry ends it (its done follows).
      const items = resolveCard(s.items, rec as Receipt)
      return { ...s, running: resumes(items, rec, s.running), items }
    }
    case 'done': {
      const status = text(payload(ev, 'done').status)
      // A run's end without a final message for a bubble: that text was
      // never committed as a message. When the user stopped the run, the
      // reply cut short stays shown, marked stopped (a server that stores
      // it sent its message, stopped, before done); otherwise it is a dead
      // attempt that another process took over, and goes.
      const items = status === 'cancelled' ? stopStreams(s.items) : dropDeadStreams(s.items)
      return { ...s, running: false, items: withRunEnd(items, status) }
    }
    case 'error': {
      const d = payload(ev, 'error')
      const runId = text(d.runId) || s.runId || ''
      const item: RunErrorItem = { kind: 'run_error', key: runId ? `run-error-${runId}` : key('err'), runId, code: text(d.code), message: text(d.message) }
      if (runId && s.items.some((i) => i.kind === 'run_error' && i.runId === runId)) return { ...s, running: false }
      const retry = lastUserText(s.items)
      if (retry) item.retryText = retry
      return { ...s, running: false, items: [...s.items, item] }
    }
    default:
      return s
  }
}

/**
 * answered applies the receipts of a 202 (one answer, or a batch's): each
 * resolves its card unless the session's stream brought it first; the
 * answer to the last open card resumes the run.
 */
function answered(s: SessionState, receipts: Receipt[]): SessionState {
  let items = s.items
  let running = s.running
  for (const rec of receipts) {
    const c = items.find((i): i is CardItem => i.kind === 'input' && i.request.id === rec.requestId)
    if (!c || c.phase === 'resolved') continue
    items = resolveCard(items, rec)
    running = resumes(items, rec, running)
  }
  return items === s.items ? s : { ...s, running, items }
}

/** reduceSession is the reducer of SessionState. */
export function reduceSession(s: SessionState, a: SessionAction): SessionState {
  switch (a.type) {
    case 'reset':
      return { running: false, items: [], sessionId: a.sessionId, lastEventId: 0 }
    case 'transcript':
      return {
        ...s,
        batchError: undefined,
        lastEventId: a.transcript.lastEventId ?? 0,
        sessionId: a.transcript.session?.id ?? s.sessionId,
        running: a.transcript.session?.status === 'running',
        items: fromTranscript(a.transcript),
      }
    case 'pending': {
      let items = s.items
      for (const p of pendingRequests(a.pending)) {
        const has = items.some((i) => i.kind === 'input' && i.request.id === p.id)
        items = has
          ? updateCard(items, p.id, (c) =>
              c.phase === 'resolved' ? c : { ...c, request: p, phase: p.resumable === false ? 'not_resumable' : c.phase },
            )
          : insertCard(items, newCard(p))
      }
      const last = a.pending.last
      if (last && typeof last.requestId === 'string') {
        if (!items.some((i) => i.kind === 'input' && i.request.id === last.requestId)) {
          // A receipt whose request this page never saw: a card that only
          // shows the receipt.
          const r: InputRequest = {
            id: last.requestId,
            toolCallId: last.toolCallId,
            sessionId: s.sessionId ?? '',
            runId: '',
            tool: 'ask_user',
            title: '',
            mode: 'single',
            createdAt: last.resolvedAt,
            expiresAt: last.resolvedAt,
            resumable: true,
          }
          items = insertCard(items, newCard(r))
        }
        items = resolveCard(items, last)
      }
      return { ...s, items }
    }
    case 'event': {
      const next = applyEvent(s, a.event)
      const id = a.event.id
      return id !== null && id > next.lastEventId ? { ...next, lastEventId: id } : next
    }
    case 'localUser':
      return {
        ...s,
        running: true,
        items: [...withoutRunEnd(s.items), { kind: 'message', key: key('local'), id: '', role: 'user', content: a.text, local: true }],
      }
    case 'localFailed': {
      // The server refused the message: it is not part of the session, so
      // its bubble goes (the composer gets the text back).
      let at = -1
      s.items.forEach((i, n) => {
        if (i.kind === 'message' && i.local === true && i.content === a.text) at = n
      })
      return at < 0 ? { ...s, running: false } : { ...s, running: false, items: s.items.filter((_, n) => n !== at) }
    }
    case 'running':
      return { ...s, running: a.running }
    case 'cardSubmitting':
      return {
        ...s,
        batchError: undefined,
        items: updateCard(s.items, a.requestId, (c) => ({ ...c, phase: 'submitting', error: undefined, lastAnswer: a.answer ?? c.lastAnswer })),
      }
    case 'cardAnswered':
      return answered(s, [a.receipt])
    case 'cardFailed':
      return { ...s, items: updateCard(s.items, a.requestId, (c) => failCard(c, a.error)) }
    case 'batchSubmitting': {
      // Every card of the batch is in flight at once; the batch's own
      // error goes (a new try).
      const by = new Map(a.entries.map((e) => [e.requestId, e.answer]))
      const items = s.items.map((i) => {
        const ans = i.kind === 'input' && i.phase === 'editing' ? by.get(i.request.id) : undefined
        return ans && i.kind === 'input' ? { ...i, phase: 'submitting' as const, error: undefined, fieldErrors: undefined, lastAnswer: ans } : i
      })
      return { ...s, batchError: undefined, items }
    }
    case 'batchAnswered': {
      // An entry the 202 has no receipt for was recorded without resolving
      // its request (an approval towards a quorum, docs/design.md §16): its
      // card is open again, as it stands at the server.
      const got = new Set(a.receipts.map((r) => r.requestId))
      const mine = new Set(a.requestIds.filter((id) => !got.has(id)))
      const next = answered(s, a.receipts)
      if (mine.size === 0) return next
      return { ...next, items: next.items.map((i) => (i.kind === 'input' && i.phase === 'submitting' && mine.has(i.request.id) ? { ...i, phase: 'editing' as const } : i)) }
    }
    case 'batchFailed': {
      // All or none: nothing changed at the server. The card a refusal
      // names shows it as a single answer's would be shown; every other
      // card of the batch is answerable again as it was.
      const { perCard, rest } = splitBatchFailure(a.requestIds, a.error)
      const mine = new Set(a.requestIds)
      const items = s.items.map((i) => {
        if (i.kind !== 'input' || !mine.has(i.request.id)) return i
        const f = perCard.get(i.request.id)
        if (f) return failCard(i, f)
        return i.phase === 'submitting' ? { ...i, phase: 'editing' as const } : i
      })
      return { ...s, items, batchError: rest }
    }
    case 'cardExpired':
      return {
        ...s,
        items: updateCard(s.items, a.requestId, (c) =>
          c.phase === 'editing' ? { ...c, phase: 'resolved', receipt: expiredReceipt(c.request) } : c,
        ),
      }
    case 'notice':
      return { ...s, items: [...s.items, { ...a.notice, kind: 'notice', key: key('notice') }] }
  }
}
