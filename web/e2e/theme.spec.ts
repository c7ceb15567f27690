// Dark mode: the page follows prefers-color-scheme until the header toggle
// picks a theme, which is remembered across reloads; screenshots of a card in
// both themes at 360 px. The favicon is inline (no request, no 404, no CSP
// report) and the language button's accessible name is its text.
import type { Page } from '@playwright/test'
import { askUser, expect, test } from './harness'

test.use({ viewport: { width: 360, height: 740 } })

const bg = (page: Page) => page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)
const isDark = (rgb: string) => {
  const [r, g, b] = rgb.match(/\d+/g)!.map(Number)
  return (r + g + b) / 3 < 80
}

test('dark mode from prefers-color-scheme, a remembered toggle, both themes on a card', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'theme',
      turns: [
        {
          text: '请选择：',
          toolCalls: [
            askUser({
              title: '部署到哪个环境？',
              description: '会影响权限。',
              mode: 'single',
              options: [
                { id: 'dev', label: '开发', recommended: true },
                { id: 'prod', label: '生产', description: '需要审批' },
              ],
              allowCustom: true,
            }),
          ],
        },
      ],
    },
  })
  const problems: string[] = []
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`)
  })
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text())
  })

  await page.emulateMedia({ colorScheme: 'dark' })
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('welcome')).toBeVisible()
  expect(isDark(await bg(page)), 'dark from the system').toBe(true)
  const toggle = page.getByTestId('theme-toggle')
  // The theme button says the setting (following the system), its text is
  // its accessible name, and its title says what a press picks.
  await expect(toggle).toHaveAttribute('data-mode', 'system')
  await expect(toggle).toHaveAttribute('data-theme', 'dark')
  await expect(page.getByRole('button', { name: '主题：跟随系统', exact: true })).toBeVisible()
  await expect(toggle).toHaveAttribute('title', '点击切换为浅色')
  await expect(page.getByRole('button', { name: 'English', exact: true })).toBeVisible()
  await expect(page.locator('link[rel="icon"]')).toHaveAttribute('href', /^data:image\/svg\+xml,/)

  await page.getByTestId('composer').fill('开始')
  await page.getByTestId('composer').press('Enter')
  const card = page.locator('[data-testid="input-card"][data-phase="editing"]')
  await expect(card).toBeVisible()
  await lab.shot(page, 'dark-card')
  const cardBg = await card.evaluate((e) => getComputedStyle(e).backgroundColor)
  expect(isDark(cardBg)).toBe(true)

  // The toggle picks light; a reload keeps it although the system is dark.
  await toggle.click()
  await expect(toggle).toHaveText('主题：浅色')
  await expect(page.getByRole('button', { name: '主题：浅色', exact: true })).toBeVisible()
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light')
  expect(isDark(await bg(page))).toBe(false)
  await page.reload()
  await expect(card).toBeVisible()
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light')
  expect(isDark(await bg(page))).toBe(false)
  expect(await page.evaluate(() => localStorage.getItem('luban.theme'))).toBe('light')
  await lab.shot(page, 'light-card')

  // Under a light system the light pick is the system's own: a press goes
  // back to following the system (the pick is forgotten), the next picks
  // dark, which a reload keeps although the system is light.
  await page.emulateMedia({ colorScheme: 'light' })
  await expect(toggle).toHaveAttribute('title', '点击切换为跟随系统')
  await toggle.click()
  await expect(toggle).toHaveText('主题：跟随系统')
  await expect(toggle).toHaveAttribute('data-mode', 'system')
  expect(await page.locator('html').getAttribute('data-theme')).toBeNull()
  expect(await page.evaluate(() => localStorage.getItem('luban.theme'))).toBeNull()
  expect(isDark(await bg(page))).toBe(false)
  await toggle.click()
  await expect(toggle).toHaveText('主题：深色')
  await page.reload()
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark')
  expect(isDark(await bg(page))).toBe(true)
  await expect(toggle).toHaveText('主题：深色')
  await expect(toggle).toHaveAttribute('title', '点击切换为浅色')

  // In English the button says the same, worded in English.
  await page.getByTestId('lang-switch').click()
  await expect(page.getByRole('button', { name: 'Theme: dark', exact: true })).toBeVisible()
  await expect(toggle).toHaveAttribute('title', 'Click for light')
  expect(problems, 'no 404 (favicon), no console error').toEqual([])
})

test('without a pick the page follows the system live', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'live', turns: [{ text: 'hi' }] } })
  await page.emulateMedia({ colorScheme: 'light' })
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('welcome')).toBeVisible()
  expect(isDark(await bg(page))).toBe(false)
  await page.emulateMedia({ colorScheme: 'dark' })
  await expect.poll(async () => isDark(await bg(page))).toBe(true)
  await expect(page.getByTestId('theme-toggle')).toHaveAttribute('data-theme', 'dark')
  await expect(page.getByTestId('theme-toggle')).toHaveText('主题：跟随系统')
})
