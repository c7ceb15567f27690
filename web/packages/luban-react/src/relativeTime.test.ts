import { describe, expect, it } from 'vitest'
import { relativeTime } from './i18n'

// The wording of docs/design.md §24 "Times", which `luban chat` matches.
describe('relativeTime', () => {
  const now = new Date('2026-03-10T12:00:00Z').getTime()
  const ago = (ms: number) => new Date(now - ms).toISOString()
  const m = 60_000
  const h = 60 * m
  const d = 24 * h
  it.each([
    [0, '刚刚', 'just now'],
    [59_999, '刚刚', 'just now'],
    [-5 * m, '刚刚', 'just now'], // a clock a little ahead
    [m, '1分钟前', '1 minute ago'],
    [3 * m + 59_000, '3分钟前', '3 minutes ago'],
    [59 * m, '59分钟前', '59 minutes ago'],
    [h, '1小时前', '1 hour ago'],
    [23 * h + 59 * m, '23小时前', '23 hours ago'],
    [d, '1天前', '1 day ago'],
    [2 * d, '2天前', '2 days ago'],
    [6 * d + 23 * h, '6天前', '6 days ago'],
  ])('%i ms ago: %s / %s', (ms, zh, en) => {
    expect(relativeTime(ago(ms), 'zh', now)).toBe(zh)
    expect(relativeTime(ago(ms), 'en', now)).toBe(en)
  })

  it('from 7 days on: the local date, YYYY-MM-DD, in both languages', () => {
    const t = new Date(2026, 1, 3, 9, 30).getTime() // 3 Feb 2026, local time
    expect(relativeTime(new Date(t).toISOString(), 'zh', t + 7 * d)).toBe('2026-02-03')
    expect(relativeTime(new Date(t).toISOString(), 'en', t + 40 * d)).toBe('2026-02-03')
  })

  it('empty stays empty; a time that does not parse is shown as sent', () => {
    expect(relativeTime('', 'zh', now)).toBe('')
    expect(relativeTime(undefined, 'en', now)).toBe('')
    expect(relativeTime('yesterday-ish', 'en', now)).toBe('yesterday-ish')
  })
})
