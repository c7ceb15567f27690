// The built-in demo's walk, shared by the specs that go through every card
// it shows (axe, the one-screen layout): each open card is answered by its
// mode with a valid answer, until the demo's summary.
import type { Locator, Page } from '@playwright/test'
import { expect } from './harness'

/** answerDemoCard fills an open demo card by its mode with a valid answer and submits it. */
export async function answerDemoCard(card: Locator, mode: string) {
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
      // The demo MCP server's rollout form (luban as an MCP client): a
      // second region besides the default one, a canary share of 25 %.
      await expect(card.getByTestId('elicitation-server')).toContainText('demo')
      await card.getByTestId('field-regions-eu-west').check()
      await card.getByTestId('field-canary').fill('25')
      break
    default: {
      // An AskUser batch: the first option of every question.
      const n = await card.locator('fieldset[data-testid^="question-"]').count()
      for (let i = 0; i < n; i++) {
        const first = card.getByTestId(`q${i}-option-0`)
        if (await first.count()) await first.check()
      }
    }
  }
  await card.getByTestId('submit').click()
}

/** The text of the demo's summary, which ends the walk. */
export const demoDone = '全部完成'

/**
 * walkDemo starts the demo and answers every card it shows (answerDemoCard),
 * calling card(mode, card) before each answer and receipt(mode, card) once
 * the card is resolved; it returns the modes in the order they came, after
 * the summary is on screen.
 */
export async function walkDemo(
  page: Page,
  hooks: { card?: (mode: string, card: Locator) => Promise<void>; receipt?: (mode: string, card: Locator) => Promise<void> } = {},
): Promise<string[]> {
  await page.getByTestId('composer').fill('开始演示')
  await page.getByTestId('composer').press('Enter')
  const seen: string[] = []
  const done = page.getByText(demoDone, { exact: false })
  for (let i = 0; i < 14; i++) {
    const open = page.locator('[data-testid="input-card"][data-phase="editing"]').first()
    await expect(open.or(done).first()).toBeVisible({ timeout: 20_000 })
    if (!(await open.count())) break
    const id = await open.getAttribute('data-request-id')
    const card = page.locator(`[data-testid="input-card"][data-request-id="${id}"]`)
    const mode = (await card.getAttribute('data-mode')) ?? '?'
    seen.push(mode)
    await hooks.card?.(mode, card)
    await answerDemoCard(card, mode)
    await expect(card).toHaveAttribute('data-phase', 'resolved')
    await hooks.receipt?.(mode, card)
  }
  await expect(done).toBeVisible()
  return seen
}
