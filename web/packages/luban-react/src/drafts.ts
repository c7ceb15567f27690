// Drafts of open cards: what a person chose and typed on a card that is
// still waiting, kept in the browser's storage so a reload (or a crash of
// the tab) gives it back. A draft is keyed by session and request id: a
// session belongs to one principal and a request to one session, so two
// people signed in on one browser never see each other's drafts (the
// server shows a request only to its owner). The store is bounded and
// never throws: a full or unavailable storage, or an entry that is not
// our JSON, just means no draft.
import { createContext, useContext, useEffect, useRef, useState, type Dispatch, type SetStateAction } from 'react'
import type { InputRequest } from './types'

/** DRAFT_PREFIX starts every key the default store writes. */
export const DRAFT_PREFIX = 'luban.draft.v1:'

/** DraftStoreOptions configure a DraftStore; every field has a default. */
export type DraftStoreOptions = {
  /** storage holds the drafts; default window.localStorage (none: nothing is kept). */
  storage?: Storage | null
  /** prefix starts every key; default DRAFT_PREFIX. */
  prefix?: string
  /** max is how many drafts are kept; the least recently saved go first; default 50. */
  max?: number
  /** maxAgeMs drops a draft not saved for this long; default 7 days. */
  maxAgeMs?: number
  /** maxChars is the longest entry (JSON characters) written; longer ones are not kept; default 200 000. */
  maxChars?: number
  /** now is the clock in Unix milliseconds; default Date.now. */
  now?: () => number
}

/** Entry is one stored draft: its value, when it was saved, when its request expires (Unix ms). */
type Entry = { v: unknown; at: number; exp?: number }

/** browserStorage is window.localStorage, or null where reading it throws (sandboxed frames, disabled storage). */
function browserStorage(): Storage | null {
  try {
    return typeof window !== 'undefined' && window.localStorage ? window.localStorage : null
  } catch {
    return null
  }
}

/**
 * DraftStore keeps one draft per (sessionId, requestId) as JSON
 * `{"v": value, "at": savedAtMs, "exp": expiresAtMs}` under
 * `<prefix><sessionId>/<requestId>` (both URI-encoded). load drops what is
 * corrupt, past its request's expiry or older than maxAgeMs; save keeps at
 * most max drafts (the least recently saved are dropped) and, when the
 * storage is full, drops the older half of the drafts and tries once more.
 * No method throws.
 */
export class DraftStore {
  private storage: Storage | null
  private prefix: string
  private max: number
  private maxAgeMs: number
  private maxChars: number
  private now: () => number
  private pruned = false

  constructor(opts: DraftStoreOptions = {}) {
    this.storage = opts.storage === undefined ? browserStorage() : opts.storage
    this.prefix = opts.prefix ?? DRAFT_PREFIX
    this.max = Math.max(1, opts.max ?? 50)
    this.maxAgeMs = opts.maxAgeMs ?? 7 * 24 * 3600_000
    this.maxChars = opts.maxChars ?? 200_000
    this.now = opts.now ?? Date.now
  }

  /** key is the storage key of a request's draft. */
  key(sessionId: string, requestId: string): string {
    return `${this.prefix}${encodeURIComponent(sessionId)}/${encodeURIComponent(requestId)}`
  }

  /** load is the draft of a request, or undefined (none, corrupt, expired: the last two are removed). */
  load(sessionId: string, requestId: string): unknown {
    this.pruneOnce()
    const key = this.key(sessionId, requestId)
    const e = this.read(key)
    if (!e) return undefined
    if (this.stale(e)) {
      this.remove(key)
      return undefined
    }
    return e.v
  }

  /**
   * save stores value as the request's draft (expiresAt: the request's
   * RFC 3339 expiry, after which the draft is dropped unread). It reports
   * whether the draft was kept.
   */
  save(sessionId: string, requestId: string, value: unknown, expiresAt?: string): boolean {
    if (!this.storage) return false
    this.pruneOnce()
    const exp = expiresAt ? Date.parse(expiresAt) : NaN
    const entry: Entry = { v: value, at: this.now(), ...(Number.isFinite(exp) ? { exp } : {}) }
    let json: string
    try {
      json = JSON.stringify(entry)
    } catch {
      return false
    }
    const key = this.key(sessionId, requestId)
    if (json.length > this.maxChars) {
      this.remove(key)
      return false
    }
    if (this.write(key, json)) {
      this.prune()
      return true
    }
    // Full: make room among our own drafts, then try once more.
    const mine = this.entries().filter((x) => x.key !== key)
    for (const x of mine.slice(0, Math.ceil(mine.length / 2))) this.remove(x.key)
    return this.write(key, json)
  }

  /** clear removes a request's draft (it was answered, cancelled or expired). */
  clear(sessionId: string, requestId: string): void {
    this.remove(this.key(sessionId, requestId))
  }

  /**
   * prune removes corrupt and stale drafts, then the least recently saved
   * beyond max; it returns how many drafts remain.
   */
  prune(): number {
    const live: { key: string; at: number }[] = []
    for (const key of this.keys()) {
      const e = this.read(key)
      if (!e || this.stale(e)) this.remove(key)
      else live.push({ key, at: e.at })
    }
    live.sort((a, b) => a.at - b.at)
    while (live.length > this.max) this.remove(live.shift()!.key)
    return live.length
  }

  /** keys lists the storage keys of every draft this store wrote (any state). */
  keys(): string[] {
    const s = this.storage
    if (!s) return []
    const out: string[] = []
    try {
      for (let i = 0; i < s.length; i++) {
        const k = s.key(i)
        if (k !== null && k.startsWith(this.prefix)) out.push(k)
      }
    } catch {
      return []
    }
    return out
  }

  /** entries are the readable drafts, least recently saved first. */
  private entries(): { key: string; at: number }[] {
    const out: { key: string; at: number }[] = []
    for (const key of this.keys()) {
      const e = this.read(key)
      if (e) out.push({ key, at: e.at })
    }
    return out.sort((a, b) => a.at - b.at)
  }

  private pruneOnce() {
    if (this.pruned) return
    this.pruned = true
    this.prune()
  }

  private stale(e: Entry): boolean {
    const now = this.now()
    return (e.exp !== undefined && e.exp <= now) || now - e.at > this.maxAgeMs
  }

  /** read parses an entry; anything that is not one is removed. */
  private read(key: string): Entry | undefined {
    let raw: string | null
    try {
      raw = this.storage?.getItem(key) ?? null
    } catch {
      return undefined
    }
    if (raw === null) return undefined
    try {
      const e = JSON.parse(raw) as Partial<Entry> | null
      if (e && typeof e === 'object' && 'v' in e && typeof e.at === 'number' && (e.exp === undefined || typeof e.exp === 'number')) return e as Entry
    } catch {
      // Not JSON: dropped below.
    }
    this.remove(key)
    return undefined
  }

  private write(key: string, json: string): boolean {
    try {
      this.storage?.setItem(key, json)
      return !!this.storage
    } catch {
      return false
    }
  }

  private remove(key: string) {
    try {
      this.storage?.removeItem(key)
    } catch {
      // Unavailable storage: nothing to remove.
    }
  }
}

let shared: DraftStore | undefined

/** defaultDraftStore is the page-wide store on window.localStorage (made on first use). */
export function defaultDraftStore(): DraftStore {
  shared ??= new DraftStore()
  return shared
}

/**
 * DraftContext is the store the cards keep their drafts in: by default the
 * localStorage one; null turns drafts off (an app that must not write to
 * the browser's storage).
 */
export const DraftContext = createContext<DraftStore | null | undefined>(undefined)

/** useDraftStore is the cards' store: DraftContext's, else the default one. */
export function useDraftStore(): DraftStore | null {
  const s = useContext(DraftContext)
  return s === undefined ? defaultDraftStore() : s
}

/**
 * useDraft is useState for a card's form, kept as the request's draft:
 * the initial state is the stored draft when restore accepts it (restore
 * checks it against the request as it is now and returns undefined to
 * reject it), else init(). Each change is saved; a state equal to init()
 * removes the draft. The card clears it when the request resolves.
 */
export function useDraft<T>(req: InputRequest, init: () => T, restore: (raw: unknown) => T | undefined): [T, Dispatch<SetStateAction<T>>] {
  const store = useDraftStore()
  const [value, setValue] = useState<T>(() => {
    const raw = store?.load(req.sessionId, req.id)
    if (raw === undefined) return init()
    try {
      return restore(raw) ?? init()
    } catch {
      return init()
    }
  })
  const first = useRef(true)
  const empty = useRef<string | undefined>(undefined)
  useEffect(() => {
    if (first.current) {
      // The value as loaded: nothing changed yet.
      first.current = false
      return
    }
    if (!store) return
    empty.current ??= JSON.stringify(init())
    if (JSON.stringify(value) === empty.current) store.clear(req.sessionId, req.id)
    else store.save(req.sessionId, req.id, value, req.expiresAt)
    // init is the form's constant starting state.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [store, value, req.sessionId, req.id, req.expiresAt])
  return [value, setValue]
}

/** strings keeps the strings of a JSON value that is an array (else []). */
export function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []
}

/** record is v as a plain object, or undefined. */
export function record(v: unknown): Record<string, unknown> | undefined {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined
}
