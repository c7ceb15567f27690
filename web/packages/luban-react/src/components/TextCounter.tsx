import { useLang } from '../i18n'

/**
 * MAX_FREE_TEXT is the server's bound on what a person types into one box
 * (askuser.MaxCustomInput, approval.MaxMessageLen): 8,000 characters,
 * counted as code points. Longer text is refused with 413 payload_too_large.
 */
export const MAX_FREE_TEXT = 8000

/**
 * MAX_CHAT_MESSAGE is the server's bound on one chat message (POST
 * /api/chat `message`): 32,000 characters, counted as code points. Longer
 * text is refused with 413 payload_too_large.
 */
export const MAX_CHAT_MESSAGE = 32000

/**
 * TextCounter is the "7,215 / 8,000" line under a free-text box once its
 * text nears max (default MAX_FREE_TEXT) — from 90 % of it, nothing before —
 * marked over-limit above it. It counts code points, as the server does.
 */
export function TextCounter({ value, id, max = MAX_FREE_TEXT }: { value: string; id?: string; max?: number }) {
  const lang = useLang()
  let n = 0
  for (const _ of value) n++
  if (n < Math.floor(max * 0.9)) return null
  const over = n > max
  const fmt = (x: number) => x.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-US')
  const text =
    lang === 'zh'
      ? `${fmt(n)} / ${fmt(max)} 字${over ? `，超出 ${fmt(n - max)} 字` : ''}`
      : `${fmt(n)} / ${fmt(max)} characters${over ? `, ${fmt(n - max)} over` : ''}`
  return (
    <div className={`text-counter${over ? ' text-counter-over' : ''}`} id={id} data-testid="text-counter" data-over={over || undefined}>
      {text}
    </div>
  )
}
