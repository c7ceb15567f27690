// Accessibility: axe-core finds no serious or critical violation on the main
// views (welcome, session list, chat) and on every card the built-in demo
// shows (single, multiple, toggle, text, number, date, directory, the AskUser
// batch, the demo MCP server's form, the write_file approval) and each receipt, and on the demo's GFM
// summary (table, task list, highlighted code), in the light and the dark
// theme, at 360 px.
import type { Page } from '@playwright/test'
import { expectNoSeriousViolations } from './axe'
import { walkDemo } from './demo'
import { expect, test } from './harness'

test.use({ viewport: { width: 360, height: 740 } })

async function walkAxe(page: Page, theme: 'light' | 'dark') {
  await expectNoSeriousViolations(page, `${theme}: welcome`)
  const seen = await walkDemo(page, {
    card: async (mode, card) => {
      await card.scrollIntoViewIfNeeded()
      await expectNoSeriousViolations(page, `${theme}: ${mode} card`)
    },
    receipt: (mode) => expectNoSeriousViolations(page, `${theme}: ${mode} receipt`),
  })
  expect(seen).toEqual(expect.arrayContaining(['single', 'multiple', 'toggle', 'text', 'number', 'date', 'directory', 'form', 'approval']))
  expect(seen.length).toBeGreaterThanOrEqual(10)
  // The demo's summary shows GFM: a table, a task list, a highlighted code block.
  const summary = page.getByTestId('message-assistant').last()
  // The form's answer went back to the MCP server: the summary quotes its plan.
  await expect(summary).toContainText('demo__plan_rollout: 上线计划 (Rollout plan): 区域 (regions) 华东 (East China), 西欧 (West Europe)')
  await expect(summary).toContainText('灰度 (canary) 25%')
  await expect(summary.locator('table th').first()).toHaveText('卡片 (card)')
  await expect(summary.locator('li input[type="checkbox"]')).toHaveCount(2)
  await expect(summary.getByTestId('code-block').locator('code')).toHaveAttribute('data-highlighted', 'true')
  await expectNoSeriousViolations(page, `${theme}: finished chat with the session list`)
}

for (const theme of ['light', 'dark'] as const) {
  test(`axe: no serious or critical violation on the main views and every demo card (${theme})`, async ({ page, lab }) => {
    test.setTimeout(150_000)
    await page.emulateMedia({ colorScheme: theme })
    const luban = await lab.serve({ model: 'scripted' })
    await page.goto(luban.pageURL())
    await expect(page.getByTestId('welcome-demo')).toBeVisible()
    await expect(page.locator('html')).not.toHaveAttribute('data-theme', /./)
    await walkAxe(page, theme)
    await lab.shot(page, `demo-done-${theme}`)
    // The check can fail: a button without a name is a critical violation.
    await page.evaluate(() => document.body.insertAdjacentHTML('beforeend', '<button type="button" data-testid="unnamed"></button>'))
    await expect(expectNoSeriousViolations(page, 'control')).rejects.toThrow(/button-name/)
    // ... and so is a name that does not hold the visible text (the old language button).
    await page.evaluate(() => {
      document.querySelector('[data-testid="unnamed"]')!.remove()
      document.body.insertAdjacentHTML('beforeend', '<button type="button" aria-label="切换语言">English</button>')
    })
    await expect(expectNoSeriousViolations(page, 'control')).rejects.toThrow(/label-content-name-mismatch/)
  })
}
