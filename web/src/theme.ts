// The colour theme: the system's (prefers-color-scheme) until the user picks
// one with the header toggle; the pick is kept in localStorage["luban.theme"]
// and set as data-theme on <html>, which styles.css maps to color-scheme.

/** Theme is a colour theme the page can show. */
export type Theme = 'light' | 'dark'

const KEY = 'luban.theme'

/** storedTheme is the user's remembered pick, or null to follow the system. */
export function storedTheme(): Theme | null {
  try {
    const v = localStorage.getItem(KEY)
    return v === 'light' || v === 'dark' ? v : null
  } catch {
    return null // storage blocked: follow the system
  }
}

/** systemTheme is what prefers-color-scheme asks for now. */
export function systemTheme(): Theme {
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'
}

/**
 * nextTheme is what the header's theme button picks after current (null:
 * following the system, whose theme is now system): first the theme the
 * system does not show, then the other one, then the system again, so
 * every press but the last changes the colours and three presses come back.
 */
export function nextTheme(current: Theme | null, system: Theme): Theme | null {
  const other: Theme = system === 'dark' ? 'light' : 'dark'
  if (current === null) return other
  if (current === other) return system
  return null
}

/** applyTheme sets data-theme on <html> (null removes it: the system decides). */
export function applyTheme(theme: Theme | null): void {
  if (theme) document.documentElement.dataset.theme = theme
  else delete document.documentElement.dataset.theme
}

/**
 * rememberTheme stores the pick and applies it; null forgets the pick, so
 * the page follows the system again.
 */
export function rememberTheme(theme: Theme | null): void {
  try {
    if (theme) localStorage.setItem(KEY, theme)
    else localStorage.removeItem(KEY)
  } catch {
    // Storage blocked: the pick lasts for this page only.
  }
  applyTheme(theme)
}
