// The page is one screen tall (design §14 "Layout"): only the transcript and
// the session list scroll. After every card of the built-in demo and at its
// end, the document is exactly the viewport's height, at 360 and 1280 px: no
// screen-reader-only status span (a code block's copy status, a card's live
// region) escapes its scroll box and stretches the window.
import type { Locator, Page } from '@playwright/test'
import { expect, test } from './harness'

/** answer fills an open demo card with a valid answer and submits it. */
async function answer(card: Locator, mode: string) {
  switch (mode) {
    case 'single':
    case 'multiple':
    case 'toggle':
      await card.locator('[data-testid^="option-"]').first().check()
      break
    case 'text':
      await card.getByTestId('custom-input').fill('demo-service')
      break
    case 'number':
      await card.getByTestId('custom-input').fill('3')
      break
    case 'date':
      await card.getByTestId('custom-input').fill('2026-12-01')
      break
    case 'directory':
      await card.getByTestId('custom-input').fill('deploy')
      break
    case 'approval':
      await card.getByTestId('approval-approve').click()
      return
    case 'form':
      await card.getByTestId('field-canary').fill('25')
      break
    default: {
      const n = await card.locator('fieldset[data-testid^="question-"]').count()
      for (let i = 0; i < n; i++) {
        const first = card.getByTestId(`q${i}-option-0`)
        if (await first.count()) await first.check()
      }
    }
  }
  await card.getByTestId('submit').click()
}

async function oneScreen(page: Page, what: string) {
  const m = await page.evaluate(() => ({ scroll: document.documentElement.scrollHeight, inner: window.innerHeight }))
  expect(m.scroll, `${what}: the document is as tall as the viewport`).toBe(m.inner)
}

for (const [width, height] of [
  [360, 780],
  [1280, 900],
] as const) {
  test(`at ${width} px the document stays one screen tall through the whole demo`, async ({ page, lab }) => {
    test.setTimeout(150_000)
    await page.setViewportSize({ width, height })
    const luban = await lab.serve({ model: 'scripted' })
    await page.goto(luban.pageURL())
    await expect(page.getByTestId('welcome-demo')).toBeVisible()
    await oneScreen(page, 'welcome')
    await page.getByTestId('composer').fill('开始演示')
    await page.getByTestId('composer').press('Enter')
    const seen: string[] = []
    const done = page.getByText('全部完成', { exact: false })
    for (let i = 0; i < 14; i++) {
      const open = page.locator('[data-testid="input-card"][data-phase="editing"]').first()
      await expect(open.or(done).first()).toBeVisible({ timeout: 20_000 })
      if (!(await open.count())) break
      const id = await open.getAttribute('data-request-id')
      const card = page.locator(`[data-testid="input-card"][data-request-id="${id}"]`)
      const mode = (await card.getAttribute('data-mode')) ?? '?'
      seen.push(mode)
      await oneScreen(page, `${mode} card`)
      await answer(card, mode)
      await expect(card).toHaveAttribute('data-phase', 'resolved')
    }
    await expect(done).toBeVisible()
    expect(seen).toEqual(expect.arrayContaining(['single', 'text', 'form', 'approval']))
    await expect(page.getByTestId('message-assistant').last().getByTestId('code-block')).toBeVisible()
    await oneScreen(page, 'the end of the demo')
    // Scrolling the window does nothing: there is nothing below the app.
    await page.evaluate(() => window.scrollTo(0, 1e6))
    expect(await page.evaluate(() => window.scrollY)).toBe(0)
    await lab.shot(page, `height-${width}-end`)
  })
}
