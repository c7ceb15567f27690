import { useLang, type Lang } from '../i18n'

/**
 * keyText holds the strings of the cards' keyboard hints (lower case after
 * their key: "R accept recommended") and the "Accept recommended" button's
 * label (sentence case, like every button).
 */
export const keyText = {
  zh: {
    label: '快捷键',
    choose: '选择选项',
    submit: '提交',
    submitMultiline: '在多行框里提交',
    leave: '离开输入框',
    recommended: '采用推荐',
    acceptRecommended: '采用推荐',
    approve: '批准（在编辑框里：发送）',
    reject: '确认拒绝',
    done: '我已完成',
  },
  en: {
    label: 'Keys',
    choose: 'choose an option',
    submit: 'submit',
    submitMultiline: 'submit from a multi-line box',
    leave: 'leave the field',
    recommended: 'accept recommended',
    acceptRecommended: 'Accept recommended',
    approve: 'approve (in the editor: send)',
    reject: 'confirm reject',
    done: "I'm done",
  },
} satisfies Record<Lang, Record<string, string>>

/** KeyHintsProps say which keys a card offers. */
export type KeyHintsProps = {
  /** options: the card has options that 1–9 choose. */
  options?: boolean
  /** enter: Enter in a one-line field, radio or checkbox submits. */
  enter?: boolean
  /** multiline: the card has a textarea (Ctrl+Enter submits from it). */
  multiline?: boolean
  /** recommended: R accepts the recommended option(s). */
  recommended?: boolean
  /** primary: what Ctrl+Enter does outside any form ("approve", "done"). */
  primary?: 'approve' | 'reject' | 'done'
}

/**
 * KeyHints is the line under a card naming its keys (onCardKeyDown), as
 * text with <kbd> keys, in the page language. Touch screens without a
 * keyboard do not show it (cards.css).
 */
export function KeyHints({ options, enter, multiline, recommended, primary }: KeyHintsProps) {
  const k = keyText[useLang()]
  const parts: [string, string][] = []
  if (options) parts.push(['1–9', k.choose])
  if (enter) parts.push(['Enter', k.submit])
  if (primary) parts.push(['Ctrl+Enter', k[primary]])
  else if (multiline) parts.push(['Ctrl+Enter', k.submitMultiline])
  parts.push(['Esc', k.leave])
  if (recommended) parts.push(['R', k.recommended])
  return (
    <p className="key-hints" data-testid="key-hints">
      <span className="key-hints-label">{k.label}:</span>
      {parts.map(([key, what]) => (
        <span key={key} className="key-hint">
          <kbd>{key}</kbd> {what}
        </span>
      ))}
    </p>
  )
}
