import type { CardItem } from '../card'
import { useLang } from '../i18n'
import { visible } from '../visible'
import { elicitationText, splitURL } from './elicitation'
import type { ElicitationAnswer } from './ElicitationForm'
import { KeyHints } from './KeyHints'

type Props = {
  card: CardItem
  /** onSubmit sends accept (the person is done at the URL) or decline. */
  onSubmit: (a: ElicitationAnswer) => void
  /** onCancel sends `cancelled: true` (MCP's cancel). */
  onCancel: () => void
}

/**
 * UrlElicitation is the card of an MCP server's URL-mode elicitation
 * (docs/design.md §11): the full URL as text with its host highlighted (as the
 * browser will resolve it), a link that opens it in a new tab only when the
 * person clicks (noopener noreferrer; the card never navigates by itself;
 * only http and https are linked), then the person says they are done
 * (accept), declines, or cancels.
 */
export function UrlElicitation({ card, onSubmit, onCancel }: Props) {
  const s = elicitationText[useLang()]
  const busy = card.phase === 'submitting'
  const u = splitURL(card.request.url ?? '')
  return (
    <div className="card-body" data-testid="url-elicitation">
      {card.request.server && (
        <p className="card-source" data-testid="elicitation-server">
          {s.fromServer(visible(card.request.server))}
        </p>
      )}
      <p>{s.urlIntro}</p>
      <p className="url-full" data-testid="url-full">
        <code>
          {visible(u.before)}
          <mark className="url-host" data-testid="url-host" title={s.urlHost}>
            {visible(u.host)}
          </mark>
          {visible(u.after)}
        </code>
      </p>
      {u.openable ? (
        <p>
          <a href={u.href} target="_blank" rel="noopener noreferrer" data-testid="url-open" className="button-link">
            {s.open}: {visible(u.host)}
          </a>
        </p>
      ) : (
        <p className="hint" data-testid="url-not-openable" role="status">
          {s.notOpenable}
        </p>
      )}
      <div className="actions">
        <button
          type="button"
          className="primary"
          data-testid="submit"
          data-primary
          aria-keyshortcuts="Control+Enter"
          disabled={busy}
          onClick={() => onSubmit({ decision: 'accept', cancelled: false })}
        >
          {s.done}
        </button>
        <button type="button" data-testid="decline" disabled={busy} onClick={() => onSubmit({ decision: 'decline', cancelled: false })}>
          {s.decline}
        </button>
        <button type="button" data-testid="cancel" disabled={busy} onClick={onCancel}>
          {s.cancel}
        </button>
      </div>
      <KeyHints primary="done" />
    </div>
  )
}
