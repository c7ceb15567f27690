import { describe, expect, it } from 'vitest'
import { DRAFT_PREFIX, DraftStore } from './drafts'

/** MemStorage is a Storage over a Map; quota (characters of keys and values) makes setItem throw as browsers do. */
class MemStorage implements Storage {
  map = new Map<string, string>()
  quota = Infinity
  get length() {
    return this.map.size
  }
  key(i: number) {
    return [...this.map.keys()][i] ?? null
  }
  getItem(k: string) {
    return this.map.has(k) ? this.map.get(k)! : null
  }
  setItem(k: string, v: string) {
    let used = 0
    for (const [kk, vv] of this.map) if (kk !== k) used += kk.length + vv.length
    if (used + k.length + v.length > this.quota) throw new DOMException('full', 'QuotaExceededError')
    this.map.set(k, String(v))
  }
  removeItem(k: string) {
    this.map.delete(k)
  }
  clear() {
    this.map.clear()
  }
}

function setup(opts: { max?: number; maxAgeMs?: number; maxChars?: number } = {}) {
  const storage = new MemStorage()
  let now = 1_000_000
  const store = new DraftStore({ storage, now: () => now, ...opts })
  return { storage, store, tick: (ms: number) => (now += ms), at: () => now }
}

describe('DraftStore', () => {
  it('keeps a draft per session and request and gives it back', () => {
    const { store } = setup()
    expect(store.load('s1', 'r1')).toBeUndefined()
    expect(store.save('s1', 'r1', { selections: ['a'], custom: '你好 🌏' })).toBe(true)
    expect(store.load('s1', 'r1')).toEqual({ selections: ['a'], custom: '你好 🌏' })
    // Another session (another principal's) with the same request id does not see it.
    expect(store.load('s2', 'r1')).toBeUndefined()
    expect(store.load('s1', 'r2')).toBeUndefined()
    store.save('s1', 'r1', { selections: [], custom: 'x' })
    expect(store.load('s1', 'r1')).toEqual({ selections: [], custom: 'x' })
    store.clear('s1', 'r1')
    expect(store.load('s1', 'r1')).toBeUndefined()
    expect(store.keys()).toEqual([])
  })

  it('encodes ids so a slash in one cannot collide with another pair', () => {
    const { store } = setup()
    store.save('a/b', 'c', 1)
    store.save('a', 'b/c', 2)
    expect(store.load('a/b', 'c')).toBe(1)
    expect(store.load('a', 'b/c')).toBe(2)
    expect(store.key('a/b', 'c').startsWith(DRAFT_PREFIX)).toBe(true)
  })

  it('drops a draft once its request expired, and one not saved for maxAgeMs', () => {
    const { store, tick, at, storage } = setup({ maxAgeMs: 10_000 })
    store.save('s', 'exp', 'v', new Date(at() + 5_000).toISOString())
    store.save('s', 'old', 'v')
    tick(4_999)
    expect(store.load('s', 'exp')).toBe('v')
    tick(1)
    expect(store.load('s', 'exp')).toBeUndefined()
    expect(storage.getItem(store.key('s', 'exp'))).toBeNull()
    expect(store.load('s', 'old')).toBe('v')
    tick(5_001)
    expect(store.load('s', 'old')).toBeUndefined()
    // A garbage expiresAt means "no expiry", not an error.
    expect(store.save('s', 'bad', 'v', 'not a date')).toBe(true)
    expect(store.load('s', 'bad')).toBe('v')
  })

  it('prunes stale drafts of requests never seen again on first use', () => {
    const storage = new MemStorage()
    let now = 0
    const a = new DraftStore({ storage, now: () => now })
    a.save('s', 'gone', 'v', new Date(1000).toISOString())
    a.save('s', 'kept', 'v')
    now = 2000
    const b = new DraftStore({ storage, now: () => now })
    expect(b.load('s', 'other')).toBeUndefined()
    expect(storage.getItem(b.key('s', 'gone'))).toBeNull()
    expect(storage.getItem(b.key('s', 'kept'))).not.toBeNull()
  })

  it('keeps at most max drafts, dropping the least recently saved', () => {
    const { store, tick } = setup({ max: 3 })
    for (const id of ['a', 'b', 'c']) {
      store.save('s', id, id)
      tick(1)
    }
    store.save('s', 'a', 'a2') // a is now the newest
    tick(1)
    store.save('s', 'd', 'd')
    expect(store.keys()).toHaveLength(3)
    expect(store.load('s', 'b')).toBeUndefined()
    expect(store.load('s', 'a')).toBe('a2')
    expect(store.load('s', 'c')).toBe('c')
    expect(store.load('s', 'd')).toBe('d')
  })

  it('treats corrupt entries as no draft and removes them; other keys are not touched', () => {
    const { store, storage } = setup()
    storage.setItem(store.key('s', 'x'), '{not json')
    storage.setItem(store.key('s', 'y'), JSON.stringify({ at: 'yesterday', v: 1 }))
    storage.setItem(store.key('s', 'z'), 'null')
    storage.setItem('luban.lang', 'en')
    expect(store.load('s', 'x')).toBeUndefined()
    expect(store.load('s', 'y')).toBeUndefined()
    expect(store.load('s', 'z')).toBeUndefined()
    expect(store.keys()).toEqual([])
    expect(storage.getItem('luban.lang')).toBe('en')
  })

  it('on a full storage drops its older drafts and tries once more; never throws', () => {
    const { store, storage, tick } = setup()
    for (const id of ['a', 'b', 'c', 'd']) {
      store.save('s', id, 'x'.repeat(100))
      tick(1)
    }
    storage.quota = [...storage.map].reduce((n, [k, v]) => n + k.length + v.length, 0) + 50
    expect(store.save('s', 'e', 'y'.repeat(100))).toBe(true)
    expect(store.load('s', 'e')).toBe('y'.repeat(100))
    expect(store.load('s', 'a')).toBeUndefined()
    expect(store.load('s', 'd')).toBe('x'.repeat(100))
    // Larger than the whole quota: not kept, no exception.
    expect(store.save('s', 'f', 'z'.repeat(10_000))).toBe(false)
    expect(store.load('s', 'f')).toBeUndefined()
  })

  it('does not keep an entry over maxChars (and removes the older, smaller one)', () => {
    const { store } = setup({ maxChars: 100 })
    expect(store.save('s', 'r', 'short')).toBe(true)
    expect(store.save('s', 'r', 'x'.repeat(200))).toBe(false)
    expect(store.load('s', 'r')).toBeUndefined()
  })

  it('works without storage, and with a storage whose every call throws', () => {
    const none = new DraftStore({ storage: null })
    expect(none.save('s', 'r', 1)).toBe(false)
    expect(none.load('s', 'r')).toBeUndefined()
    expect(none.prune()).toBe(0)
    const broken = {
      get length(): number {
        throw new Error('denied')
      },
      key: () => {
        throw new Error('denied')
      },
      getItem: () => {
        throw new Error('denied')
      },
      setItem: () => {
        throw new Error('denied')
      },
      removeItem: () => {
        throw new Error('denied')
      },
      clear: () => {},
    } as Storage
    const b = new DraftStore({ storage: broken })
    expect(b.save('s', 'r', 1)).toBe(false)
    expect(b.load('s', 'r')).toBeUndefined()
    expect(() => b.clear('s', 'r')).not.toThrow()
  })

  it('does not save a value JSON cannot hold', () => {
    const { store } = setup()
    const loop: Record<string, unknown> = {}
    loop.self = loop
    expect(store.save('s', 'r', loop)).toBe(false)
    expect(store.save('s', 'r', 10n)).toBe(false)
  })
})
