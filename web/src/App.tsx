import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'react'
import { Api, ApiError, Deduper, runText, StreamLostError, UserInputCard, type AgentView, type Answer, type SessionSummary, type SSEEvent, type StreamHandlers } from 'luban-react'
import { initialState, reduce, type CardItem, type Item } from './chatState'
import { AgentName, AgentPicker, SessionHeader, showAgents } from './components/Agents'
import { Inbox } from './components/Inbox'
import { Markdown } from './components/LazyMarkdown'
import { QuestionPage, questionFromPath } from './components/QuestionPage'
import { Reasoning } from './components/Reasoning'
import { SessionList } from './components/SessionList'
import { ThemeToggle } from './components/ThemeToggle'
import { ToolCallView } from './components/ToolCallView'
import { dicts, LangContext, type Dict, type Lang } from './i18n'

const ASK_TOOLS = new Set(['ask_user', 'AskUser'])

/** AppProps lets tests inject a client; the page uses the same-origin default. */
export type AppProps = { api?: Api; initialLang?: Lang }

function sessionFromPath(): string | undefined {
  const m = /^\/s\/([^/]+)$/.exec(window.location.pathname)
  return m ? decodeURIComponent(m[1]) : undefined
}

function storedLang(): Lang {
  try {
    return localStorage.getItem('luban.lang') === 'en' ? 'en' : 'zh'
  } catch {
    return 'zh'
  }
}

/**
 * App is the whole page: header (model name, language, new session), the
 * session list, and the chat view with its question cards. A session is
 * addressed as /s/{id}, which the Go handler serves by SPA fallback.
 */
export function App({ api: given, initialLang }: AppProps) {
  const api = useMemo(() => given ?? new Api(), [given])
  const [lang, setLang] = useState<Lang>(initialLang ?? storedLang())
  const t = dicts[lang]
  const [model, setModel] = useState('')
  const [sessions, setSessions] = useState<SessionSummary[]>([])
  // The server's agents (GET /api/agents), the one picked for a new
  // session, and the session being viewed as its transcript gave it (its
  // agent before the session list has it).
  const [agents, setAgents] = useState<AgentView[]>([])
  const [pick, setPick] = useState('')
  const [viewed, setViewed] = useState<{ id?: string; agent: string; title: string } | undefined>(undefined)
  const [unauthorized, setUnauthorized] = useState(false)
  const [reconnecting, setReconnecting] = useState(false)
  const [state, dispatch] = useReducer(reduce, initialState)
  const dedupe = useRef(new Deduper())
  const stream = useRef<AbortController | null>(null)
  const sessionRef = useRef<string | undefined>(undefined)
  sessionRef.current = state.sessionId

  const fail = useCallback((e: unknown) => {
    if (e instanceof ApiError && e.status === 401) {
      setUnauthorized(true)
      return true
    }
    if (e instanceof DOMException && e.name === 'AbortError') return true
    return false
  }, [])

  const refreshSessions = useCallback(() => {
    api.sessions().then(setSessions, fail)
  }, [api, fail])

  const handlers = useCallback(
    (signal: AbortSignal): StreamHandlers => ({
      onEvent: (ev) => {
        if (signal.aborted) return
        setReconnecting(false)
        if (ev.event === 'session') {
          const sid = (ev.data as { sessionId?: string })?.sessionId
          if (sid && sid !== sessionFromPath()) window.history.pushState(null, '', `/s/${encodeURIComponent(sid)}`)
        }
        dispatch({ type: 'event', event: ev })
      },
      onReconnecting: () => {
        if (!signal.aborted) setReconnecting(true)
      },
    }),
    [],
  )

  /** follow runs one stream and reports what ended it. */
  const follow = useCallback(
    async (start: (signal: AbortSignal, h: StreamHandlers) => Promise<void>, onApiError?: (e: ApiError) => void) => {
      stream.current?.abort()
      const ac = new AbortController()
      stream.current = ac
      try {
        await start(ac.signal, handlers(ac.signal))
      } catch (e) {
        if (ac.signal.aborted || fail(e)) return
        if (e instanceof ApiError && onApiError) onApiError(e)
        else if (e instanceof StreamLostError) dispatch({ type: 'notice', level: 'error', code: 'stream_lost', message: t.streamLost })
        else if (e instanceof ApiError) dispatch({ type: 'notice', level: 'error', code: e.code, message: e.message })
        else dispatch({ type: 'notice', level: 'error', code: 'network', message: String(e) })
        dispatch({ type: 'running', running: false })
      } finally {
        if (stream.current === ac) {
          setReconnecting(false)
          refreshSessions()
        }
      }
    },
    [fail, handlers, refreshSessions, t.streamLost],
  )

  const enter = useCallback(
    async (id: string | undefined) => {
      stream.current?.abort()
      stream.current = null
      dedupe.current = new Deduper()
      sessionRef.current = id
      dispatch({ type: 'reset', sessionId: id })
      if (!id) return
      try {
        const tr = await api.session(id)
        if (sessionRef.current !== id) return
        if (tr.session) setViewed({ id, agent: tr.session.agent, title: tr.session.title })
        dispatch({ type: 'transcript', transcript: tr })
        const p = await api.pending(id)
        if (sessionRef.current !== id) return
        dispatch({ type: 'pending', pending: p })
        if (tr.session?.status === 'running') {
          // Resume after the transcript's last event (Last-Event-ID), so
          // nothing the transcript already shows is replayed; the Deduper
          // and the reducer's entity ids drop any overlap. Without
          // lastEventId (an older server) the replay starts at the first
          // event: only the active run's end, or a question not yet
          // resolved, ends the follow then.
          const from = tr.lastEventId
          if (typeof from === 'number' && Number.isInteger(from) && from > 0) dedupe.current.last = from
          const active = tr.messages?.at(-1)?.runId
          const resolved = new Set((tr.interactions ?? []).filter((i) => i.status !== 'pending').map((i) => i.request.id))
          const isEnd = (ev: SSEEvent) => {
            const d = (ev.data ?? {}) as { runId?: string; id?: string }
            if (ev.event === 'done') return !active || d.runId === active
            if (ev.event === 'user_input_required') return !resolved.has(d.id ?? '') && (!active || d.runId === active)
            return ev.event === 'error'
          }
          void follow((signal, h) => api.subscribe(id, dedupe.current, h, signal, isEnd))
        }
      } catch (e) {
        if (!fail(e)) {
          const code = e instanceof ApiError ? e.code : 'network'
          // An unknown session (or another principal's) is also what a
          // restart with --db memory leaves: say what to do (DESIGN §4).
          const message = code === 'session_not_found' ? t.sessionGone : `${t.loadFailed}: ${e instanceof Error ? e.message : String(e)}`
          dispatch({ type: 'notice', level: 'error', code, message })
        }
      }
    },
    [api, fail, follow, t.loadFailed, t.sessionGone],
  )

  useEffect(() => {
    api.info().then((i) => setModel(i.model), fail)
    api.agents().then(setAgents, fail)
    refreshSessions()
    void enter(sessionFromPath())
    const onPop = () => void enter(sessionFromPath())
    window.addEventListener('popstate', onPop)
    return () => {
      window.removeEventListener('popstate', onPop)
      stream.current?.abort()
    }
    // Runs once: enter/refresh are stable for one api.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [api])

  useEffect(() => {
    document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en'
  }, [lang])

  const switchLang = () => {
    const next: Lang = lang === 'zh' ? 'en' : 'zh'
    setLang(next)
    try {
      localStorage.setItem('luban.lang', next)
    } catch {
      // Private mode: the switch still works for this page.
    }
  }

  const open = (id: string | undefined) => {
    const path = id ? `/s/${encodeURIComponent(id)}` : '/'
    if (window.location.pathname !== path) window.history.pushState(null, '', path)
    void enter(id)
  }

  const send = (text: string) => {
    const sessionId = state.sessionId
    dispatch({ type: 'localUser', text })
    // A new session gets the picked agent (none: the server's default).
    const agent = !sessionId && agents.length > 1 ? (pick || agents[0].name) : undefined
    if (agent) setViewed({ agent, title: '' })
    void follow(
      (signal, h) => api.chat(sessionId ? { sessionId, message: text } : agent ? { message: text, agent } : { message: text }, dedupe.current, h, signal),
      (e) => {
        dispatch({ type: 'running', running: false })
        const msg = e.code === 'run_in_progress' ? t.runInProgress : e.code === 'interaction_pending' ? t.interactionPending : e.message
        dispatch({ type: 'notice', level: 'error', code: e.code, message: msg })
        if (e.pending) dispatch({ type: 'pending', pending: { pending: e.pending, last: null } })
      },
    )
  }

  const answer = (card: CardItem, a: Answer) => {
    const sessionId = state.sessionId ?? card.request.sessionId
    if (!sessionId || card.phase !== 'editing') return
    const requestId = card.request.id
    dispatch({ type: 'cardSubmitting', requestId })
    void follow(
      (signal, h) => api.continueChat({ sessionId, requestId, ...a }, dedupe.current, h, signal),
      (e) => dispatch({ type: 'cardFailed', requestId, error: e }),
    )
  }

  const expire = useCallback((requestId: string) => dispatch({ type: 'cardExpired', requestId }), [])

  const stop = () => {
    if (state.sessionId) api.cancel(state.sessionId).catch(fail)
  }

  const questionId = questionFromPath(window.location.pathname)
  if (questionId)
    return (
      <LangContext.Provider value={lang}>
        <div className="app app-question">
          <header className="header">
            <h1>
              <a href="/">{t.appTitle}</a>
            </h1>
            <span className="spacer" />
            <button type="button" onClick={switchLang} aria-label={t.languageLabel} data-testid="lang-switch">
              {t.language}
            </button>
          </header>
          <QuestionPage api={api} requestId={questionId} />
        </div>
      </LangContext.Provider>
    )

  return (
    <LangContext.Provider value={lang}>
      <div className="app">
        <header className="header">
          <h1>{t.appTitle}</h1>
          {model && (
            <span className="model" data-testid="model-name" title={t.model}>
              {model}
            </span>
          )}
          <span className="spacer" />
          <Inbox api={api} onOpenSession={open} onAnswered={(sid) => sid === sessionRef.current && void enter(sid)} />
          <button type="button" onClick={() => open(undefined)} data-testid="new-session">
            {t.newSession}
          </button>
          <ThemeToggle />
          <button type="button" onClick={switchLang} title={t.languageLabel} lang={lang === 'zh' ? 'en' : 'zh-CN'} data-testid="lang-switch">
            {t.language}
          </button>
        </header>
        {unauthorized && (
          <div className="banner banner-error" role="alert" data-testid="unauthorized">
            {t.unauthorized}
          </div>
        )}
        <div className="main">
          <nav className="sessions" aria-label={t.sessions} data-testid="session-list">
            <h2>{t.sessions}</h2>
            <SessionList
              api={api}
              sessions={sessions}
              currentId={state.sessionId}
              onOpen={open}
              onError={fail}
              meta={(s) => showAgents(agents, s.agent) && <AgentName t={t} name={s.agent} testId={`session-agent-${s.id}`} />}
              onChanged={(id, deleted) => {
                if (deleted && id === state.sessionId) open(undefined)
                refreshSessions()
              }}
            />
          </nav>
          <main className="chat" data-testid="chat" data-session-id={state.sessionId ?? ''}>
            {state.sessionId && (() => {
              const listed = sessions.find((s) => s.id === state.sessionId)
              const own = viewed && (viewed.id === state.sessionId || !viewed.id) ? viewed : undefined
              const agent = listed?.agent || own?.agent
              return <SessionHeader t={t} title={listed?.title || own?.title || state.sessionId} agent={agent} named={showAgents(agents, agent)} />
            })()}
            <div className="items" aria-live="polite">
              {state.items.length === 0 && !state.sessionId && <Welcome t={t} model={model} />}
              {state.items.map((it) => (
                <ItemView key={it.key} item={it} t={t} onAnswer={answer} onExpire={expire} />
              ))}
              {state.running && (
                <div className="muted" data-testid="running">
                  {t.running}
                </div>
              )}
              {reconnecting && (
                <div className="banner" role="status" data-testid="reconnecting">
                  {t.reconnecting}
                </div>
              )}
            </div>
            {!state.sessionId && <AgentPicker t={t} agents={agents} value={pick} onChange={setPick} disabled={state.running} />}
            <Composer t={t} running={state.running} onSend={send} onStop={stop} />
          </main>
        </div>
      </div>
    </LangContext.Provider>
  )
}

/** DEMO_MODEL is the model name of the built-in demo scenario (`--model scripted`). */
const DEMO_MODEL = 'scripted:demo'

/**
 * Welcome fills the empty chat of a new session: what luban does, and with
 * the built-in demo scenario (`scripted:demo`, `luban serve` without an API
 * key) that the demo walks through every question type. Other scripted
 * scenarios (`scripted:<file>`) play only their own turns, so they get the
 * plain start line.
 */
function Welcome({ t, model }: { t: Dict; model: string }) {
  const demo = model === DEMO_MODEL
  return (
    <section className="welcome" data-testid="welcome" aria-labelledby="welcome-title">
      <h2 id="welcome-title">{t.welcomeTitle}</h2>
      <p>{t.welcomeBody}</p>
      {demo ? (
        <p className="welcome-demo" data-testid="welcome-demo">
          {t.welcomeDemo.replace('{model}', model)}
        </p>
      ) : (
        <p>{t.welcomeStart}</p>
      )}
    </section>
  )
}

function ItemView({
  item,
  t,
  onAnswer,
  onExpire,
}: {
  item: Item
  t: Dict
  onAnswer: (c: CardItem, a: Answer) => void
  onExpire: (requestId: string) => void
}) {
  switch (item.kind) {
    case 'message':
      return (
        <article className={`msg msg-${item.role}`} data-testid={`message-${item.role}`} data-message-id={item.id}>
          <div className="msg-who">{item.role === 'user' ? t.you : t.assistant}</div>
          {item.role === 'assistant' && item.reasoning ? <Reasoning text={item.reasoning} /> : null}
          {item.role === 'user' ? <p className="msg-user-text">{item.content}</p> : item.content ? <Markdown text={item.content} /> : null}
        </article>
      )
    case 'tool':
      // An ask tool is shown by its card; only a rejected call shows as a row.
      if (ASK_TOOLS.has(item.name) && !item.result?.isError) return null
      return <ToolCallView item={item} />
    case 'input':
      return <CardSlot card={item} onAnswer={onAnswer} onExpire={onExpire} />
    case 'notice': {
      const run = item.code.startsWith('run_') ? runText(t, item.code.slice(4) as CardItem['runStatus']) : ''
      return (
        <div className={`notice notice-${item.level}`} role={item.level === 'error' ? 'alert' : 'status'} data-testid="notice" data-code={item.code}>
          {run || (item.level === 'error' ? `${t.errorPrefix}: ${item.message}` : item.message)}
        </div>
      )
    }
  }
}

function CardSlot({ card, onAnswer, onExpire }: { card: CardItem; onAnswer: (c: CardItem, a: Answer) => void; onExpire: (id: string) => void }) {
  const id = card.request.id
  const expire = useCallback(() => onExpire(id), [onExpire, id])
  return (
    <UserInputCard
      card={card}
      onSubmit={(a) => onAnswer(card, a)}
      onCancel={() => onAnswer(card, { selections: [], customInput: '', cancelled: true })}
      onExpire={expire}
    />
  )
}

function Composer({ t, running, onSend, onStop }: { t: Dict; running: boolean; onSend: (s: string) => void; onStop: () => void }) {
  const [text, setText] = useState('')
  const send = () => {
    const v = text.trim()
    if (!v || running) return
    onSend(v)
    setText('')
  }
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault()
        send()
      }}
    >
      <label htmlFor="composer-input" className="visually-hidden">
        {t.messageLabel}
      </label>
      <textarea
        id="composer-input"
        data-testid="composer"
        rows={2}
        placeholder={t.messagePlaceholder}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault()
            send()
          }
        }}
      />
      {running ? (
        <button type="button" onClick={onStop} data-testid="stop">
          {t.stop}
        </button>
      ) : (
        <button type="submit" className="primary" data-testid="send" disabled={!text.trim()}>
          {t.send}
        </button>
      )}
    </form>
  )
}
