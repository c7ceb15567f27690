import { useCallback, useEffect, useRef, useState } from 'react'
import { ApiError, Deduper, isInputRequest, UserInputCard, visible, type Answer, type Api, type InboxItem, type InputRequest, type SSEEvent } from 'luban-react'
import { reduceSession as reduce, type CardItem, type SessionState as ChatState } from 'luban-react'
import { followFeed } from '../feed'
import { dicts, hostLabel, RelativeTime, useLang, useNow, type Lang } from '../i18n'

/** The inbox's own strings (docs/design.md §12), by language. */
const TEXT: Record<Lang, {
  inbox: string
  title: string
  empty: string
  close: string
  open: string
  agent: string
  notify: string
  notifyOn: string
  notifyOff: string
  notifyDenied: string
  notification: string
  loadFailed: string
}> = {
  zh: {
    inbox: '收件箱',
    title: '等待回答的问题',
    empty: '没有等待回答的问题',
    close: '关闭',
    open: '打开会话',
    agent: '智能体',
    notify: '有新问题时通知我',
    notifyOn: '通知已开启（点击关闭）',
    notifyOff: '通知已关闭',
    notifyDenied: '浏览器已拒绝通知',
    notification: 'luban 有新问题等你回答',
    loadFailed: '收件箱加载失败',
  },
  en: {
    inbox: 'Inbox',
    title: 'Questions waiting for you',
    empty: 'No questions are waiting',
    close: 'Close',
    open: 'Open session',
    agent: 'Agent',
    notify: 'Notify me of new questions',
    notifyOn: 'Notifications on (click to turn off)',
    notifyOff: 'Notifications off',
    notifyDenied: 'Notifications are blocked by the browser',
    notification: 'luban has a question for you',
    loadFailed: 'Could not load the inbox',
  },
}

/** MAX is the page size of the inbox read; more shows as "500+". */
const MAX = 500
const NOTIFY_KEY = 'luban.notify'

/** InboxProps are the props of Inbox. */
export type InboxProps = {
  api: Api
  /** onOpenSession opens a session in the chat view. */
  onOpenSession: (sessionId: string) => void
  /**
   * onAnswered is told once an answer given in the inbox was accepted
   * (its user_input_resolved came), so an open chat of that session can
   * reload.
   */
  onAnswered?: (sessionId: string) => void
  /** feedRetryMs is the first reconnect delay of GET /api/events; tests shorten it. */
  feedRetryMs?: number
  /**
   * onFeed is told of every feed event (and with null each time the feed
   * is (re)opened), so the page can reread what the feed changes, such as
   * the session list, without a second subscription.
   */
  onFeed?: (ev: SSEEvent | null) => void
}

function cardOf(it: InboxItem): ChatState {
  const request: InputRequest = it
  const card: CardItem = { kind: 'input', key: `inbox-${it.id}`, request, phase: it.resumable === false ? 'not_resumable' : 'editing' }
  return { sessionId: it.sessionId, runId: it.runId, running: false, items: [card], lastEventId: 0 }
}

function notifyOptedIn(): boolean {
  try {
    return localStorage.getItem(NOTIFY_KEY) === '1'
  } catch {
    return false
  }
}

function setNotifyOptIn(on: boolean) {
  try {
    if (on) localStorage.setItem(NOTIFY_KEY, '1')
    else localStorage.removeItem(NOTIFY_KEY)
  } catch {
    // Private mode: the choice lasts for this page only.
  }
}

const canNotify = () => typeof window !== 'undefined' && 'Notification' in window

/** baseTitle is the tab title without the inbox count prefix "(n) ". */
const baseTitle = (s: string) => s.replace(/^\(\d+\+?\) /, '')

/**
 * Inbox is the header's inbox (docs/design.md §12): a button with the count of
 * questions waiting across all the caller's sessions (also put in the tab
 * title as "(n) luban"), and a panel listing them with their session's
 * title and agent, each answerable in place with the same card as the chat.
 * It follows the caller's GET /api/events for as long as it is mounted (one
 * subscription, reconnected with Last-Event-ID) and rereads the list on
 * every event. When the user opted in by a click, a question that arrives
 * while the tab is hidden shows a browser notification (plain text).
 */
export function Inbox({ api, onOpenSession, onAnswered, feedRetryMs, onFeed }: InboxProps) {
  const lang = useLang()
  const t = TEXT[lang]
  const [items, setItems] = useState<InboxItem[]>([])
  const [more, setMore] = useState(false)
  const [failed, setFailed] = useState(false)
  const [open, setOpen] = useState(false)
  // Cards answered here stay shown (as receipts) until the panel closes.
  const [kept, setKept] = useState<InboxItem[]>([])
  const [cards, setCards] = useState<Record<string, ChatState>>({})
  const [notify, setNotify] = useState(() => notifyOptedIn() && canNotify() && Notification.permission === 'granted')
  const [permission, setPermission] = useState(() => (canNotify() ? Notification.permission : 'denied'))
  const reads = useRef(0)
  const button = useRef<HTMLButtonElement>(null)
  const notifyRef = useRef(notify)
  notifyRef.current = notify
  const streams = useRef(new Set<AbortController>())
  const onAnsweredRef = useRef(onAnswered)
  onAnsweredRef.current = onAnswered
  const onFeedRef = useRef(onFeed)
  onFeedRef.current = onFeed

  const refresh = useCallback(() => {
    const n = ++reads.current
    api.inbox('pending', MAX).then(
      (list) => {
        if (n !== reads.current) return
        setItems(list.interactions ?? [])
        setMore(!!list.next)
        setFailed(false)
      },
      (e) => {
        if (n !== reads.current) return
        if (!(e instanceof ApiError && e.status === 401)) setFailed(true)
      },
    )
  }, [api])

  const onEvent = useCallback(
    (ev: SSEEvent) => {
      refresh()
      if (ev.event !== 'user_input_required' || !isInputRequest(ev.data)) return
      if (!notifyRef.current || document.visibilityState !== 'hidden' || !canNotify() || Notification.permission !== 'granted') return
      const req = ev.data
      try {
        const n = new Notification(t.notification, { body: visible(req.title), tag: req.id, lang: lang === 'zh' ? 'zh-CN' : 'en' })
        n.onclick = () => {
          window.focus()
          onOpenSession(req.sessionId)
          n.close()
        }
      } catch {
        // A browser that only notifies from a service worker: the count still shows.
      }
    },
    [refresh, t.notification, lang, onOpenSession],
  )
  const onEventRef = useRef(onEvent)
  onEventRef.current = onEvent

  useEffect(() => {
    const ac = new AbortController()
    const opened = () => {
      refresh()
      onFeedRef.current?.(null)
    }
    const event = (ev: SSEEvent) => {
      onEventRef.current(ev)
      onFeedRef.current?.(ev)
    }
    followFeed(api, { onOpen: opened, onEvent: event }, ac.signal, { retryDelayMs: feedRetryMs }).catch(() => {
      // 401 or an older server without /api/events: read the list once.
      if (!ac.signal.aborted) refresh()
    })
    const live = streams.current
    return () => {
      ac.abort()
      for (const s of live) s.abort()
      live.clear()
    }
  }, [api, refresh, feedRetryMs])

  const count = items.length
  const label = more ? `${count}+` : String(count)
  useEffect(() => {
    const base = baseTitle(document.title)
    document.title = count > 0 ? `(${label}) ${base}` : base
  }, [count, label])

  const dispatch = (it: InboxItem, a: Parameters<typeof reduce>[1]) =>
    setCards((prev) => ({ ...prev, [it.id]: reduce(prev[it.id] ?? cardOf(it), a) }))

  const answer = (it: InboxItem, a: Answer) => {
    const cur = cards[it.id]?.items.find((i): i is CardItem => i.kind === 'input' && i.request.id === it.id)
    if (cur && cur.phase !== 'editing') return
    setKept((k) => (k.some((x) => x.id === it.id) ? k : [...k, it]))
    dispatch(it, { type: 'cardSubmitting', requestId: it.id })
    const ac = new AbortController()
    streams.current.add(ac)
    let told = false
    api
      .continueChat(
        { sessionId: it.sessionId, requestId: it.id, ...a },
        new Deduper(),
        {
          onEvent: (ev) => {
            dispatch(it, { type: 'event', event: ev })
            const rid = (ev.data as { requestId?: unknown } | null)?.requestId
            if (ev.event === 'user_input_resolved' && rid === it.id && !told) {
              told = true
              onAnsweredRef.current?.(it.sessionId)
            }
          },
        },
        ac.signal,
      )
      .catch((e) => {
        if (ac.signal.aborted) return
        if (e instanceof ApiError) dispatch(it, { type: 'cardFailed', requestId: it.id, error: e })
      })
      .finally(() => {
        streams.current.delete(ac)
        refresh()
      })
  }

  const toggleNotify = async () => {
    if (!canNotify()) return
    if (notify) {
      setNotify(false)
      setNotifyOptIn(false)
      return
    }
    const p = Notification.permission === 'default' ? await Notification.requestPermission() : Notification.permission
    setPermission(p)
    const on = p === 'granted'
    setNotify(on)
    setNotifyOptIn(on)
  }

  const close = () => {
    setOpen(false)
    setKept([])
    setCards((prev) => {
      const next: Record<string, ChatState> = {}
      for (const it of items) if (prev[it.id]) next[it.id] = prev[it.id]
      return next
    })
  }

  const shown = [...items, ...kept.filter((k) => !items.some((i) => i.id === k.id))]

  return (
    <>
      <button
        ref={button}
        type="button"
        className={`inbox-button${count > 0 ? ' inbox-has' : ''}`}
        data-testid="inbox-button"
        aria-expanded={open}
        aria-controls="inbox-panel"
        onClick={() => (open ? close() : setOpen(true))}
      >
        {/* On a phone the word is hidden for room: the tray icon says what the count counts. */}
        <svg className="inbox-icon" data-testid="inbox-icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">
          <path d="M2 9.5 3.6 3h8.8L14 9.5V13H2z M2 9.5h3.5l1 1.5h3l1-1.5H14" fill="none" stroke="currentColor" strokeWidth="1.3" strokeLinejoin="round" />
        </svg>
        <span className="inbox-label">{t.inbox}</span>
        <span className="inbox-count" data-testid="inbox-count" data-count={count}>
          {label}
        </span>
      </button>
      {open && (
        <section
          id="inbox-panel"
          className="inbox-panel"
          data-testid="inbox"
          aria-labelledby="inbox-title"
          onKeyDown={(e) => {
            if (e.key === 'Escape') {
              close()
              button.current?.focus()
            }
          }}
        >
          <div className="inbox-head">
            <h2 id="inbox-title">{t.title}</h2>
            {canNotify() && (
              <button
                type="button"
                data-testid="inbox-notify"
                aria-pressed={notify}
                disabled={permission === 'denied' && !notify}
                onClick={() => void toggleNotify()}
              >
                {permission === 'denied' && !notify ? t.notifyDenied : notify ? t.notifyOn : t.notify}
              </button>
            )}
            <button type="button" data-testid="inbox-close" onClick={close}>
              {t.close}
            </button>
          </div>
          {failed && (
            <p className="notice notice-error" role="alert" data-testid="inbox-error">
              {t.loadFailed}
            </p>
          )}
          {shown.length === 0 && (
            <p className="muted" data-testid="inbox-empty">
              {t.empty}
            </p>
          )}
          <ul className="inbox-list">
            {shown.map((it) => (
              <InboxEntry
                key={it.id}
                item={it}
                state={cards[it.id] ?? cardOf(it)}
                lang={lang}
                openLabel={t.open}
                agentLabel={t.agent}
                onOpen={() => {
                  close()
                  onOpenSession(it.sessionId)
                }}
                onAnswer={(a) => answer(it, a)}
                onExpire={() => dispatch(it, { type: 'cardExpired', requestId: it.id })}
              />
            ))}
          </ul>
        </section>
      )}
    </>
  )
}

function InboxEntry({
  item,
  state,
  lang,
  openLabel,
  agentLabel,
  onOpen,
  onAnswer,
  onExpire,
}: {
  item: InboxItem
  state: ChatState
  lang: Lang
  openLabel: string
  agentLabel: string
  onOpen: () => void
  onAnswer: (a: Answer) => void
  onExpire: () => void
}) {
  const card = state.items.find((i): i is CardItem => i.kind === 'input' && i.request.id === item.id)
  const expire = useRef(onExpire)
  expire.current = onExpire
  const stableExpire = useCallback(() => expire.current(), [])
  const now = useNow()
  if (!card) return null
  return (
    <li className="inbox-item" data-testid="inbox-item" data-request-id={item.id} data-session-id={item.sessionId}>
      <div className="inbox-meta">
        <button type="button" className="inbox-session" data-testid="inbox-session" title={openLabel} onClick={onOpen}>
          {visible(item.sessionTitle) || dicts[lang].untitledSession}
        </button>
        {item.agent && (
          <span className="inbox-agent" data-testid="inbox-agent">
            {agentLabel}: {visible(item.agent)}
          </span>
        )}
        {item.source?.kind === 'mcp' && (
          <span className="inbox-source" data-testid="inbox-source">
            {dicts[lang].askedBy(visible(hostLabel(item.source)))}
          </span>
        )}
        <RelativeTime iso={item.createdAt} lang={lang} now={now} testId="inbox-time" />
      </div>
      <UserInputCard
        card={card}
        onSubmit={onAnswer}
        onCancel={() => onAnswer({ selections: [], customInput: '', cancelled: true })}
        onExpire={stableExpire}
      />
    </li>
  )
}
