// The page at 360 px wide (issue 4 "works at 360 px"): nothing scrolls
// sideways, the cards fit, and a whole ask → answer → receipt cycle is done
// with the keyboard alone (labelled, focusable controls).
import { askUser, expect, openAndSend, test, type Luban } from './harness'
import type { Page } from '@playwright/test'

test.use({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })

async function noSidewaysScroll(page: Page) {
  const { scroll, client } = await page.evaluate(() => ({
    scroll: document.documentElement.scrollWidth,
    client: document.documentElement.clientWidth,
  }))
  expect(scroll, 'the page does not scroll sideways').toBeLessThanOrEqual(client)
}

async function fits(page: Page, selector: string) {
  for (const box of await page.locator(selector).evaluateAll((els) => els.map((e) => e.getBoundingClientRect().toJSON()))) {
    expect(box.left).toBeGreaterThanOrEqual(0)
    expect(box.right).toBeLessThanOrEqual(360)
  }
}

async function serve(lab: { serve: (o: any) => Promise<Luban> }): Promise<Luban> {
  const long = '一个非常非常长的选项标签，没有空格也要换行：/var/lib/luban/workspaces/project-with-a-very-long-name/src/components'
  return lab.serve({
    scenario: {
      name: 'narrow',
      turns: [
        {
          text: '窄屏上也要能回答。`' + 'x'.repeat(120) + '`',
          toolCalls: [
            askUser({
              title: '打开哪些开关？',
              description: long,
              mode: 'toggle',
              options: [
                { id: 'cache', label: '缓存', description: long, recommended: true },
                { id: 'gzip', label: '压缩' },
              ],
              allowCustom: true,
            }),
            askUser({ title: '副本数', mode: 'number' }),
          ],
        },
        {
          toolCalls: [
            {
              name: 'AskUser',
              arguments: {
                questions: [
                  {
                    question: '选哪种样式？',
                    header: '样式',
                    context: long,
                    multi_select: false,
                    options: [
                      { label: '紧凑', description: '少留白', preview: 'x'.repeat(200) },
                      { label: '宽松', description: '多留白', preview: '- a\n- b' },
                    ],
                  },
                ],
              },
            },
          ],
        },
      ],
      final: '完成：{{results}}',
    },
  })
}

test('at 360 px a whole cycle works with the keyboard and nothing overflows', async ({ page, lab }) => {
  const luban = await serve(lab)
  const { sessionId, card } = await openAndSend(page, luban, '窄屏测试')
  await expect(card).toHaveAttribute('data-mode', 'toggle')
  await noSidewaysScroll(page)
  // The session's row shows its rename and delete buttons whole: the
  // sidebar strip does not cut them (IntersectionObserver counts the
  // sidebar's clipping), and they sit inside the sidebar's box.
  // The header takes two rows at most (about 40 px each), so the chat keeps the screen.
  const header = (await page.locator('header').boundingBox())!
  expect(header.height, 'header rows').toBeLessThan(110)
  // The inbox button is not a bare number: a tray icon shows, and its name says what it counts.
  await expect(page.getByTestId('inbox-icon')).toBeVisible()
  await expect(page.getByTestId('inbox-button')).toHaveAccessibleName(/^收件箱 \d+$/)
  // The session list is a drawer, closed on a phone: open it to see the row.
  await page.getByTestId('sessions-toggle').click()
  const nav = await page.getByTestId('session-list').boundingBox()
  for (const id of [`rename-${sessionId}`, `delete-${sessionId}`]) {
    const button = page.getByTestId(id)
    await expect(button).toBeInViewport({ ratio: 1 })
    const b = (await button.boundingBox())!
    expect(b.y, id).toBeGreaterThanOrEqual(nav!.y)
    expect(b.y + b.height, id).toBeLessThanOrEqual(nav!.y + nav!.height)
    expect(b.x + b.width, id).toBeLessThanOrEqual(360)
  }
  await fits(page, '[data-testid="input-card"], [data-testid="composer"], [data-testid="send"]')
  await expect(card.getByTestId('hint')).toHaveText('至少打开一项才能提交')
  await lab.shot(page, 'page-360-toggle')

  // Keyboard only: Tab to the first switch, Space turns it on, Tab on to submit.
  await card.getByTestId('option-cache').focus()
  await page.keyboard.press('Space')
  await expect(card.getByTestId('option-cache')).toBeChecked()
  await expect(card.getByTestId('option-cache')).toHaveAttribute('role', 'switch')
  await expect(card.getByTestId('option-cache')).toHaveAccessibleName(/缓存/)
  await expect(card.getByTestId('submit')).toBeEnabled()
  await card.getByTestId('submit').focus()
  await page.keyboard.press('Enter')
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await lab.shot(card, 'receipt-360-toggle')

  const num = page.locator('[data-testid="input-card"][data-mode="number"]')
  await expect(num).toHaveAttribute('data-phase', 'editing')
  await expect(num.getByTestId('custom-input')).toHaveAttribute('type', 'number')
  await num.getByTestId('custom-input').focus()
  await page.keyboard.type('3')
  await page.keyboard.press('Enter') // submits the form
  await expect(num.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(num.getByTestId('receipt-custom')).toHaveText('3')

  const batch = page.locator('[data-testid="input-card"][data-mode="questions"]')
  await expect(batch).toHaveAttribute('data-phase', 'editing')
  // The batch is taller than the transcript at 360 px: it arrives with its
  // heading on screen, not its bottom.
  await expect(batch.locator('.card-title')).toBeInViewport({ ratio: 1 })
  await noSidewaysScroll(page)
  await fits(page, '[data-testid="input-card"]')
  await batch.getByTestId('q0-option-0').focus()
  await page.keyboard.press('Space')
  await expect(batch.getByTestId('q0-option-0')).toBeChecked()
  await lab.shot(batch, 'card-360-askuser')
  await batch.getByTestId('submit').click()
  await expect(batch.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(batch.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await noSidewaysScroll(page)
  await lab.shot(page, 'page-360-done')

  // In English (longer button texts) the header still takes two rows at most.
  await page.getByTestId('lang-switch').click()
  await expect(page.getByTestId('theme-toggle')).toHaveText('Theme: system')
  expect((await page.locator('header').boundingBox())!.height, 'header rows in English').toBeLessThan(110)
  await noSidewaysScroll(page)
  await lab.shot(page, 'page-360-done-en')
})

test('at 360 px the header is one row in zh and en, and an approval arrives with its buttons in view', async ({ page, lab }) => {
  const content = Array.from({ length: 30 }, (_, i) => `- step ${i + 1}`).join('\n')
  const luban = await lab.serve({
    scenario: { name: 'approval-360', turns: [{ text: '我来写计划。', toolCalls: [{ name: 'write_file', arguments: { path: 'notes/plan.md', content } }] }], final: '完成：{{results}}' },
  })
  const oneRow = async () => {
    const tops = await page.locator('.header > *').evaluateAll((els) =>
      els.filter((e) => e.getBoundingClientRect().width > 0).map((e) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2)),
    )
    expect(Math.max(...tops) - Math.min(...tops), 'every header item on one row').toBeLessThanOrEqual(4)
    const header = (await page.locator('.header').boundingBox())!
    expect(header.height).toBeLessThan(60)
    await noSidewaysScroll(page)
    await fits(page, '.header > *')
  }
  const { card } = await openAndSend(page, luban, '写个计划')
  await expect(card).toHaveAttribute('data-mode', 'approval')
  await expect(page.getByTestId('model-name')).toBeVisible()
  await oneRow()
  for (const id of ['approval-approve', 'approval-edit', 'approval-reject']) await expect(card.getByTestId(id)).toBeInViewport()
  await expect(page.getByTestId('theme-toggle')).toHaveAccessibleName('主题：跟随系统')
  await lab.shot(page, 'approval-360-arrived')
  await page.getByTestId('lang-switch').click()
  await expect(page.getByTestId('new-session')).toHaveText('New session')
  await oneRow()
  await expect(page.getByTestId('theme-toggle')).toHaveAccessibleName('Theme: system')
  await lab.shot(page, 'header-360-en')
})
