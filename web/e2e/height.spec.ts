// The page is one screen tall (design §14 "Layout"): only the transcript and
// the session list scroll. After every card of the built-in demo and at its
// end, the document is exactly the viewport's height, at 360 and 1280 px: no
// screen-reader-only status span (a code block's copy status, a card's live
// region) escapes its scroll box and stretches the window.
import type { Page } from '@playwright/test'
import { walkDemo } from './demo'
import { expect, test } from './harness'

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
    const seen = await walkDemo(page, { card: (mode) => oneScreen(page, `${mode} card`) })
    expect(seen).toEqual(expect.arrayContaining(['single', 'text', 'form', 'approval']))
    await expect(page.getByTestId('message-assistant').last().getByTestId('code-block')).toBeVisible()
    await oneScreen(page, 'the end of the demo')
    // Scrolling the window does nothing: there is nothing below the app.
    await page.evaluate(() => window.scrollTo(0, 1e6))
    expect(await page.evaluate(() => window.scrollY)).toBe(0)
    await lab.shot(page, `height-${width}-end`)
  })
}
