// The chat's scrolling (issue "a chat a person would choose"): the
// transcript sticks to the bottom while it grows unless the user scrolled
// up to read; a question card that arrives is scrolled into view and its
// first control focused (an approval: the card; a batch: its first
// unanswered question), so it is never below the fold unnoticed.
import { useCallback, useEffect, useLayoutEffect, useRef, type RefObject } from 'react'
import type { Item } from 'luban-react'

/** NEAR_BOTTOM_PX is how close to the bottom still counts as "at the bottom". */
const NEAR_BOTTOM_PX = 48

/** FOCUSABLE is a card's first control, in document order. */
const FOCUSABLE = 'input:not([disabled]), textarea:not([disabled]), select:not([disabled]), button:not([disabled])'

/**
 * useChatScroll keeps the scroller ref at the bottom while items change,
 * unless the user scrolled away from it (the returned onScroll tracks
 * that); and scrolls each new editable card into view and focuses its
 * first control (an approval card: the card itself), once per request id;
 * of several that arrive together, the first, and none while another open
 * card holds the focus.
 */
export function useChatScroll(ref: RefObject<HTMLElement | null>, items: Item[]): () => void {
  const stick = useRef(true)
  const seen = useRef(new Set<string>())
  // The scroller as of the last scroll event handled or the last scroll
  // made here: a scroll whose event has not come yet shows as a scrollTop
  // that differs from top.
  const top = useRef(0)
  const height = useRef(0)

  const onScroll = useCallback(() => {
    const el = ref.current
    if (!el) return
    stick.current = el.scrollHeight - el.scrollTop - el.clientHeight <= NEAR_BOTTOM_PX
    top.current = el.scrollTop
    height.current = el.scrollHeight
  }, [ref])

  useLayoutEffect(() => {
    const el = ref.current
    if (!el) return
    // Scroll events come at the next frame, so new items can render between
    // the user's scroll and its event: that scroll decides, measured against
    // the height it was made at (items only grow below it).
    if (el.scrollTop !== top.current && el.scrollHeight >= height.current) {
      stick.current = height.current - el.scrollTop - el.clientHeight <= NEAR_BOTTOM_PX
    }
    // A card being answered keeps its place: sticking to the bottom would
    // scroll the question it focused (a batch's later question) out of view.
    const active = el.ownerDocument.activeElement
    const answering = !!active && el.contains(active) && !!active.closest('[data-testid="input-card"][data-phase="editing"]')
    if (stick.current && !answering) el.scrollTop = el.scrollHeight
    top.current = el.scrollTop
    height.current = el.scrollHeight
  }, [ref, items])

  useEffect(() => {
    const el = ref.current
    if (!el) return
    let fresh: string | undefined
    for (const i of items) {
      if (i.kind !== 'input' || seen.current.has(i.request.id)) continue
      seen.current.add(i.request.id)
      // Several questions of one pause arrive together: the first, in call order, takes the focus.
      if (i.phase === 'editing' && fresh === undefined) fresh = i.request.id
    }
    if (!fresh) return
    const card = Array.from(el.querySelectorAll<HTMLElement>('[data-testid="input-card"]')).find((c) => c.dataset.requestId === fresh)
    if (!card) return
    // A card taller than the scroller (a phone, a batch) shows its top, the
    // question, rather than its bottom; a shorter one moves only as needed.
    card.scrollIntoView?.({ block: card.offsetHeight > el.clientHeight ? 'start' : 'nearest' })
    // An approval's first control is "always allow this tool", a standing
    // permission one Space would grant: the card itself takes the focus
    // (its name is the question; Ctrl+Enter approves, Tab reaches the rest).
    // A batch restored from its draft starts at its first question still
    // unanswered (AskUserForm marks them data-unanswered), scrolled into
    // view within the card when the card is taller than the transcript.
    const open = card.dataset.mode === 'approval' ? null : card.querySelector<HTMLElement>('[data-unanswered]')
    const first = card.dataset.mode === 'approval' ? card : (open?.querySelector<HTMLElement>(FOCUSABLE) ?? card.querySelector<HTMLElement>(FOCUSABLE))
    // A later question than the first: the whole of it when it fits, else
    // its top (its text, then the choices).
    if (open && open !== card.querySelector('fieldset.question')) open.scrollIntoView?.({ block: open.offsetHeight > el.clientHeight ? 'start' : 'nearest' })
    // An approval taller than the transcript (a phone) shows its buttons:
    // the last actions row is brought into view, the arguments above it.
    if (card.dataset.mode === 'approval') {
      const rows = card.querySelectorAll<HTMLElement>('.actions')
      rows[rows.length - 1]?.scrollIntoView?.({ block: 'nearest' })
    }
    // A card that comes while another open card holds the focus (the
    // questions of one pause streaming in one by one) leaves it there.
    const active = el.ownerDocument.activeElement
    const holder = active?.closest<HTMLElement>('[data-testid="input-card"][data-phase="editing"]')
    if (!holder || holder === card || !el.contains(holder)) first?.focus({ preventScroll: true })
    onScroll()
  }, [ref, items, onScroll])

  return onScroll
}
