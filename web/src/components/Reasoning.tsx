import { useT } from '../i18n'
import { visible } from 'luban-react'

/**
 * Reasoning shows a reasoning model's thinking for one assistant message,
 * folded: a `<details>` closed by default whose summary says what it is and
 * how long it is. The text is model output, rendered as plain text (never
 * markdown or HTML), bidirectional controls made visible; it is never part
 * of the answer text (docs/models.md "Reasoning models").
 */
export function Reasoning({ text }: { text: string }) {
  const t = useT()
  return (
    <details className="reasoning" data-testid="reasoning">
      <summary>
        {t.reasoning} <span className="reasoning-size">({t.reasoningChars(Array.from(text).length)})</span>
      </summary>
      <div className="reasoning-text" data-testid="reasoning-text">
        {visible(text)}
      </div>
    </details>
  )
}
