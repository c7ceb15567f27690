import { useLang } from '../i18n'

/**
 * MAX_FREE_TEXT is the server's bound on what a person types into one box
 * (askuser.MaxCustomInput, approval.MaxMessageLen): 8,000 characters,
 * counted as code points. Longer text is refused with 413 payload_too_large.
 */
export const MAX_FREE_TEXT = 8000

/** counterFrom is the length at which TextCounter starts to show (90 % of the bound). */
const counterFrom = Math.floor(MAX_FREE_TEXT * 0.9)

/**
 * TextCounter is the "7,215 / 8,000" line under a free-text box once its
 * text nears MAX_FREE_TEXT (nothing before), marked over-limit above it.
 * It counts code points, as the server does.
 */
export function TextCounter({ value, id }: { value: string; id?: string }) {
  const lang = useLang()
  let n = 0
  for (const _ of value) n++
  if (n < counterFrom) return null
  const over = n > MAX_FREE_TEXT
  const fmt = (x: number) => x.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-US')
  const text =
    lang === 'zh'
      ? `${fmt(n)} / ${fmt(MAX_FREE_TEXT)} 字${over ? `，超出 ${fmt(n - MAX_FREE_TEXT)} 字` : ''}`
      : `${fmt(n)} / ${fmt(MAX_FREE_TEXT)} characters${over ? `, ${fmt(n - MAX_FREE_TEXT)} over` : ''}`
  return (
    <div className={`text-counter${over ? ' text-counter-over' : ''}`} id={id} data-testid="text-counter" data-over={over || undefined}>
      {text}
    </div>
  )
}
