// useLubanSession: one luban session for any React app, the luban page's
// own chat included. It reads the transcript (GET /api/sessions/{id}) and
// the pending request, then follows GET /api/sessions/{id}/events after the
// transcript's lastEventId for as long as the session is open (Last-Event-ID
// on every reconnect), so a message, a question, or an answer given in
// another tab or in `luban chat` shows here without a reload. It sends
// messages (POST /api/chat, streamed), answers (POST /api/chat/continue,
// Accept: application/json) and stops runs; every event is applied once
// (one Deduper for all streams) by the reducer in session.ts.
import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react'
import { Api, ApiError, StreamLostError, type ChatBody } from './api'
import type { CardFailure, CardItem } from './card'
import { emptySession, reduceSession, type Item, type NoticeItem, type SessionAction } from './session'
import { Deduper, type SSEEvent } from './sse'
import type { Answer, InputRequest, Receipt, Transcript } from './types'

/**
 * Connection is how the hook stands with the server: closed without a
 * session; loading until the transcript came; live while the session's
 * event stream is open; reconnecting after a drop (Last-Event-ID resumes
 * it, with a growing delay, for as long as the session is open); lost when
 * the server refused the session or its stream (error says why: an ApiError
 * such as 404 session_not_found or 401).
 */
export type Connection = 'loading' | 'live' | 'reconnecting' | 'lost' | 'closed'

/** LubanSessionOptions configures useLubanSession; every field is optional. */
export type LubanSessionOptions = {
  /** api is the client; default a same-origin Api (cookie auth). */
  api?: Api
  /** onEvent sees every event of the session once, in order, as the hook applies it. */
  onEvent?: (ev: SSEEvent) => void
  /**
   * onSession is told the id of the session a send created (the `session`
   * event of POST /api/chat without a sessionId), before the hook follows
   * it: an app puts it into its URL. Passing that id as sessionId afterwards
   * keeps the session as it is (no reload).
   */
  onSession?: (sessionId: string) => void
  /**
   * onError sees every failure first (a 401 to ask the user to sign in, say);
   * returning true means the app showed it, and the hook adds no notice
   * item (a card still shows its own error).
   */
  onError?: (e: unknown) => boolean | void
  /** onSettled is told when a send's stream ended: the run paused, ended, or the stream failed. */
  onSettled?: () => void
}

/** SendOptions are the options of a send. */
export type SendOptions = {
  /** agent names the agent of a new session (GET /api/agents); ignored in an existing one. */
  agent?: string
}

/** LubanSession is what useLubanSession returns. */
export type LubanSession = {
  /** sessionId is the session shown: the one passed, or the one a send created. */
  sessionId?: string
  /** session is the transcript's session (title, agent, status) once it came. */
  session?: Transcript['session']
  /** items are the session's messages, tool calls, cards, failures and the last run's end, in order. */
  items: Item[]
  /** running is true while a run is active and not waiting for an answer. */
  running: boolean
  /** cards are the session's questions, oldest first: open ones editable, resolved ones as receipts. */
  cards: CardItem[]
  /** pending are the requests still waiting for an answer (phase editing or submitting). */
  pending: InputRequest[]
  connection: Connection
  /** error is why the connection is lost. */
  error?: Error
  /** lastEventId is the id of the last event applied (the next Last-Event-ID). */
  lastEventId: number
  /**
   * send posts a message (POST /api/chat; a new session without one) and
   * shows it at once. It resolves when the stream ended, to false when the
   * server refused the message before its run started (409 while a run is
   * active or a question waits, a network failure): the message is then
   * not part of the session, so its bubble goes and a notice says why (the
   * app may give the text back to its composer); true otherwise, also when
   * the session was closed meanwhile. It never rejects.
   */
  send: (message: string, opts?: SendOptions) => Promise<boolean>
  /**
   * answer sends POST /api/chat/continue (Accept: application/json) for an
   * editing card and resolves once the server answered: the card then holds
   * the receipt (the run's events follow on the session's stream), or the
   * refusal (422 details by field and still editable; 409 the winner's
   * receipt; 410 expired or not resumable). A network failure or a 5xx
   * leaves the card editable with its error (code `network` or the
   * server's) and the answer kept for retry. It never rejects.
   */
  answer: (requestId: string, a: Answer) => Promise<void>
  /**
   * answerAll answers several editing cards of the session in one POST
   * /api/chat/continue {sessionId, answers: [{requestId, …answer}, …]}
   * (docs/design.md §17 "Batch": all or none). Every card is submitting
   * until the server answered; then each holds its receipt, or, on a
   * refusal (nothing changed at the server), the card the refusal names
   * shows it as a single answer's (422 details by field, 409 the winner's
   * receipt) and every other card is editable again; a failure that names
   * no card (network, 5xx) is batchError. Cards not editing are left out;
   * it never rejects.
   */
  answerAll: (entries: { requestId: string; answer: Answer }[]) => Promise<void>
  /** batchError is why the last answerAll did not land when its failure named no card. */
  batchError?: CardFailure
  /** retry sends a card's last answer again (a second landing is refused with the 409 receipt, shown as success). */
  retry: (requestId: string) => Promise<void>
  /** cancel answers requestId with `cancelled: true` (the run stops); like answer it never rejects. */
  cancel: (requestId: string) => Promise<void>
  /** expire shows an editing card as expired (UserInputCard's onExpire, when expiresAt passed). */
  expire: (requestId: string) => void
  /** stop cancels the active run (POST /api/sessions/{id}/cancel); a reply cut short stays shown, marked stopped. */
  stop: () => Promise<void>
  /** reload reads the session again from the server (after it changed outside the stream). */
  reload: () => void
}

/** failureOf is what a failed call threw, as a CardFailure. */
function failureOf(e: unknown): CardFailure {
  if (e instanceof ApiError) return { status: e.status, code: e.code, message: e.message, details: e.details, receipt: e.receipt }
  if (e instanceof StreamLostError) return { status: 0, code: 'stream_lost', message: '' }
  return { status: 0, code: 'network', message: e instanceof Error ? e.message : String(e) }
}

/** noticeOf is a failure as a notice item's fields. */
function noticeOf(e: unknown, context?: 'load'): Omit<NoticeItem, 'kind' | 'key'> {
  const f = failureOf(e)
  const n: Omit<NoticeItem, 'kind' | 'key'> = { level: 'error', code: f.code, message: f.message }
  if (f.status) n.status = f.status
  if (f.details) n.details = f.details
  if (context) n.context = context
  return n
}

const isAbort = (e: unknown) => e instanceof DOMException && e.name === 'AbortError'

/** CATCH_UP_MS bounds the read of a streaming reply's text so far (Api.streamedSoFar). */
const CATCH_UP_MS = 5000

/**
 * useLubanSession follows one luban session and exposes it with send,
 * answer, cancel and stop. sessionId undefined means a new session (nothing
 * is read until a send creates it). Changing sessionId starts over, except
 * to the id a send just created; unmounting closes every stream.
 */
export function useLubanSession(sessionId: string | undefined, opts: LubanSessionOptions = {}): LubanSession {
  const api = useMemo(() => opts.api ?? new Api(), [opts.api])
  const [state, dispatch] = useReducer(reduceSession, emptySession)
  const [conn, setConn] = useState<{ connection: Connection; error?: Error }>({ connection: sessionId ? 'loading' : 'closed' })
  const [session, setSession] = useState<Transcript['session'] | undefined>(undefined)

  const optsRef = useRef(opts)
  optsRef.current = opts
  const stateRef = useRef(state)
  stateRef.current = state
  const connRef = useRef(conn.connection)
  connRef.current = conn.connection
  const dedupe = useRef(new Deduper())
  // current is the session followed; created the one a send just created.
  const current = useRef<string | undefined>(undefined)
  const created = useRef<string | undefined>(undefined)
  const sendRef = useRef<AbortController | null>(null)
  const watchRef = useRef<{ id: string; ac: AbortController } | null>(null)
  const loadRef = useRef<AbortController | null>(null)

  const connection = useCallback((connection: Connection, error?: Error) => {
    connRef.current = connection
    setConn((c) => (c.connection === connection && c.error === error ? c : { connection, error }))
  }, [])

  const apply = useCallback((ev: SSEEvent) => {
    dispatch({ type: 'event', event: ev })
    optsRef.current.onEvent?.(ev)
  }, [])

  const shown = (e: unknown) => optsRef.current.onError?.(e) === true

  /**
   * watch follows the session's event stream for as long as it is open
   * (Api.watch); it shares the Deduper with a send's stream, so an event
   * that comes on both is applied once. restart reopens it at once (after
   * an answer landed while it waited to reconnect).
   */
  const watch = useCallback(
    (id: string, restart = false) => {
      if (watchRef.current?.id === id && !restart) return
      watchRef.current?.ac.abort()
      const ac = new AbortController()
      watchRef.current = { id, ac }
      api
        .watch(
          id,
          dedupe.current,
          {
            onOpen: () => !ac.signal.aborted && connection('live'),
            onEvent: (ev) => {
              if (ac.signal.aborted || current.current !== id) return
              apply(ev)
            },
            onReconnecting: () => !ac.signal.aborted && connection('reconnecting'),
          },
          ac.signal,
        )
        .catch((e) => {
          if (ac.signal.aborted) return
          connection('lost', e instanceof Error ? e : new Error(String(e)))
          // The server refused the session's stream (it was deleted
          // elsewhere, say): said in the transcript, as a failed load is.
          if (!shown(e)) dispatch({ type: 'notice', notice: noticeOf(e, 'load') })
        })
    },
    [api, apply, connection],
  )

  const close = useCallback(() => {
    sendRef.current?.abort()
    sendRef.current = null
    watchRef.current?.ac.abort()
    watchRef.current = null
    loadRef.current?.abort()
    loadRef.current = null
  }, [])

  const enter = useCallback(
    async (id: string | undefined) => {
      close()
      dedupe.current = new Deduper()
      current.current = id
      dispatch({ type: 'reset', sessionId: id })
      setSession(undefined)
      connection(id ? 'loading' : 'closed')
      if (!id) return
      const ac = new AbortController()
      loadRef.current = ac
      const stale = () => ac.signal.aborted || current.current !== id
      try {
        const tr = await api.session(id)
        if (stale()) return
        setSession(tr.session)
        dispatch({ type: 'transcript', transcript: tr })
        // The pending request says whether it can still be resumed, and the
        // last receipt covers a request the transcript does not show; the
        // session is followed without them when this read fails.
        const p = await api.pending(id).catch((e) => {
          if (isAbort(e)) throw e
          optsRef.current.onError?.(e)
          return null
        })
        if (stale()) return
        if (p) dispatch({ type: 'pending', pending: p })
        // Follow after the transcript's last event (Last-Event-ID), so
        // nothing the transcript already shows is replayed; the Deduper and
        // the reducer's entity ids drop any overlap.
        const from = tr.lastEventId
        if (typeof from === 'number' && Number.isInteger(from) && from > 0) {
          dedupe.current.last = from
          // A reply that streams now is not in the transcript yet (a
          // message joins it when it commits): its text so far comes
          // first, then the watch brings the rest.
          if (tr.session?.status === 'running') {
            const known = new Set((tr.messages ?? []).map((m) => m.id))
            // The log always holds an event at or after `from`; should that
            // read stall anyway, the session is followed without the text.
            const cu = new AbortController()
            const stop = () => cu.abort()
            ac.signal.addEventListener('abort', stop)
            const timer = setTimeout(stop, CATCH_UP_MS)
            const so = await api.streamedSoFar(id, from, known, cu.signal).catch((e) => {
              if (ac.signal.aborted) throw e
              return []
            })
            clearTimeout(timer)
            ac.signal.removeEventListener('abort', stop)
            if (stale()) return
            for (const ev of so) apply(ev)
          }
        }
        watch(id)
      } catch (e) {
        if (stale() || isAbort(e)) return
        connection('lost', e instanceof Error ? e : new Error(String(e)))
        if (!shown(e)) dispatch({ type: 'notice', notice: noticeOf(e, 'load') })
      }
    },
    [api, apply, close, connection, watch],
  )

  useEffect(() => {
    const mine = sessionId !== undefined && sessionId === created.current && current.current === sessionId
    created.current = undefined
    if (!mine) void enter(sessionId)
  }, [sessionId, enter])
  useEffect(() => close, [close])

  const send = useCallback(
    async (message: string, o: SendOptions = {}): Promise<boolean> => {
      const sid = current.current
      dispatch({ type: 'localUser', text: message })
      const body: ChatBody = sid ? { sessionId: sid, message } : o.agent ? { message, agent: o.agent } : { message }
      sendRef.current?.abort()
      const ac = new AbortController()
      sendRef.current = ac
      let started = false
      const act = (a: SessionAction) => !ac.signal.aborted && dispatch(a)
      try {
        await api.chat(
          body,
          dedupe.current,
          {
            onEvent: (ev) => {
              if (ac.signal.aborted) return
              started = true
              // Events flow again after the stream's own reconnect.
              if (connRef.current === 'reconnecting') connection(watchRef.current ? 'live' : 'closed')
              if (ev.event === 'session') {
                const id = (ev.data as { sessionId?: unknown })?.sessionId
                if (typeof id === 'string' && id) {
                  if (id !== current.current) {
                    current.current = id
                    created.current = id
                    optsRef.current.onSession?.(id)
                  }
                  watch(id)
                }
              }
              apply(ev)
            },
            onReconnecting: () => !ac.signal.aborted && connection('reconnecting'),
          },
          ac.signal,
        )
        return true
      } catch (e) {
        // Closed by the app (another session opened): not a refusal.
        if (ac.signal.aborted || isAbort(e)) return true
        const quiet = shown(e)
        if (!started) {
          // Refused before its run started: the message is not part of the session.
          act({ type: 'localFailed', text: message })
          if (!quiet) act({ type: 'notice', notice: noticeOf(e) })
          if (e instanceof ApiError && e.pending) act({ type: 'pending', pending: { pending: e.pending, requests: [e.pending], last: null } })
          return false
        }
        if (!quiet) act({ type: 'notice', notice: noticeOf(e) })
        act({ type: 'running', running: false })
        return true
      } finally {
        if (sendRef.current === ac) {
          sendRef.current = null
          optsRef.current.onSettled?.()
        }
      }
    },
    [api, apply, connection, watch],
  )

  const answer = useCallback(
    async (requestId: string, a: Answer) => {
      const card = stateRef.current.items.find((i): i is CardItem => i.kind === 'input' && i.request.id === requestId)
      const sid = current.current ?? card?.request.sessionId
      if (!sid || !card || card.phase !== 'editing') return
      dispatch({ type: 'cardSubmitting', requestId, answer: a })
      try {
        const res = await api.answer({ sessionId: sid, requestId, ...a })
        if (current.current !== sid) return
        if (res.receipt) dispatch({ type: 'cardAnswered', receipt: res.receipt })
        // The run goes on at the server; its events come on the session's
        // stream, which may be waiting to reconnect (the server was down).
        if (connRef.current !== 'live' && connRef.current !== 'lost') watch(sid, true)
      } catch (e) {
        if (current.current !== sid) return
        optsRef.current.onError?.(e)
        dispatch({ type: 'cardFailed', requestId, error: failureOf(e) })
      }
    },
    [api, watch],
  )

  const answerAll = useCallback(
    async (entries: { requestId: string; answer: Answer }[]) => {
      const editing = new Set(
        stateRef.current.items.filter((i): i is CardItem => i.kind === 'input' && i.phase === 'editing').map((c) => c.request.id),
      )
      const todo = entries.filter((e) => editing.has(e.requestId))
      const sid = current.current
      if (!sid || todo.length === 0) return
      dispatch({ type: 'batchSubmitting', entries: todo })
      const requestIds = todo.map((e) => e.requestId)
      try {
        const res = await api.answerAll({ sessionId: sid, answers: todo.map((e) => ({ requestId: e.requestId, ...e.answer })) })
        if (current.current !== sid) return
        // An entry that resolved nothing yet (a vote towards a quorum) has
        // no receipt (null); its card is open again.
        const all: unknown[] = Array.isArray(res.receipts) ? res.receipts : [res.receipt]
        const receipts = all.filter((r): r is Receipt => !!r && typeof (r as Receipt).requestId === 'string')
        dispatch({ type: 'batchAnswered', requestIds, receipts })
        if (connRef.current !== 'live' && connRef.current !== 'lost') watch(sid, true)
      } catch (e) {
        if (current.current !== sid) return
        optsRef.current.onError?.(e)
        dispatch({ type: 'batchFailed', requestIds, error: failureOf(e) })
      }
    },
    [api, watch],
  )

  const retry = useCallback(
    async (requestId: string) => {
      const card = stateRef.current.items.find((i): i is CardItem => i.kind === 'input' && i.request.id === requestId)
      if (card?.lastAnswer) await answer(requestId, card.lastAnswer)
    },
    [answer],
  )
  const cancel = useCallback((requestId: string) => answer(requestId, { selections: [], customInput: '', cancelled: true }), [answer])
  const expire = useCallback((requestId: string) => dispatch({ type: 'cardExpired', requestId }), [])
  const stop = useCallback(async () => {
    const sid = current.current
    if (!sid) return
    // A run that ended meanwhile has nothing to stop: only the app hears of a failure.
    await api.cancel(sid).catch((e) => optsRef.current.onError?.(e))
  }, [api])
  const reload = useCallback(() => void enter(current.current), [enter])

  const cards = useMemo(() => state.items.filter((i): i is CardItem => i.kind === 'input'), [state.items])
  const pending = useMemo(() => cards.filter((c) => c.phase === 'editing' || c.phase === 'submitting').map((c) => c.request), [cards])
  return {
    sessionId: state.sessionId,
    session,
    items: state.items,
    running: state.running,
    cards,
    pending,
    connection: conn.connection,
    error: conn.error,
    lastEventId: state.lastEventId,
    send,
    answer,
    answerAll,
    batchError: state.batchError,
    retry,
    cancel,
    expire,
    stop,
    reload,
  }
}
