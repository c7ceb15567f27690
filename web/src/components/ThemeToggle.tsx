import { useEffect, useState } from 'react'
import { useT } from '../i18n'
import { rememberTheme, storedTheme, systemTheme, type Theme } from '../theme'

/**
 * ThemeToggle is the header's dark-mode switch: a toggle button (aria-pressed
 * when dark) whose text is its accessible name. Until it is pressed the page
 * follows prefers-color-scheme, live; a press is remembered.
 */
export function ThemeToggle() {
  const t = useT()
  const [picked, setPicked] = useState<Theme | null>(storedTheme)
  const [system, setSystem] = useState<Theme>(systemTheme)

  useEffect(() => {
    if (typeof matchMedia !== 'function') return
    const mq = matchMedia('(prefers-color-scheme: dark)')
    const on = () => setSystem(mq.matches ? 'dark' : 'light')
    mq.addEventListener('change', on)
    return () => mq.removeEventListener('change', on)
  }, [])

  const dark = (picked ?? system) === 'dark'
  return (
    <button
      type="button"
      className="theme-toggle"
      aria-pressed={dark}
      data-testid="theme-toggle"
      data-theme={picked ?? system}
      onClick={() => {
        const next: Theme = dark ? 'light' : 'dark'
        rememberTheme(next)
        setPicked(next)
      }}
    >
      {t.darkMode}
    </button>
  )
}
