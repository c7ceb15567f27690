import { useEffect, useRef, useState, type ReactNode } from 'react'
import { ApiError, visible, type Api, type SessionSummary } from 'luban-react'
import { RelativeTime, statusText, useLang, useNow, useT, type Dict } from '../i18n'

/**
 * StatusBadge is a session status as a localized label with a coloured dot
 * (data-status = the wire value).
 */
export function StatusBadge({ t, status, testId }: { t: Dict; status: string; testId: string }) {
  return (
    <span className={`status status-${status}`} data-testid={testId} data-status={status}>
      <span className="status-dot" aria-hidden="true" />
      {statusText(t, status)}
    </span>
  )
}

/** SessionListProps are the props of SessionList. */
export type SessionListProps = {
  api: Api
  sessions: SessionSummary[]
  currentId?: string
  onOpen: (id: string) => void
  /** onChanged is told after a rename or delete (id, and whether it is gone) so the page reloads the list. */
  onChanged: (id: string, deleted: boolean) => void
  /** onError sees a failure the list does not show itself (a 401). */
  onError?: (e: unknown) => boolean
  /** meta adds to a row's status line (the session's agent, say). */
  meta?: (s: SessionSummary) => ReactNode
}

/**
 * Editing is the row being renamed or asked about a delete. A delete's
 * force is whether confirming sends ?force=true (the run is active), and
 * waiting whether that run waits for an answer (worded as a question that
 * waits, not as a running task).
 */
type Editing = { id: string; kind: 'rename'; title: string } | { id: string; kind: 'delete'; force: boolean; waiting: boolean }

/** matches reports whether a session's title (or id) holds every word of the query, case-insensitively. */
export function matches(s: SessionSummary, query: string): boolean {
  const hay = `${s.title} ${s.id}`.toLocaleLowerCase()
  return query
    .toLocaleLowerCase()
    .split(/\s+/)
    .filter(Boolean)
    .every((w) => hay.includes(w))
}

/**
 * SessionList is the sidebar: a search box filtering by title, then one row
 * per session with open, rename (inline; Enter saves, Esc cancels) and
 * delete (asks first, the focus on Cancel, Esc cancels; a session whose
 * question waits is asked about once, for DELETE ?force=true; another whose
 * run turns out active is asked again before ?force=true, which stops the
 * run). Titles are text nodes.
 */
export function SessionList({ api, sessions, currentId, onOpen, onChanged, onError, meta }: SessionListProps) {
  const t = useT()
  const lang = useLang()
  const now = useNow()
  const [query, setQuery] = useState('')
  const [editing, setEditing] = useState<Editing | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<{ id: string; message: string } | null>(null)
  const shown = query.trim() ? sessions.filter((s) => matches(s, query)) : sessions
  // Where the keyboard focus goes once a rename or delete closes: back to
  // the session's own button, or to the search box when the session is gone.
  const root = useRef<HTMLDivElement>(null)
  const refocus = useRef<string | null>(null)
  const close = (id: string | null) => {
    refocus.current = id
    setEditing(null)
  }
  useEffect(() => {
    if (editing || refocus.current === null) return
    const id = refocus.current
    refocus.current = null
    const sel = id ? `[data-testid="session-${CSS.escape(id)}"]` : '[data-testid="session-search"]'
    root.current?.querySelector<HTMLElement>(sel)?.focus()
  }, [editing])

  const failed = (id: string, e: unknown) => {
    if (onError?.(e)) return
    setError({ id, message: e instanceof ApiError ? `${e.code}: ${e.message}` : String(e) })
  }

  const rename = async (id: string, title: string) => {
    setBusy(true)
    setError(null)
    try {
      await api.renameSession(id, title)
      close(id)
      onChanged(id, false)
    } catch (e) {
      failed(id, e)
    } finally {
      setBusy(false)
    }
  }

  const remove = async (id: string, force: boolean) => {
    setBusy(true)
    setError(null)
    try {
      await api.deleteSession(id, force)
      close('')
      onChanged(id, true)
    } catch (e) {
      if (e instanceof ApiError && e.code === 'run_in_progress') setEditing({ id, kind: 'delete', force: true, waiting: false })
      else failed(id, e)
    } finally {
      setBusy(false)
    }
  }

  return (
    <div ref={root} className="session-list-body">
      {sessions.length > 0 && (
        <input
          type="search"
          className="session-search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          placeholder={t.searchSessions}
          aria-label={t.searchSessions}
          data-testid="session-search"
        />
      )}
      {sessions.length === 0 && <p className="muted">{t.noSessions}</p>}
      {sessions.length > 0 && shown.length === 0 && (
        <p className="muted" data-testid="no-match">
          {t.noMatch}
        </p>
      )}
      <ul>
        {shown.map((s) => {
          const ed = editing?.id === s.id ? editing : null
          // A session without a title (none is made so, but older rows and
          // other writers may have one) reads as such, never as its id.
          const title = visible(s.title) || t.untitledSession
          return (
            <li key={s.id} className="session-row" data-testid={`session-row-${s.id}`}>
              {ed?.kind === 'rename' ? (
                <form
                  className="session-rename"
                  onSubmit={(e) => {
                    e.preventDefault()
                    if (ed.title.trim()) void rename(s.id, ed.title)
                  }}
                >
                  <input
                    value={ed.title}
                    autoFocus
                    maxLength={200}
                    aria-label={t.renameLabel}
                    data-testid="rename-input"
                    onChange={(e) => setEditing({ ...ed, title: e.target.value })}
                    onKeyDown={(e) => {
                      if (e.key === 'Escape') close(s.id)
                    }}
                  />
                  <button type="submit" className="primary" disabled={busy || !ed.title.trim()} data-testid="rename-save">
                    {t.save}
                  </button>
                  <button type="button" onClick={() => close(s.id)} data-testid="rename-cancel">
                    {t.cancel}
                  </button>
                </form>
              ) : (
                <div className="session-line">
                  <button
                    type="button"
                    className="session"
                    aria-current={s.id === currentId ? 'page' : undefined}
                    data-testid={`session-${s.id}`}
                    onClick={() => onOpen(s.id)}
                  >
                    <span className={`session-title${s.title ? '' : ' session-title-untitled'}`} data-testid={`session-title-${s.id}`}>
                      {title}
                    </span>
                    <span className="session-meta">
                      <StatusBadge t={t} status={s.status} testId={`session-status-${s.id}`} />
                      {meta?.(s)}
                      <RelativeTime iso={s.updatedAt} lang={lang} now={now} testId={`session-time-${s.id}`} />
                    </span>
                  </button>
                  <span className="session-actions">
                    <button
                      type="button"
                      className="icon"
                      aria-label={`${t.rename}: ${title}`}
                      title={t.rename}
                      data-testid={`rename-${s.id}`}
                      onClick={() => setEditing({ id: s.id, kind: 'rename', title: s.title })}
                    >
                      ✎
                    </button>
                    <button
                      type="button"
                      className="icon"
                      aria-label={`${t.delete}: ${title}`}
                      title={t.delete}
                      data-testid={`delete-${s.id}`}
                      onClick={() => setEditing({ id: s.id, kind: 'delete', force: s.status === 'waiting_input', waiting: s.status === 'waiting_input' })}
                    >
                      🗑
                    </button>
                  </span>
                </div>
              )}
              {ed?.kind === 'delete' && (
                <div
                  className="session-confirm"
                  role="group"
                  aria-label={t.delete}
                  data-testid="delete-confirm"
                  onKeyDown={(e) => {
                    if (e.key === 'Escape') {
                      e.preventDefault()
                      close(s.id)
                    }
                  }}
                >
                  <span>{ed.waiting ? t.deleteWaiting : ed.force ? t.deleteRunning : t.deleteConfirm}</span>
                  <button
                    type="button"
                    className="danger"
                    disabled={busy}
                    data-testid={ed.force ? 'delete-force' : 'delete-yes'}
                    onClick={() => void remove(s.id, ed.force)}
                  >
                    {ed.waiting ? t.deleteWaitingAction : ed.force ? t.stopAndDelete : t.delete}
                  </button>
                  <button type="button" autoFocus onClick={() => close(s.id)} data-testid="delete-no">
                    {t.cancel}
                  </button>
                </div>
              )}
              {error?.id === s.id && (
                <p className="card-error" role="alert" data-testid="session-error">
                  {error.message}
                </p>
              )}
            </li>
          )
        })}
      </ul>
    </div>
  )
}
