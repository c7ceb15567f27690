import { useEffect, useState } from 'react'
import { useT } from '../i18n'
import { nextTheme, rememberTheme, storedTheme, systemTheme, type Theme } from '../theme'

/**
 * ThemeToggle is the header's colour-theme button. Its text says the
 * current setting, localised ("主题：跟随系统" / "Theme: light" / …), and is
 * its accessible name; its title says what a press picks next (nextTheme:
 * system → the other theme → the system's theme picked → system). Until a
 * pick the page follows prefers-color-scheme, live; a pick is remembered,
 * and going back to system forgets it. data-theme is the theme shown,
 * data-mode the setting (light, dark or system).
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

  const label = picked === 'dark' ? t.themeDark : picked === 'light' ? t.themeLight : t.themeSystem
  const next = nextTheme(picked, system)
  const nextName = next === 'dark' ? t.themeNameDark : next === 'light' ? t.themeNameLight : t.themeNameSystem
  return (
    <button
      type="button"
      className="theme-toggle"
      data-testid="theme-toggle"
      data-theme={picked ?? system}
      data-mode={picked ?? 'system'}
      title={t.themeNext(nextName)}
      onClick={() => {
        rememberTheme(next)
        setPicked(next)
      }}
    >
      <span className="theme-label">{label}</span>
    </button>
  )
}
