// Keyboard use of a card, one handler on the card element for every kind
// (ask_user, AskUser, elicitation form and url, approval). The card marks
// what the keys act on with data attributes:
//   data-key-group     a set of options (radios or checkboxes)
//   data-key-option    one option input of its group (1–9 in order)
//   data-key-focus     on an option: the id of the element to focus once it is chosen
//   data-key-recommended  the "accept recommended" button
//   data-primary       the card's main action when no <form> holds the focus
//   data-key-enter     on a textarea: Enter submits like a one-line field (Shift+Enter is a newline)
import type React from 'react'

const NOT_TEXT = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color'])

/** isTextField reports whether keys typed into el are text (inputs that take text, textareas, selects, editable content). */
export function isTextField(el: Element | null): boolean {
  if (!el) return false
  if (el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement) return true
  if (el instanceof HTMLInputElement) return !NOT_TEXT.has(el.type)
  return el instanceof HTMLElement && el.isContentEditable
}

/** submitFrom submits the form that holds el inside card, else clicks the card's primary action; false when there is neither. */
function submitFrom(card: HTMLElement, el: HTMLElement): boolean {
  const form = el.closest('form')
  if (form && card.contains(form)) {
    form.requestSubmit()
    return true
  }
  const primary = card.querySelector<HTMLButtonElement>('[data-primary]')
  if (!primary) return false
  primary.click()
  return true
}

/** lastGroup is, per card, the option group the keys last acted in or Esc left. */
const lastGroup = new WeakMap<HTMLElement, HTMLElement>()

/**
 * chooseOption chooses (radio) or toggles (checkbox) the n-th option
 * (0-based) of the group the focus is in; from outside every group, of the
 * first group with nothing chosen, else of the group last used, else of
 * the first.
 */
function chooseOption(card: HTMLElement, target: HTMLElement, n: number): boolean {
  const groups = Array.from(card.querySelectorAll<HTMLElement>('[data-key-group]'))
  if (!groups.length) return false
  const options = (g: HTMLElement) => Array.from(g.querySelectorAll<HTMLInputElement>('input[data-key-option]'))
  const last = lastGroup.get(card)
  const group =
    target.closest<HTMLElement>('[data-key-group]') ??
    groups.find((g) => !options(g).some((o) => o.checked)) ??
    (last && groups.includes(last) ? last : groups[0])
  const opt = options(group)[n]
  if (!opt || opt.disabled) return false
  lastGroup.set(card, group)
  opt.click()
  const then = opt.dataset.keyFocus ? card.ownerDocument.getElementById(opt.dataset.keyFocus) : null
  ;(then ?? opt).focus()
  return true
}

/**
 * onCardKeyDown is a card's keyboard: Enter in a one-line field, a radio,
 * a checkbox or a textarea marked data-key-enter submits the card's form (Ctrl+Enter or ⌘+Enter anywhere
 * in the card, textareas included; the primary action where no form holds
 * the focus); Esc moves the focus from a control to the card itself;
 * outside text fields, 1–9 choose or toggle the options of the focused
 * group (see chooseOption), and R presses "accept recommended". Keys it acts on do nothing else.
 */
export function onCardKeyDown(e: React.KeyboardEvent<HTMLElement>): void {
  if (e.defaultPrevented || e.nativeEvent.isComposing || e.altKey) return
  const card = e.currentTarget
  const target = e.target as HTMLElement
  const mod = e.ctrlKey || e.metaKey
  let done = false
  if (e.key === 'Escape' && !mod && target !== card) {
    const group = target.closest<HTMLElement>('[data-key-group]')
    if (group && card.contains(group)) lastGroup.set(card, group)
    card.focus()
    done = true
  } else if (e.key === 'Enter' && !e.shiftKey) {
    if (mod) done = submitFrom(card, target)
    else if (target instanceof HTMLInputElement && !['button', 'submit', 'reset', 'image', 'file'].includes(target.type) && target.closest('form'))
      done = submitFrom(card, target)
    else if (target instanceof HTMLTextAreaElement && target.dataset.keyEnter !== undefined && target.closest('form')) done = submitFrom(card, target)
  } else if (!mod && !e.shiftKey && !isTextField(target)) {
    if (/^[1-9]$/.test(e.key)) done = chooseOption(card, target, Number(e.key) - 1)
    else if (e.key === 'r' || e.key === 'R') {
      const b = card.querySelector<HTMLButtonElement>('[data-key-recommended]')
      if (b && !b.disabled) {
        b.click()
        done = true
      }
    }
  }
  if (done) {
    e.preventDefault()
    e.stopPropagation()
  }
}
