import { renderHook } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import type { Item } from 'luban-react'
import { useChatScroll } from './useChatScroll'

// scroller is a div with the box of a scrolled transcript (jsdom lays
// nothing out): clientHeight 100, scrollHeight as set, scrollTop clamped
// to [0, scrollHeight - clientHeight] like a browser's.
function scroller(height: number) {
  const el = document.createElement('div')
  let top = 0
  const box = { height }
  Object.defineProperty(el, 'clientHeight', { get: () => 100 })
  Object.defineProperty(el, 'scrollHeight', { get: () => box.height })
  Object.defineProperty(el, 'scrollTop', {
    get: () => top,
    set: (v: number) => {
      top = Math.max(0, Math.min(v, box.height - 100))
    },
  })
  return { el, box }
}

const msg = (n: number): Item[] =>
  Array.from({ length: n }, (_, i) => ({ kind: 'message', key: `m${i}`, role: 'assistant', text: `${i}` }) as unknown as Item)

describe('useChatScroll', () => {
  it('sticks to the bottom while items grow', () => {
    const { el, box } = scroller(1000)
    const ref = { current: el }
    const { rerender } = renderHook(({ items }) => useChatScroll(ref, items), { initialProps: { items: msg(1) } })
    expect(el.scrollTop).toBe(900)
    box.height = 1500
    rerender({ items: msg(2) })
    expect(el.scrollTop).toBe(1400)
  })

  it('a scroll up whose event has not come yet keeps the transcript where the user put it', () => {
    const { el, box } = scroller(1000)
    const ref = { current: el }
    const { rerender, result } = renderHook(({ items }) => useChatScroll(ref, items), { initialProps: { items: msg(1) } })
    expect(el.scrollTop).toBe(900)
    el.scrollTop = 0 // the user scrolls up; the scroll event is still to come
    box.height = 1500
    rerender({ items: msg(2) }) // an event of the run renders first
    expect(el.scrollTop).toBe(0)
    result.current() // the scroll event
    box.height = 2000
    rerender({ items: msg(3) })
    expect(el.scrollTop).toBe(0)

    // Back at the bottom (event still to come): it sticks again.
    el.scrollTop = 1900
    box.height = 2500
    rerender({ items: msg(4) })
    expect(el.scrollTop).toBe(2400)
  })

  it('focuses a new question card\'s first control, and an approval card itself, never its "always allow" box', () => {
    const { el } = scroller(1000)
    document.body.append(el)
    const card = (id: string, mode: string) => {
      const c = document.createElement('section')
      c.dataset.testid = 'input-card'
      c.dataset.requestId = id
      c.dataset.mode = mode
      c.tabIndex = -1
      c.innerHTML = '<input type="checkbox" data-testid="first"><button>ok</button>'
      el.append(c)
      return c
    }
    const item = (id: string, mode: string) => ({ kind: 'input', key: id, phase: 'editing', request: { id, mode } }) as unknown as Item
    const q = card('q1', 'single')
    const ref = { current: el }
    const { rerender } = renderHook(({ items }) => useChatScroll(ref, items), { initialProps: { items: [item('q1', 'single')] } })
    expect(document.activeElement).toBe(q.querySelector('[data-testid="first"]'))
    const a = card('ap1', 'approval')
    rerender({ items: [item('q1', 'single'), item('ap1', 'approval')] })
    expect(document.activeElement).toBe(a)
    el.remove()
  })

  it('of several cards that arrive together (one pause), focuses the first', () => {
    const { el } = scroller(1000)
    document.body.append(el)
    const cards = ['ap1', 'ap2'].map((id) => {
      const c = document.createElement('section')
      c.dataset.testid = 'input-card'
      c.dataset.requestId = id
      c.dataset.mode = 'approval'
      c.tabIndex = -1
      el.append(c)
      return c
    })
    const items = ['ap1', 'ap2'].map((id) => ({ kind: 'input', key: id, phase: 'editing', request: { id, mode: 'approval' } })) as unknown as Item[]
    const { rerender } = renderHook(({ items }) => useChatScroll({ current: el }, items), { initialProps: { items } })
    expect(document.activeElement).toBe(cards[0])
    // One more that comes while the first (open) holds the focus leaves it there.
    cards[0].dataset.phase = 'editing'
    const c3 = document.createElement('section')
    c3.dataset.testid = 'input-card'
    c3.dataset.requestId = 'ap3'
    c3.dataset.mode = 'approval'
    c3.tabIndex = -1
    el.append(c3)
    rerender({ items: [...items, { kind: 'input', key: 'ap3', phase: 'editing', request: { id: 'ap3', mode: 'approval' } } as unknown as Item] })
    expect(document.activeElement).toBe(cards[0])
    el.remove()
  })

  it('brings a new approval card\'s last actions row into view (a phone: the buttons, not only the card\'s top)', () => {
    const { el } = scroller(1000)
    document.body.append(el)
    const scrolled: string[] = []
    const c = document.createElement('section')
    c.dataset.testid = 'input-card'
    c.dataset.requestId = 'ap1'
    c.dataset.mode = 'approval'
    c.tabIndex = -1
    c.innerHTML = '<div class="actions" data-row="edit"></div><div class="actions" data-row="main"><button>approve</button></div>'
    c.scrollIntoView = () => scrolled.push('card')
    for (const row of c.querySelectorAll<HTMLElement>('.actions')) row.scrollIntoView = () => scrolled.push(row.dataset.row!)
    el.append(c)
    const items = [{ kind: 'input', key: 'ap1', phase: 'editing', request: { id: 'ap1', mode: 'approval' } }] as unknown as Item[]
    renderHook(() => useChatScroll({ current: el }, items))
    expect(scrolled).toEqual(['card', 'main'])
    el.remove()
  })
})
