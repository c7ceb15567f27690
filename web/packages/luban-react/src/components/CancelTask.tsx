import { useEffect, useId, useRef, useState } from 'react'
import { useT } from '../i18n'

/**
 * CancelTask is the "Cancel the task" action of every card whose cancel
 * ends the run (ask_user, AskUser, approval): one wording on all of them,
 * and a confirmation before anything is sent, like the session delete's:
 * the focus lands on the safe choice ("Keep answering"), Esc or that
 * button closes it and gives the focus back to "Cancel the task"; only
 * the confirm button calls onCancel.
 */
export function CancelTask({ onCancel, disabled }: { onCancel: () => void; disabled?: boolean }) {
  const t = useT()
  const id = useId()
  const [asking, setAsking] = useState(false)
  const button = useRef<HTMLButtonElement>(null)
  const refocus = useRef(false)
  useEffect(() => {
    if (asking || !refocus.current) return
    refocus.current = false
    button.current?.focus()
  }, [asking])
  const close = () => {
    refocus.current = true
    setAsking(false)
  }
  if (!asking)
    return (
      <button type="button" ref={button} data-testid="cancel" disabled={disabled} onClick={() => setAsking(true)}>
        {t.cancelTask}
      </button>
    )
  return (
    <span
      className="cancel-confirm"
      role="group"
      aria-labelledby={`${id}-q`}
      data-testid="cancel-confirm"
      onKeyDown={(e) => {
        if (e.key !== 'Escape') return
        // Handled here: the card's own Esc (leave the field) must not run too.
        e.preventDefault()
        e.stopPropagation()
        close()
      }}
    >
      <span id={`${id}-q`}>{t.cancelTaskConfirm}</span>
      <button type="button" className="danger" data-testid="cancel-yes" disabled={disabled} onClick={onCancel}>
        {t.cancelTask}
      </button>
      <button type="button" autoFocus data-testid="cancel-no" onClick={close}>
        {t.keepAnswering}
      </button>
    </span>
  )
}
