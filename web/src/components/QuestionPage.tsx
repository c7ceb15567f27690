import { useCallback, useEffect, useState } from 'react'
import { ApiError, errorText, expiredReceipt, failCard, newCard, resolvedCard, UserInputCard, visible, type Answer, type Api, type CardItem, type InteractionView } from 'luban-react'
import { hostLabel, useT } from '../i18n'

/** questionFromPath is the request id of a /q/{requestId} path, else undefined. */
export function questionFromPath(path: string): string | undefined {
  const m = /^\/q\/([^/]+)$/.exec(path)
  return m ? decodeURIComponent(m[1]) : undefined
}

/** cardOf is the card of a question as read: open while pending, its receipt once resolved. */
function cardOf(v: InteractionView): CardItem {
  const c = newCard(v.request)
  return v.receipt ? { ...resolvedCard(c, v.receipt), runStatus: undefined } : c
}

type Load = { state: 'loading' } | { state: 'ready'; card: CardItem } | { state: 'failed'; code: string; message: string; status?: number }

/**
 * QuestionPage is /q/{requestId}: just that question (what an MCP host's
 * URL-mode request points at, docs/design.md §11), for the signed-in principal
 * (the page's cookie, as everywhere). It is answered here like in its
 * session; a resolved question shows its receipt; another principal's or
 * an unknown id says it is not found (the server's 404). A link opens the
 * whole session.
 */
export function QuestionPage({ api, requestId }: { api: Api; requestId: string }) {
  const t = useT()
  const [load, setLoad] = useState<Load>({ state: 'loading' })
  const setCard = (f: (c: CardItem) => CardItem) => setLoad((l) => (l.state === 'ready' ? { state: 'ready', card: f(l.card) } : l))

  useEffect(() => {
    let live = true
    api.interaction(requestId).then(
      (v) => live && setLoad({ state: 'ready', card: cardOf(v) }),
      (e) => {
        if (!live || (e instanceof DOMException && e.name === 'AbortError')) return
        const code = e instanceof ApiError ? e.code : 'network'
        setLoad({ state: 'failed', code, message: e instanceof Error ? e.message : String(e), status: e instanceof ApiError ? e.status : undefined })
      },
    )
    return () => {
      live = false
    }
  }, [api, requestId])

  const send = (a: Answer) => {
    if (load.state !== 'ready' || load.card.phase !== 'editing') return
    const sessionId = load.card.request.sessionId
    setCard((c) => ({ ...c, phase: 'submitting', fieldErrors: undefined, error: undefined }))
    api.answer({ ...a, sessionId, requestId }).then(
      (r) => setCard((c) => (r.receipt ? { ...resolvedCard(c, r.receipt), runStatus: undefined } : { ...c, phase: 'editing' })),
      (e) =>
        setCard((c) =>
          e instanceof ApiError ? failCard(c, e) : { ...c, phase: 'editing', error: { code: 'network', message: e instanceof Error ? e.message : String(e) } },
        ),
    )
  }
  const expire = useCallback(
    () => setCard((c) => (c.phase === 'editing' ? { ...resolvedCard(c, expiredReceipt(c.request)), runStatus: undefined } : c)),
    [],
  )

  return (
    <main className="question-page" data-testid="question-page" data-request-id={requestId}>
      <h2>{t.questionHeading}</h2>
      {load.state === 'loading' && <p className="muted">{t.running}</p>}
      {load.state === 'failed' && (
        <div className="notice notice-error" role="alert" data-testid="question-error" data-code={load.code}>
          {load.code === 'unauthorized' ? t.unauthorized : load.code === 'interaction_not_found' ? t.questionNotFound : `${t.loadFailed}: ${errorText(t, load)}`}
        </div>
      )}
      {load.state === 'ready' && (
        <>
          {load.card.request.source?.kind === 'mcp' && (
            <p className="card-source" data-testid="question-source">
              {t.askedBy(visible(hostLabel(load.card.request.source)))}
            </p>
          )}
          <UserInputCard
            card={load.card}
            onSubmit={send}
            onCancel={() => send({ selections: [], customInput: '', cancelled: true })}
            onExpire={expire}
          />
          <p>
            <a href={`/s/${encodeURIComponent(load.card.request.sessionId)}`} data-testid="question-session">
              {t.openSession}
            </a>
          </p>
        </>
      )}
    </main>
  )
}
