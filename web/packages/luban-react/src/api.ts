// The typed client of luban's HTTP API (docs/design.md §3). Every call sends the
// HttpOnly auth cookie (credentials: 'same-origin'); the page never sees the
// token. Streams reconnect through GET /api/sessions/{id}/events with
// Last-Event-ID after a drop, and a Deduper keeps every event shown once.
import { Deduper, isTerminal, readSSE, type SSEEvent } from './sse'
import type { AgentList, AgentView, MCPAuthorization, MCPAuthorizationList, Answer, ContinueAccepted, ContinueBatchRequest, DeleteResponse, FieldError, InboxStatus, Info, InputRequest, InteractionList, InteractionView, Pending, Receipt, SessionSummary, Transcript } from './types'

/**
 * ApiError is a JSON error answered before any stream started:
 * `{"error": {"code", "message", "details"?, "receipt"?, "pending"?}}`.
 */
export class ApiError extends Error {
  readonly status: number
  readonly code: string
  readonly details?: FieldError[]
  readonly receipt?: Receipt
  readonly pending?: InputRequest

  constructor(status: number, body: unknown) {
    const e = (body as { error?: Record<string, unknown> } | null)?.error ?? {}
    const code = typeof e.code === 'string' ? e.code : `http_${status}`
    super(typeof e.message === 'string' ? e.message : code)
    this.status = status
    this.code = code
    if (Array.isArray(e.details)) this.details = e.details as FieldError[]
    if (e.receipt && typeof e.receipt === 'object') this.receipt = e.receipt as Receipt
    if (e.pending && typeof e.pending === 'object') this.pending = e.pending as InputRequest
  }
}

/** StreamLostError means a stream dropped and every reconnect failed. */
export class StreamLostError extends Error {
  constructor() {
    super('stream lost')
  }
}

/** ApiOptions configures an Api; the zero value talks to the page's origin. */
export type ApiOptions = {
  /** base is prefixed to every path; default '' (same origin). */
  base?: string
  /** retryDelayMs is the first reconnect delay, doubled per attempt; default 500. */
  retryDelayMs?: number
  /** maxRetries is how many reconnects follow one drop; default 5. */
  maxRetries?: number
}

/** StreamHandlers receive the events of one stream, each at most once. */
export type StreamHandlers = {
  onEvent: (ev: SSEEvent) => void
  /** onReconnecting is told before each reconnect attempt (1-based). */
  onReconnecting?: (attempt: number) => void
}

/**
 * ChatBody is the body of POST /api/chat. agent names the agent of a new
 * session (GET /api/agents; docs/design.md §9); a session keeps its agent.
 */
export type ChatBody = { sessionId?: string; message: string; agent?: string }

/** ContinueBody is the body of POST /api/chat/continue (docs/design.md §A.2). */
export type ContinueBody = Answer & { sessionId: string; requestId: string }

/** Api is the page's client; one instance is shared by the whole page. */
export class Api {
  private base: string
  private retryDelayMs: number
  private maxRetries: number

  constructor(opts: ApiOptions = {}) {
    this.base = opts.base ?? ''
    this.retryDelayMs = opts.retryDelayMs ?? 500
    this.maxRetries = opts.maxRetries ?? 5
  }

  private async request(path: string, init: RequestInit = {}): Promise<Response> {
    const res = await fetch(this.base + path, { credentials: 'same-origin', ...init })
    if (!res.ok) {
      let body: unknown = null
      try {
        body = await res.json()
      } catch {
        // Not JSON: the status alone decides.
      }
      throw new ApiError(res.status, body)
    }
    return res
  }

  private async json<T>(path: string, init?: RequestInit): Promise<T> {
    const res = await this.request(path, { ...init, headers: { Accept: 'application/json', ...init?.headers } })
    return (await res.json()) as T
  }

  /** info is GET /api/info: the model name and the ask tools offered. */
  info(): Promise<Info> {
    return this.json('/api/info')
  }

  /** agents is GET /api/agents: the configured agents, the default first (docs/design.md §9). */
  async agents(): Promise<AgentView[]> {
    return (await this.json<AgentList>('/api/agents')).agents ?? []
  }

  /**
   * mcpAuthorizations is GET /api/mcp/authorizations: the MCP servers waiting
   * for the caller to authorize luban (docs/design.md §11, "OAuth"), each with
   * the same-origin connectUrl that starts it.
   */
  async mcpAuthorizations(): Promise<MCPAuthorization[]> {
    return (await this.json<MCPAuthorizationList>('/api/mcp/authorizations')).authorizations ?? []
  }

  /** sessions is GET /api/sessions, newest first. */
  async sessions(): Promise<SessionSummary[]> {
    return (await this.json<{ sessions: SessionSummary[] }>('/api/sessions')).sessions ?? []
  }

  /** session is GET /api/sessions/{id}: the transcript. */
  session(id: string): Promise<Transcript> {
    return this.json(`/api/sessions/${encodeURIComponent(id)}`)
  }

  /**
   * renameSession is PATCH /api/sessions/{id} {title}: the session with its
   * new title (whitespace collapsed by the server). 400 invalid_request for
   * an empty or over-long title, 404 session_not_found.
   */
  renameSession(id: string, title: string): Promise<SessionSummary> {
    return this.json(`/api/sessions/${encodeURIComponent(id)}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ title }),
    })
  }

  /**
   * deleteSession is DELETE /api/sessions/{id}: the session and everything of
   * it but its audit entries. While a run is active it rejects with 409
   * run_in_progress unless force, which cancels the run first (a waiting
   * question is cancelled as by the user).
   */
  deleteSession(id: string, force = false): Promise<DeleteResponse> {
    return this.json(`/api/sessions/${encodeURIComponent(id)}${force ? '?force=true' : ''}`, { method: 'DELETE' })
  }

  /** pending is GET /api/interactions/pending?sessionId= (docs/design.md §A.2 refresh). */
  pending(sessionId: string): Promise<Pending> {
    return this.json(`/api/interactions/pending?sessionId=${encodeURIComponent(sessionId)}`)
  }

  /**
   * interaction is GET /api/interactions/{requestId}: one question of the
   * caller (the request, its status, its receipt once resolved), as the
   * /q/{requestId} page shows it; 404 interaction_not_found for another
   * principal's or an unknown id.
   */
  interaction(requestId: string): Promise<InteractionView> {
    return this.json(`/api/interactions/${encodeURIComponent(requestId)}`)
  }

  /**
   * inbox is GET /api/interactions (docs/design.md §12): one page of the caller's
   * interactions across its sessions, pending oldest first or resolved most
   * recent first, at most limit (1–500); cursor is a previous page's next.
   */
  inbox(status: InboxStatus = 'pending', limit = 100, cursor?: string): Promise<InteractionList> {
    const q = new URLSearchParams({ status, limit: String(limit) })
    if (cursor) q.set(status === 'pending' ? 'after' : 'before', cursor)
    return this.json(`/api/interactions?${q}`)
  }

  /**
   * principalEvents opens GET /api/events, the caller's own stream across
   * its sessions (docs/design.md §12), after feed sequence number last when it is
   * above 0 (Last-Event-ID), else at the present. It rejects with ApiError
   * when the server refuses; the caller reads the body (readSSE).
   */
  principalEvents(last: number, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'text/event-stream' }
    if (last > 0) headers['Last-Event-ID'] = String(last)
    return this.request('/api/events', { headers, signal })
  }

  /** cancel is POST /api/sessions/{id}/cancel: stop the active run. */
  cancel(sessionId: string): Promise<{ status: string }> {
    return this.json(`/api/sessions/${encodeURIComponent(sessionId)}/cancel`, { method: 'POST' })
  }

  /**
   * answer is POST /api/chat/continue with Accept: application/json: the
   * server answers 202 with the receipt at once and the run continues
   * without the caller (follow the session's events to see it). A refusal
   * rejects with ApiError: 422 invalid_answer (details by field; the
   * request stays pending), 409 already_resolved (error.receipt), 410
   * interaction_expired / not_resumable, 404 interaction_not_found.
   */
  answer(body: ContinueBody): Promise<ContinueAccepted> {
    return this.json('/api/chat/continue', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  }

  /**
   * answerAll is the batch form of POST /api/chat/continue with Accept:
   * application/json: every entry answers one pending request of the
   * session, all in one transaction (docs/design.md §17 "Batch", §32). The
   * 202's receipts hold a receipt per entry, in entry order (null for one
   * recorded without resolving its request, a vote towards a quorum). A refusal changes nothing and rejects
   * with ApiError: 422 invalid_answer whose details name the entry by
   * field (`answers[1].decision`), 409 already_resolved (error.receipt of
   * the request no longer pending), 410, 404 as for a single answer.
   */
  answerAll(body: ContinueBatchRequest): Promise<ContinueAccepted> {
    return this.json('/api/chat/continue', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  }

  private post(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    return this.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal,
    })
  }

  private openEvents(sessionId: string, last: number, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'text/event-stream' }
    if (last > 0) headers['Last-Event-ID'] = String(last)
    return this.request(`/api/sessions/${encodeURIComponent(sessionId)}/events`, { headers, signal })
  }

  /**
   * streamedSoFar is the text a run still going streamed before its
   * transcript was read (a message joins the transcript only when it
   * commits): the message_delta and reasoning_delta events, up to event
   * upTo (the transcript's lastEventId), of messages not in `known` (the
   * transcript's message ids) since the last run boundary (session, done,
   * error: an earlier run's dead attempt is left out). It reads the
   * session's log from its start once, up to upTo, and stops.
   */
  async streamedSoFar(sessionId: string, upTo: number, known: ReadonlySet<string>, signal?: AbortSignal): Promise<SSEEvent[]> {
    const res = await this.openEvents(sessionId, 0, signal)
    let deltas: SSEEvent[] = []
    if (!res.body) return deltas
    await readSSE(res.body, (ev) => {
      if (ev.id !== null && ev.id > upTo) return true
      if (ev.event === 'session' || ev.event === 'done' || ev.event === 'error') deltas = []
      else if (ev.event === 'message_delta' || ev.event === 'reasoning_delta') {
        const id = (ev.data as { messageId?: unknown } | null)?.messageId
        if (typeof id === 'string' && !known.has(id)) deltas.push(ev)
      }
      return ev.id !== null && ev.id >= upTo
    })
    return deltas
  }

  /**
   * chat is POST /api/chat. It resolves when the run paused or ended and
   * rejects with ApiError before the stream, or StreamLostError after it.
   * The first event is `session {sessionId, runId}`.
   */
  chat(body: ChatBody, dedupe: Deduper, h: StreamHandlers, signal?: AbortSignal): Promise<void> {
    let sid = body.sessionId
    return this.run(
      () => this.post('/api/chat', body, signal),
      () => sid,
      dedupe,
      {
        ...h,
        onEvent: (ev) => {
          const d = ev.data as { sessionId?: unknown }
          if (ev.event === 'session' && typeof d?.sessionId === 'string') sid = d.sessionId
          h.onEvent(ev)
        },
      },
      signal,
    )
  }

  /** continueChat is POST /api/chat/continue; it starts with `user_input_resolved`. */
  continueChat(body: ContinueBody, dedupe: Deduper, h: StreamHandlers, signal?: AbortSignal): Promise<void> {
    return this.run(() => this.post('/api/chat/continue', body, signal), () => body.sessionId, dedupe, h, signal)
  }

  /**
   * subscribe follows GET /api/sessions/{id}/events until the run pauses or
   * ends. isEnd decides which event ends it (default isTerminal); a replay
   * from the start holds earlier runs' ends, which the caller can skip.
   */
  subscribe(
    sessionId: string,
    dedupe: Deduper,
    h: StreamHandlers,
    signal?: AbortSignal,
    isEnd: (ev: SSEEvent) => boolean = isTerminal,
  ): Promise<void> {
    return this.run(() => this.openEvents(sessionId, dedupe.last, signal), () => sessionId, dedupe, h, signal, true, isEnd)
  }

  /**
   * watch follows GET /api/sessions/{id}/events for as long as signal is
   * not aborted, whatever the events: a page watches its open session so
   * an answer, a question or a run started elsewhere (another tab, `luban
   * chat`) shows here too. Every (re)open sends Last-Event-ID = dedupe.last,
   * so nothing is lost or shown twice; a drop or a 5xx is retried after a
   * growing delay (capped at maxDelayMs, default 10 s). It resolves when
   * signal aborts and rejects with the ApiError of a 4xx answer (401,
   * 404 session_not_found).
   */
  async watch(sessionId: string, dedupe: Deduper, h: StreamHandlers & { onOpen?: () => void }, signal: AbortSignal, maxDelayMs = 10_000): Promise<void> {
    let failures = 0
    while (!signal.aborted) {
      try {
        const res = await this.openEvents(sessionId, dedupe.last, signal)
        failures = 0
        h.onOpen?.()
        if (res.body) {
          await readSSE(res.body, (ev) => {
            if (signal.aborted) return true
            if (dedupe.accept(ev)) h.onEvent(ev)
          })
        }
      } catch (e) {
        if (signal.aborted) return
        if (e instanceof ApiError && e.status < 500 && e.status !== 408) throw e
      }
      if (signal.aborted) return
      failures++
      h.onReconnecting?.(failures)
      try {
        await delay(Math.min(this.retryDelayMs * 2 ** Math.min(failures - 1, 16), maxDelayMs), signal)
      } catch {
        return
      }
    }
  }

  private async run(
    open: () => Promise<Response>,
    sessionId: () => string | undefined,
    dedupe: Deduper,
    h: StreamHandlers,
    signal?: AbortSignal,
    following = false,
    isEnd: (ev: SSEEvent) => boolean = isTerminal,
  ): Promise<void> {
    const first = await open()
    let res: Response | null = first
    let terminal = false
    let attempt = 0
    for (;;) {
      if (res?.body) {
        try {
          await readSSE(res.body, (ev) => {
            if (!dedupe.accept(ev)) {
              // Shown already by another stream of the page (its session
              // watch): still the end of this one.
              if (isEnd(ev)) terminal = true
              return terminal && (following || res !== first)
            }
            attempt = 0
            h.onEvent(ev)
            if (isEnd(ev)) terminal = true
            // POST streams end by themselves after the pause or end; a
            // subscription (or a reconnect) stays open and is closed here.
            return terminal && (following || res !== first)
          })
        } catch (e) {
          if (signal?.aborted) throw e
        }
      }
      if (terminal || signal?.aborted) return
      const sid = sessionId()
      if (!sid || attempt >= this.maxRetries) throw new StreamLostError()
      attempt++
      h.onReconnecting?.(attempt)
      await delay(this.retryDelayMs * 2 ** (attempt - 1), signal)
      try {
        res = await this.openEvents(sid, dedupe.last, signal)
      } catch (e) {
        if (e instanceof ApiError && e.status < 500) throw e
        if (signal?.aborted) throw e
        res = null
      }
    }
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener('abort', () => {
      clearTimeout(t)
      reject(signal.reason)
    })
  })
}
