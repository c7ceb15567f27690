import { useCallback, useEffect, useMemo, useRef, useState } from 'react'
import { Api, ApiError, errorText, MAX_CHAT_MESSAGE, TextCounter, RetryContext, runText, UserInputCard, useLubanSession, type AgentView, type InboxItem, visible, type Answer, type CardItem, type Item, type NoticeItem, type RunErrorItem, type SessionSummary } from 'luban-react'
import { AgentName, AgentPicker, SessionHeader, showAgents } from './components/Agents'
import { ApproveAll } from './components/ApproveAll'
import { Inbox } from './components/Inbox'
import { McpConnect } from './components/McpConnect'
import { Markdown } from './components/LazyMarkdown'
import { QuestionPage, questionFromPath } from './components/QuestionPage'
import { Reasoning } from './components/Reasoning'
import { SessionList } from './components/SessionList'
import { ThemeToggle } from './components/ThemeToggle'
import { ToolCallView } from './components/ToolCallView'
import { dicts, LangContext, type Dict, type Lang } from './i18n'
import { initialLang as pageLang, rememberLang } from './lang'
import { useChatScroll } from './useChatScroll'

const ASK_TOOLS = new Set(['ask_user', 'AskUser'])

/** AppProps lets tests inject a client; the page uses the same-origin default. */
export type AppProps = { api?: Api; initialLang?: Lang }

/** NARROW is the phone layout's media query (styles.css uses the same width). */
const NARROW = '(max-width: 640px)'

function narrow(): boolean {
  return typeof window.matchMedia === 'function' && window.matchMedia(NARROW).matches
}

/**
 * rejectedToken reports whether the page was opened as /?token=…: the
 * server sends a valid token's link on to / (with the cookie), so a page
 * that still has the token in its URL was served for a token the server
 * rejected.
 */
function rejectedToken(): boolean {
  return new URLSearchParams(window.location.search).has('token')
}

function sessionFromPath(): string | undefined {
  const m = /^\/s\/([^/]+)$/.exec(window.location.pathname)
  return m ? decodeURIComponent(m[1]) : undefined
}

/**
 * App is the whole page: header (model name, language, new session), the
 * session list, and the chat view with its question cards. A session is
 * addressed as /s/{id}, which the Go handler serves by SPA fallback.
 */
export function App({ api: given, initialLang }: AppProps) {
  const api = useMemo(() => given ?? new Api(), [given])
  const [lang, setLang] = useState<Lang>(initialLang ?? pageLang)
  const t = dicts[lang]
  const [model, setModel] = useState('')
  const [sessions, setSessions] = useState<SessionSummary[]>([])
  // The server's agents (GET /api/agents), the one picked for a new
  // session, and the agent a new session was sent to (before the session
  // list has it).
  const [agents, setAgents] = useState<AgentView[]>([])
  const [pick, setPick] = useState('')
  const [sentAgent, setSentAgent] = useState('')
  const [unauthorized, setUnauthorized] = useState(false)
  // A sign-in link whose token the server refused (the page then drops it from the address).
  const [tokenRejected] = useState(rejectedToken)
  // The session list: open beside the chat on a wide screen, closed by
  // default on a phone so the transcript and a card get the screen.
  const [sessionsOpen, setSessionsOpen] = useState(() => !narrow())
  // The session in the URL (/s/{id}); undefined on / (a new session).
  const [route, setRoute] = useState<string | undefined>(sessionFromPath)
  const [draft, setDraft] = useState('')

  const fail = useCallback((e: unknown) => {
    if (e instanceof ApiError && e.status === 401) {
      setUnauthorized(true)
      return true
    }
    return e instanceof DOMException && e.name === 'AbortError'
  }, [])

  const refreshSessions = useCallback(() => {
    api.sessions().then(setSessions, fail)
  }, [api, fail])

  // sending is true while a send waits for its answer; tooLong is its 413
  // (payload_too_large), said by the composer, not in the transcript.
  const sending = useRef(false)
  const [tooLong, setTooLong] = useState<{ max?: number } | null>(null)
  const chat = useLubanSession(route, {
    api,
    onError: (e) => {
      if (sending.current && e instanceof ApiError && e.code === 'payload_too_large') {
        const d = e.details?.find((x) => x.field === 'message' && x.code === 'too_long')
        const max = d?.params?.max
        setTooLong({ max: typeof max === 'number' ? max : undefined })
        return true
      }
      return fail(e)
    },
    onSettled: refreshSessions,
    onSession: (sid) => {
      if (sid !== sessionFromPath()) window.history.pushState(null, '', `/s/${encodeURIComponent(sid)}`)
      setRoute(sid)
    },
  })
  const itemsRef = useRef<HTMLDivElement | null>(null)
  const onItemsScroll = useChatScroll(itemsRef, chat.items)
  const sessionRef = useRef<string | undefined>(undefined)
  sessionRef.current = chat.sessionId

  useEffect(() => {
    api.info().then((i) => setModel(i.model), fail)
    api.agents().then(setAgents, fail)
    refreshSessions()
    const onPop = () => setRoute(sessionFromPath())
    window.addEventListener('popstate', onPop)
    return () => window.removeEventListener('popstate', onPop)
  }, [api, fail, refreshSessions])

  useEffect(() => {
    // The refused token is not kept in the address bar or the history.
    if (tokenRejected) window.history.replaceState(null, '', window.location.pathname)
  }, [tokenRejected])

  useEffect(() => {
    document.documentElement.lang = lang === 'zh' ? 'zh-CN' : 'en'
  }, [lang])

  const switchLang = () => {
    const next: Lang = lang === 'zh' ? 'en' : 'zh'
    setLang(next)
    rememberLang(next)
  }

  const open = (id: string | undefined) => {
    const path = id ? `/s/${encodeURIComponent(id)}` : '/'
    if (window.location.pathname !== path) window.history.pushState(null, '', path)
    if (id !== undefined && id === chat.sessionId && id === route) chat.reload()
    else setRoute(id)
    setSentAgent('')
  }

  // On a phone the list closes once a session is picked in it: the chat takes the screen.
  const openPicked = (id: string) => {
    open(id)
    if (narrow()) setSessionsOpen(false)
  }

  /**
   * send starts a run with text. A message the server refused before its
   * run started (a question waits, a run is active, the server is down) is
   * not part of the session: the hook drops its bubble and shows the
   * refusal, and the composer gets the text back.
   */
  const send = (text: string) => {
    // A new session gets the picked agent (none: the server's default).
    const agent = !chat.sessionId && agents.length > 1 ? pick || agents[0].name : undefined
    if (agent) setSentAgent(agent)
    setTooLong(null)
    sending.current = true
    void chat.send(text, { agent }).then((ok) => {
      sending.current = false
      if (!ok) setDraft((cur) => cur || text)
    })
  }

  const answer = (card: CardItem, a: Answer) => void chat.answer(card.request.id, a)
  const retryCard = useCallback((card: CardItem) => void chat.retry(card.request.id), [chat.retry])

  const signedOut = tokenRejected || unauthorized
  const waiting = chat.pending.length > 0
  // The composer's hint names what waits: an approval reads differently from a question.
  const waitingApproval = chat.pending.length > 0 && chat.pending.every((r) => r.mode === 'approval')
  // The session could not be read because it does not exist (deleted, or
  // forgotten by a server without storage): nothing can be sent to it.
  const gone = chat.items.some((i) => i.kind === 'notice' && i.context === 'load' && i.code === 'session_not_found')
  const lastError = lastOf(chat.items, (i): i is RunErrorItem => i.kind === 'run_error')
  const approvals = useMemo(() => {
    const m = new Map<string, CardItem>()
    for (const i of chat.items) if (i.kind === 'input' && i.request.mode === 'approval') m.set(i.request.toolCallId, i)
    return m
  }, [chat.items])
  const canRetryRun = !chat.running && !waiting && !!lastError?.retryText && chat.items[chat.items.length - 1] === lastError

  const onFeed = useCallback(() => refreshSessions(), [refreshSessions])

  const stop = () => void chat.stop()

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
            <LanguageButton t={t} lang={lang} onSwitch={switchLang} />
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
          {/* Signed out, the inbox and a new session cannot work: only theme and language stay. */}
          {!signedOut && (
            <>
              <Inbox api={api} onOpenSession={open} onAnswered={(sid) => sid === sessionRef.current && chat.reload()} onFeed={onFeed} />
              <button type="button" onClick={() => open(undefined)} data-testid="new-session">
                {t.newSession}
              </button>
            </>
          )}
          <ThemeToggle />
          <LanguageButton t={t} lang={lang} onSwitch={switchLang} />
        </header>
        {!signedOut && <McpConnect api={api} />}
        {signedOut ? (
          <SignIn t={t} rejected={tokenRejected} />
        ) : (
          <div className="main">
            <nav className={`sessions${sessionsOpen ? '' : ' sessions-closed'}`} aria-label={t.sessions} data-testid="session-list">
              <h2 className="sessions-heading">
                <button
                  type="button"
                  className="sessions-toggle"
                  aria-expanded={sessionsOpen}
                  aria-controls="session-list-body"
                  data-testid="sessions-toggle"
                  onClick={() => setSessionsOpen((o) => !o)}
                >
                  <span className="sessions-chevron" aria-hidden="true">
                    {sessionsOpen ? '▾' : '▸'}
                  </span>
                  {t.sessions}
                  {sessions.length > 0 && <span className="sessions-count"> ({sessions.length})</span>}
                </button>
              </h2>
              <div id="session-list-body" hidden={!sessionsOpen}>
                <SessionList
                  api={api}
                  sessions={sessions}
                  currentId={chat.sessionId}
                  onOpen={openPicked}
                  onError={fail}
                  meta={(s) => showAgents(agents, s.agent) && <AgentName t={t} name={s.agent} testId={`session-agent-${s.id}`} />}
                  onChanged={(id, deleted) => {
                    if (deleted && id === chat.sessionId) open(undefined)
                    refreshSessions()
                  }}
                />
              </div>
            </nav>
            <main className="chat" data-testid="chat" data-session-id={chat.sessionId ?? ''}>
              {chat.sessionId && !gone && (() => {
                const listed = sessions.find((s) => s.id === chat.sessionId)
                const own = chat.session?.id === chat.sessionId ? chat.session : undefined
                const agent = listed?.agent || own?.agent || sentAgent
                // Until the list or the transcript names the session, the
                // title is a neutral placeholder (never the raw id).
                const known = !!listed || !!own
                const title = listed?.title || own?.title || (known ? t.untitledSession : '')
                return <SessionHeader t={t} title={title} agent={agent} named={showAgents(agents, agent)} />
              })()}
              <div className="items" aria-live="polite" ref={itemsRef} onScroll={onItemsScroll} data-testid="transcript">
                {chat.items.length === 0 && !chat.sessionId && <Welcome t={t} model={model} api={api} onOpenSession={open} />}
                <RetryContext.Provider value={retryCard}>
                  {chat.items.map((it) => (
                    <ItemView
                      key={it.key}
                      item={it}
                      approval={it.kind === 'tool' ? approvals.get(it.toolCallId) : undefined}
                      t={t}
                      onAnswer={answer}
                      onExpire={chat.expire}
                      onRetryRun={canRetryRun && it === lastError ? () => send(lastError.retryText!) : undefined}
                      onNewSession={() => open(undefined)}
                    />
                  ))}
                </RetryContext.Provider>
                <ApproveAll cards={chat.cards} error={chat.batchError} onApproveAll={(entries) => void chat.answerAll(entries)} />
                {chat.running && (
                  <div className="muted" data-testid="running">
                    {t.running}
                  </div>
                )}
                {chat.connection === 'reconnecting' && (
                  <div className="banner" role="status" data-testid="reconnecting">
                    {t.reconnecting}
                  </div>
                )}
              </div>
              {!chat.sessionId && <AgentPicker t={t} agents={agents} value={pick} onChange={setPick} disabled={chat.running} />}
              <Composer t={t} running={chat.running} waiting={waiting} approval={waitingApproval} several={chat.pending.length > 1} gone={gone} text={draft}
                setText={(v) => {
                  setDraft(v)
                  setTooLong(null)
                }}
                tooLong={tooLong}
                onSend={send}
                onStop={stop}
              />
            </main>
          </div>
        )}
      </div>
    </LangContext.Provider>
  )
}

/**
 * LanguageButton switches zh ⇄ en. Its text names the other language in
 * that language ("English" / "中文", marked with its lang), and that text is
 * its accessible name (WCAG 2.5.3 label in name); the title says what it does.
 */
function LanguageButton({ t, lang, onSwitch }: { t: Dict; lang: Lang; onSwitch: () => void }) {
  return (
    <button type="button" onClick={onSwitch} title={t.languageLabel} lang={lang === 'zh' ? 'en' : 'zh-CN'} data-testid="lang-switch">
      {t.language}
    </button>
  )
}

/**
 * SignIn takes the place of the chat while the page is not signed in: a
 * sign-in link whose token the server refused ("token rejected"), or no
 * valid cookie (a 401 from the API); each says what to do, in the page
 * language.
 */
function SignIn({ t, rejected }: { t: Dict; rejected: boolean }) {
  return (
    <main className="signin" data-testid="unauthorized" data-reason={rejected ? 'token_rejected' : 'signed_out'} aria-labelledby="signin-title">
      <h2 id="signin-title">{rejected ? t.tokenRejectedTitle : t.signInTitle}</h2>
      <p role="alert">{rejected ? t.tokenRejected : t.unauthorized}</p>
      <p>{t.signInHow}</p>
    </main>
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
function Welcome({ t, model, api, onOpenSession }: { t: Dict; model: string; api: Api; onOpenSession: (id: string) => void }) {
  const demo = model === DEMO_MODEL
  // Reopening the sign-in link lands here: questions that wait elsewhere
  // are named first, with the way to the oldest one.
  const [waiting, setWaiting] = useState<{ n: number; more: boolean; first?: InboxItem } | null>(null)
  useEffect(() => {
    let live = true
    api.inbox('pending', 10).then(
      (l) => live && setWaiting({ n: l.interactions?.length ?? 0, more: !!l.next, first: l.interactions?.[0] }),
      () => {},
    )
    return () => {
      live = false
    }
  }, [api])
  return (
    <section className="welcome" data-testid="welcome" aria-labelledby="welcome-title">
      {waiting?.first && (
        <p className="welcome-waiting" data-testid="welcome-waiting" role="status">
          {t.welcomeWaiting(waiting.n)}
          {waiting.more ? '+' : ''}
          <span className="welcome-waiting-title">{visible(waiting.first.sessionTitle || waiting.first.title) || t.untitledSession}</span>{' '}
          <button type="button" className="primary" data-testid="welcome-waiting-open" onClick={() => onOpenSession(waiting.first!.sessionId)}>
            {t.welcomeWaitingOpen}
          </button>
        </p>
      )}
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
  approval,
  t,
  onAnswer,
  onExpire,
  onRetryRun,
  onNewSession,
}: {
  item: Item
  /** approval is a tool item's approval card, when it has one. */
  approval?: CardItem
  t: Dict
  onAnswer: (c: CardItem, a: Answer) => void
  onExpire: (requestId: string) => void
  onRetryRun?: () => void
  /** onNewSession opens a new session (the action of a session that does not exist). */
  onNewSession?: () => void
}) {
  switch (item.kind) {
    case 'message':
      return (
        <article className={`msg msg-${item.role}`} data-testid={`message-${item.role}`} data-message-id={item.id}>
          <div className="msg-who">{item.role === 'user' ? t.you : t.assistant}</div>
          {item.role === 'assistant' && item.reasoning ? <Reasoning text={item.reasoning} /> : null}
          {item.role === 'user' ? <p className="msg-user-text">{item.content}</p> : item.content ? <Markdown text={item.content} /> : null}
          {item.stopped && (
            <div className="muted msg-stopped" data-testid="message-stopped">
              {t.stoppedReply}
            </div>
          )}
        </article>
      )
    case 'tool':
      // An ask tool is shown by its card; only a rejected call shows as a row.
      if (ASK_TOOLS.has(item.name) && !item.result?.isError) return null
      return <ToolCallView item={item} approval={approval} />
    case 'input':
      return <CardSlot card={item} onAnswer={onAnswer} onExpire={onExpire} />
    case 'run_error':
      return (
        <div className="notice notice-error run-error" role="alert" data-testid="run-error" data-code={item.code} data-run-id={item.runId}>
          <div>
            {t.errorPrefix}: {runErrorText(t, item.code)}
          </div>
          {item.message && <div className="run-error-detail muted">{item.message}</div>}
          {onRetryRun && (
            <button type="button" data-testid="retry-run" onClick={onRetryRun}>
              {t.retry}
            </button>
          )}
        </div>
      )
    case 'notice': {
      const run = item.code.startsWith('run_') && item.level === 'info' ? runText(t, item.code.slice(4)) : ''
      if (run)
        return (
          <div className="notice notice-info run-status" role="status" data-testid="run-status" data-run-status={item.code.slice(4)}>
            {run}
          </div>
        )
      if (item.context === 'load' && item.code === 'session_not_found')
        return (
          <div className="notice notice-info" role="status" data-testid="notice" data-code={item.code}>
            <div>{t.sessionGone}</div>
            {onNewSession && (
              <button type="button" className="primary" data-testid="gone-new-session" onClick={onNewSession}>
                {t.newSession}
              </button>
            )}
          </div>
        )
      return (
        <div className={`notice notice-${item.level}`} role={item.level === 'error' ? 'alert' : 'status'} data-testid="notice" data-code={item.code}>
          {item.level === 'error' ? `${t.errorPrefix}: ${noticeText(t, item)}` : item.message}
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

/**
 * Composer is the message box. Its text lives in the page (a refused
 * message comes back into it). While a question waits it does not send:
 * the hint above it says to answer the card first (the server would refuse
 * with 409 interaction_pending), once: the box then has no placeholder of
 * its own; the text can still be written.
 */
function Composer({
  t,
  running,
  waiting,
  approval,
  several,
  gone,
  text,
  setText,
  tooLong,
  onSend,
  onStop,
}: {
  t: Dict
  running: boolean
  waiting: boolean
  /** approval: what waits is an approval (the hint says approve or reject). */
  approval: boolean
  /** several: more than one question or approval waits (the approval hint says so). */
  several: boolean
  /** gone is a session that does not exist: the composer is disabled, text kept. */
  gone: boolean
  text: string
  setText: (s: string) => void
  /** tooLong is the server's 413 for the last send, with its bound when it said one. */
  tooLong: { max?: number } | null
  onSend: (s: string) => void
  onStop: () => void
}) {
  const blocked = running || waiting || gone
  const max = tooLong?.max ?? MAX_CHAT_MESSAGE
  // near: the counter shows (TextCounter, from 90 % of the bound, in code points).
  const near = text.length >= Math.floor(max * 0.9) && [...text].length >= Math.floor(max * 0.9)
  const hint = gone ? t.composerGone : waiting ? (approval ? (several ? t.composerWaitingApprovals : t.composerWaitingApproval) : t.composerWaiting) : ''
  const send = () => {
    const v = text.trim()
    if (!v || blocked) return
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
        placeholder={hint ? '' : t.messagePlaceholder}
        aria-describedby={[hint && 'composer-hint', near && 'composer-counter', tooLong && 'composer-error'].filter(Boolean).join(' ') || undefined}
        aria-invalid={tooLong ? true : undefined}
        disabled={gone}
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
            e.preventDefault()
            send()
          }
        }}
      />
      {hint && (
        <span className="hint composer-hint" id="composer-hint" data-testid="composer-hint">
          {hint}
        </span>
      )}
      {tooLong && (
        <span className="composer-error" id="composer-error" role="alert" data-testid="composer-error">
          {t.composerTooLong(tooLong.max)}
        </span>
      )}
      <TextCounter value={text} id="composer-counter" max={max} />
      {running ? (
        <button type="button" onClick={onStop} data-testid="stop">
          {t.stop}
        </button>
      ) : (
        <button type="submit" className="primary" data-testid="send" disabled={!text.trim() || waiting || gone}>
          {t.send}
        </button>
      )}
    </form>
  )
}

/**
 * noticeText words a failure notice in the page language: by its code
 * (errorText), and for a session that could not be read, what to do (an
 * unknown session, or another principal's, is also what a restart with
 * --db memory leaves: docs/design.md §4).
 */
function noticeText(t: Dict, n: NoticeItem): string {
  if (n.context !== 'load') return errorText(t, n)
  if (n.code === 'session_not_found') return t.sessionGone
  return `${t.loadFailed}: ${errorText(t, n)}`
}

/** runErrorText words a failed run's code (RunErrorView.code) in the page language. */
function runErrorText(t: Dict, code: string): string {
  switch (code) {
    case 'model_error':
      return t.runErrorModel
    case 'internal_error':
      return t.runErrorInternal
    case 'invalid_tool_arguments':
      return t.runErrorInvalidCalls
    case 'agent_not_found':
      return t.runErrorAgentGone
    case 'max_steps':
      return t.runErrorMaxSteps
    default:
      return t.runFailed
  }
}

/** lastOf is the last item that matches, or undefined. */
function lastOf<T extends Item>(items: Item[], match: (i: Item) => i is T): T | undefined {
  for (let n = items.length - 1; n >= 0; n--) {
    const i = items[n]
    if (match(i)) return i
  }
  return undefined
}
