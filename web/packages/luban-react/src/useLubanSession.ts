// useLubanSession: one session's questions for any React app. It reads the
// transcript (GET /api/sessions/{id}), shows its interactions as cards, and
// follows GET /api/sessions/{id}/events from the transcript's lastEventId
// (Last-Event-ID on every reconnect), so a question asked, or answered by
// another client, shows here without a reload.
import { useCallback, useEffect, useMemo, useReducer, useRef } from 'react'
import { Api, ApiError, StreamLostError } from './api'
import { expiredReceipt, failCard, newCard, resolvedCard, type CardItem } from './card'
import { Deduper, isInputRequest, type SSEEvent } from './sse'
import type { Answer, InputRequest, Receipt, RunStatus, Transcript } from './types'

/**
 * Connection is how the hook stands with the server: loading until the
 * transcript came; live while the event stream is open; reconnecting after
 * a drop (Last-Event-ID resumes it); lost when every reconnect failed or the
 * server refused (error says why); closed without a session id.
 */
export type Connection = 'loading' | 'live' | 'reconnecting' | 'lost' | 'closed'

/** LubanSessionOptions configures useLubanSession. */
export type LubanSessionOptions = {
  /** api is the client; default a same-origin Api (cookie auth). */
  api?: Api
  /** onEvent sees every event of the stream once, in order, after the hook applied it. */
  onEvent?: (ev: SSEEvent) => void
}

/** LubanSession is what useLubanSession returns. */
export type LubanSession = {
  /** cards are the session's questions, oldest first: open ones editable, resolved ones as receipts. */
  cards: CardItem[]
  /** pending are the requests still waiting for an answer (phase editing or submitting). */
  pending: InputRequest[]
  connection: Connection
  /** error is why the connection is lost (an ApiError such as 404 session_not_found, or StreamLostError). */
  error?: Error
  /** lastEventId is the id of the last event applied (the next Last-Event-ID). */
  lastEventId: number
  /**
   * answer sends POST /api/chat/continue (Accept: application/json) and
   * resolves once the server answered: the card then holds the receipt, or
   * the refusal (422 details by field and still editable; 409 the winner's
   * receipt; 410 expired or not resumable). A network failure leaves the card
   * editable with error code `network_error`. It never rejects.
   */
  answer: (requestId: string, a: Answer) => Promise<void>
  /** cancel answers requestId with `cancelled: true` (the run stops); like answer it never rejects. */
  cancel: (requestId: string) => Promise<void>
  /** expire shows an editing card as expired (UserInputCard's onExpire, when expiresAt passed). */
  expire: (requestId: string) => void
}

type State = { cards: CardItem[]; connection: Connection; error?: Error; lastEventId: number }

type Action =
  | { type: 'reset'; connection: Connection }
  | { type: 'transcript'; transcript: Transcript }
  | { type: 'event'; event: SSEEvent }
  | { type: 'connection'; connection: Connection; error?: Error }
  | { type: 'submitting'; requestId: string }
  | { type: 'resolved'; receipt: Receipt }
  | { type: 'failed'; requestId: string; error: ApiError }
  | { type: 'expired'; requestId: string }

const RUN_STATUSES = new Set(['completed', 'cancelled', 'expired', 'failed'])

function update(cards: CardItem[], id: string, f: (c: CardItem) => CardItem): CardItem[] {
  return cards.map((c) => (c.request.id === id ? f(c) : c))
}

function fromTranscript(t: Transcript): CardItem[] {
  const st = t.session?.status
  return (t.interactions ?? []).map((it) => {
    const card = newCard(it.request)
    if (it.status === 'pending') return card
    const done = resolvedCard(card, it.receipt ?? expiredReceipt(it.request))
    if (done.runStatus === 'continuing' && st !== 'running') {
      return { ...done, runStatus: RUN_STATUSES.has(st) ? (st as RunStatus) : undefined }
    }
    return done
  })
}

function onEvent(s: State, ev: SSEEvent): State {
  const lastEventId = ev.id ?? s.lastEventId
  switch (ev.event) {
    case 'user_input_required': {
      if (!isInputRequest(ev.data)) return { ...s, lastEventId }
      const r = ev.data
      if (s.cards.some((c) => c.request.id === r.id)) return { ...s, lastEventId }
      return { ...s, lastEventId, cards: [...s.cards, newCard(r)] }
    }
    case 'user_input_resolved': {
      const rec = ev.data as Receipt
      if (typeof rec?.requestId !== 'string') return { ...s, lastEventId }
      return { ...s, lastEventId, cards: update(s.cards, rec.requestId, (c) => (c.receipt ? c : resolvedCard(c, rec))) }
    }
    case 'done': {
      const status = (ev.data as { status?: string })?.status ?? ''
      if (!RUN_STATUSES.has(status)) return { ...s, lastEventId }
      return {
        ...s,
        lastEventId,
        cards: s.cards.map((c) => (c.runStatus === 'continuing' ? { ...c, runStatus: status as RunStatus } : c)),
      }
    }
    default:
      return { ...s, lastEventId }
  }
}

function reduce(s: State, a: Action): State {
  switch (a.type) {
    case 'reset':
      return { cards: [], connection: a.connection, lastEventId: 0 }
    case 'transcript':
      return { ...s, cards: fromTranscript(a.transcript), lastEventId: a.transcript.lastEventId ?? 0 }
    case 'event':
      return onEvent(s, a.event)
    case 'connection':
      if (s.connection === a.connection && s.error === a.error) return s
      return { ...s, connection: a.connection, error: a.error }
    case 'submitting':
      return { ...s, cards: update(s.cards, a.requestId, (c) => (c.phase === 'editing' ? { ...c, phase: 'submitting', error: undefined } : c)) }
    case 'resolved':
      return { ...s, cards: update(s.cards, a.receipt.requestId, (c) => (c.receipt ? c : resolvedCard(c, a.receipt))) }
    case 'failed':
      return { ...s, cards: update(s.cards, a.requestId, (c) => (c.phase === 'submitting' ? failCard(c, a.error) : c)) }
    case 'expired':
      return {
        ...s,
        cards: update(s.cards, a.requestId, (c) => (c.phase === 'editing' ? { ...c, phase: 'resolved', receipt: expiredReceipt(c.request) } : c)),
      }
  }
}

/**
 * useLubanSession follows one luban session and exposes its questions with
 * answer and cancel. sessionId undefined means no session (connection
 * closed, no request sent). Changing sessionId starts over; unmounting
 * closes the stream.
 */
export function useLubanSession(sessionId: string | undefined, opts: LubanSessionOptions = {}): LubanSession {
  const api = useMemo(() => opts.api ?? new Api(), [opts.api])
  const [state, dispatch] = useReducer(reduce, undefined, () => ({ cards: [], connection: sessionId ? 'loading' : 'closed', lastEventId: 0 }) as State)
  const onEventRef = useRef(opts.onEvent)
  onEventRef.current = opts.onEvent

  useEffect(() => {
    dispatch({ type: 'reset', connection: sessionId ? 'loading' : 'closed' })
    if (!sessionId) return
    const ctl = new AbortController()
    const lost = (e: unknown) => {
      if (ctl.signal.aborted) return
      dispatch({ type: 'connection', connection: 'lost', error: e instanceof Error ? e : new Error(String(e)) })
    }
    ;(async () => {
      const t = await api.session(sessionId)
      if (ctl.signal.aborted) return
      dispatch({ type: 'transcript', transcript: t })
      const dedupe = new Deduper()
      dedupe.last = t.lastEventId ?? 0
      dispatch({ type: 'connection', connection: 'live' })
      await api.subscribe(
        sessionId,
        dedupe,
        {
          onEvent: (ev) => {
            dispatch({ type: 'event', event: ev })
            dispatch({ type: 'connection', connection: 'live' })
            onEventRef.current?.(ev)
          },
          onReconnecting: () => dispatch({ type: 'connection', connection: 'reconnecting' }),
        },
        ctl.signal,
        () => false,
      )
      // The server closed the stream for good without an error.
      lost(new StreamLostError())
    })().catch(lost)
    return () => ctl.abort()
  }, [api, sessionId])

  const answer = useCallback(
    async (requestId: string, a: Answer) => {
      if (!sessionId) return
      dispatch({ type: 'submitting', requestId })
      try {
        const res = await api.answer({ sessionId, requestId, ...a })
        if (res.receipt) dispatch({ type: 'resolved', receipt: res.receipt })
      } catch (e) {
        const err = e instanceof ApiError ? e : new ApiError(0, { error: { code: 'network_error', message: String(e) } })
        dispatch({ type: 'failed', requestId, error: err })
      }
    },
    [api, sessionId],
  )
  const cancel = useCallback((requestId: string) => answer(requestId, { selections: [], customInput: '', cancelled: true }), [answer])
  const expire = useCallback((requestId: string) => dispatch({ type: 'expired', requestId }), [])

  const pending = useMemo(
    () => state.cards.filter((c) => c.phase === 'editing' || c.phase === 'submitting').map((c) => c.request),
    [state.cards],
  )
  return { cards: state.cards, pending, connection: state.connection, error: state.error, lastEventId: state.lastEventId, answer, cancel, expire }
}
