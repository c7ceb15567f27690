// The page language for a fresh user: the browser's first preferred
// language decides (navigator.languages: zh* → Chinese, anything else →
// English) until the user switches, and the switch is remembered over the
// browser's. The language button's accessible name is its text (axe
// label-content-name-mismatch), on the chat page and on a question's page.
import { expect, test } from './harness'

const scenario = { name: 'lang', turns: [{ text: 'hi' }] }

test('an en-US browser gets English; a switch to Chinese is remembered over the browser', async ({ browser, lab }) => {
  const luban = await lab.serve({ scenario })
  const ctx = await browser.newContext({ locale: 'en-US' })
  const page = await ctx.newPage()
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('welcome')).toContainText('Welcome')
  await expect(page.locator('html')).toHaveAttribute('lang', 'en')
  await expect(page.getByRole('button', { name: '中文', exact: true })).toBeVisible()
  await expect(page.getByTestId('composer')).toHaveAttribute('placeholder', /Enter/)

  await page.getByRole('button', { name: '中文', exact: true }).click()
  await expect(page.getByTestId('welcome')).toContainText('欢迎')
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN')
  await page.reload()
  await expect(page.getByTestId('welcome')).toContainText('欢迎')
  await expect(page.getByRole('button', { name: 'English', exact: true })).toBeVisible()

  // The question page (/q/{id}) has the same button, named by its text.
  await page.goto(`${luban.url}/q/no-such-request`)
  await expect(page.getByRole('button', { name: 'English', exact: true })).toBeVisible()
  await page.getByRole('button', { name: 'English', exact: true }).click()
  await expect(page.getByRole('button', { name: '中文', exact: true })).toBeVisible()
  await ctx.close()
})

test('a zh-TW browser gets Chinese, a de-DE browser English', async ({ browser, lab }) => {
  const luban = await lab.serve({ scenario })
  for (const [locale, welcome, html] of [
    ['zh-TW', '欢迎', 'zh-CN'],
    ['de-DE', 'Welcome', 'en'],
  ]) {
    const ctx = await browser.newContext({ locale })
    const page = await ctx.newPage()
    await page.goto(luban.pageURL())
    await expect(page.getByTestId('welcome'), locale).toContainText(welcome)
    await expect(page.locator('html'), locale).toHaveAttribute('lang', html)
    await ctx.close()
  }
})
