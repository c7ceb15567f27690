// The page language: the user's remembered pick (localStorage["luban.lang"],
// set by the header's language button) wins; without one, the browser's
// first preferred language decides (navigator.languages): any zh* gives
// Chinese, everything else English.
import type { Lang } from './i18n'

const KEY = 'luban.lang'

/** browserLang is the language of the browser's first preference: zh for zh, zh-CN, zh-Hant-TW…, else en. */
export function browserLang(): Lang {
  const nav = typeof navigator === 'undefined' ? undefined : navigator
  const first = nav?.languages?.[0] ?? nav?.language ?? ''
  return /^zh\b/i.test(first) ? 'zh' : 'en'
}

/** storedLang is the remembered pick, or null when the user never switched (or storage is blocked). */
export function storedLang(): Lang | null {
  try {
    const v = localStorage.getItem(KEY)
    return v === 'zh' || v === 'en' ? v : null
  } catch {
    return null
  }
}

/** initialLang is the language the page opens in: storedLang, else browserLang. */
export function initialLang(): Lang {
  return storedLang() ?? browserLang()
}

/** rememberLang stores a pick; with storage blocked it lasts for this page only. */
export function rememberLang(lang: Lang): void {
  try {
    localStorage.setItem(KEY, lang)
  } catch {
    // Private mode: the switch still works for this page.
  }
}
