// Cards with the keyboard alone (issue 18): number keys choose options, R
// accepts the recommended one, Enter / Ctrl+Enter submit, Esc leaves a text
// field for the card, the focus is always visible, and the key hints are in
// the page language. A single choice, a multiple choice with a note, an
// AskUser batch, an approval and an MCP form elicitation, answered without
// the mouse; what the run received is checked at the server.
import type { Locator, Page } from '@playwright/test'
import { askUser, deployQuestion, expect, layoutBatch, openAndSend, test, toolMessages, type Luban, type Scenario } from './harness'
import { everythingConfig } from './paths'

const scenario: Scenario = {
  name: 'keyboard',
  turns: [
    {
      toolCalls: [
        askUser({
          title: '怎么做？',
          mode: 'single',
          options: [
            { id: 'read', label: '先分析' },
            { id: 'safe', label: '小步修改', recommended: true },
            { id: 'all', label: '一次改完' },
          ],
        }),
      ],
    },
    {
      toolCalls: [
        deployQuestion,
      ],
    },
    {
      toolCalls: [
        layoutBatch,
      ],
    },
    { toolCalls: [{ name: 'write_file', arguments: { path: 'plan.md', content: '# Plan\n' } }] },
  ],
  final: '完成：{{results}}',
}

/** nextCard waits for the next open card of a mode and for the focus inside it (the page focuses a new card's first control). */
async function nextCard(page: Page, mode: string): Promise<Locator> {
  const open = page.locator(`[data-testid="input-card"][data-mode="${mode}"][data-phase="editing"]`)
  await expect(open).toBeVisible()
  const card = page.locator(`[data-testid="input-card"][data-request-id="${await open.getAttribute('data-request-id')}"]`)
  await expect.poll(() => card.evaluate((el) => el.contains(document.activeElement) && document.activeElement !== document.body)).toBe(true)
  return card
}

/** focusVisible asserts the focused element shows the focus ring. */
async function focusVisible(page: Page) {
  const f = page.locator(':focus')
  await expect(f).toHaveCount(1)
  await expect(f).toHaveCSS('outline-style', 'solid')
}

/** resultOf is the one ToolResult message the run recorded for a card's request. */
async function resultOf(luban: Luban, sessionId: string, card: Locator): Promise<any> {
  const id = await card.getAttribute('data-request-id')
  const v = (await luban.api('GET', `/api/interactions/${id}`)).body
  const tm = await toolMessages(luban, sessionId, v.request.toolCallId)
  expect(tm).toHaveLength(1)
  return tm[0]
}

test('single, multiple, batch and approval answered with the keyboard alone', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario })
  await page.goto(luban.pageURL())
  await page.getByTestId('composer').focus()
  await page.keyboard.type('开始')
  await page.keyboard.press('Enter')

  // Single: the hints name the keys; R accepts the recommended option.
  const single = await nextCard(page, 'single')
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  await focusVisible(page)
  await expect(single.getByTestId('key-hints')).toHaveText('快捷键:1–9 选择选项Enter 提交Esc 离开输入框R 采用推荐')
  await expect(single.getByTestId('accept-recommended')).toHaveText('采用推荐: 小步修改')
  await page.keyboard.press('3')
  await expect(single.getByTestId('option-all')).toBeChecked()
  await lab.shot(single, 'single-keyboard')
  await page.keyboard.press('r')
  await expect(single.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  expect(JSON.parse((await resultOf(luban, sessionId, single)).content)).toMatchObject({ selections: ['safe'] })

  // Multiple: 1 and 3 toggle, Tab to the note, Enter is a new line there,
  // Esc goes back to the card, 3 toggles again, Ctrl+Enter submits.
  const multi = await nextCard(page, 'multiple')
  await page.keyboard.press('1')
  await page.keyboard.press('3')
  await expect(multi.getByTestId('option-dev')).toBeChecked()
  await expect(multi.getByTestId('option-prod')).toBeChecked()
  await page.keyboard.press('Tab')
  await expect(multi.getByTestId('custom-input')).toBeFocused()
  await page.keyboard.type('先 1 后')
  await page.keyboard.press('Enter')
  await page.keyboard.type('2')
  await expect(multi.getByTestId('custom-input')).toHaveValue('先 1 后\n2')
  await expect(multi.getByTestId('option-staging')).not.toBeChecked()
  await page.keyboard.press('Escape')
  await expect(multi).toBeFocused()
  await focusVisible(page)
  await page.keyboard.press('3')
  await expect(multi.getByTestId('option-prod')).not.toBeChecked()
  await page.keyboard.press('2')
  await multi.getByTestId('custom-input').focus()
  await page.keyboard.press('Control+Enter')
  await expect(multi.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  expect(JSON.parse((await resultOf(luban, sessionId, multi)).content)).toMatchObject({ selections: ['dev', 'staging'], customInput: '先 1 后\n2' })

  // The batch: 2 answers the focused first question; Esc, then 3 goes to
  // the first unanswered question (its "Other", whose box gets the focus).
  const batch = await nextCard(page, 'questions')
  await page.keyboard.press('2')
  await expect(batch.getByTestId('q0-option-1')).toBeChecked()
  // Enter with question 2 open goes there (on screen) and says so; the
  // next number key would act on question 2, not on question 1.
  await page.keyboard.press('Enter')
  await expect(batch.getByTestId('q1-option-0')).toBeFocused()
  await expect(batch.getByTestId('q1-option-0')).toBeInViewport()
  await expect(batch.getByTestId('batch-status')).toHaveText(/^还有 1 题未答：第 2 题/)
  // The question with the focus is marked: its border is not the others'.
  const border = (i: number) => batch.getByTestId(`question-${i}`).evaluate((el) => getComputedStyle(el).borderTopColor)
  expect(await border(1)).not.toBe(await border(0))
  await page.keyboard.press('Escape')
  await page.keyboard.press('3')
  await expect(batch.getByTestId('q1-other')).toBeChecked()
  await expect(batch.getByTestId('q1-other-input')).toBeFocused()
  await page.keyboard.type('Windows')
  await page.keyboard.press('Escape')
  await page.keyboard.press('1')
  await expect(batch.getByTestId('q1-option-0')).toBeChecked()
  await page.keyboard.press('Enter')
  await expect(batch.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  expect((await resultOf(luban, sessionId, batch)).metadata?.answers).toEqual([
    { question: '用哪种布局？', selected: ['列表'], other: '' },
    { question: '支持哪些平台？', selected: ['Linux'], other: 'Windows' },
  ])

  // The approval: Tab to 拒绝, Enter opens the reason (focused), Ctrl+Enter sends.
  const approval = await nextCard(page, 'approval')
  for (let i = 0; i < 6 && !(await approval.getByTestId('approval-reject').evaluate((el) => el === document.activeElement)); i++) await page.keyboard.press('Tab')
  await expect(approval.getByTestId('approval-reject')).toBeFocused()
  await focusVisible(page)
  await page.keyboard.press('Enter')
  await expect(approval.getByTestId('approval-reason')).toBeFocused()
  await page.keyboard.type('先别写')
  await page.keyboard.press('Control+Enter')
  await expect(approval.getByTestId('receipt')).toHaveAttribute('data-decision', 'reject')
  await expect(approval.getByTestId('receipt-message')).toContainText('先别写')
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
})

test('the key hints follow the page language', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario })
  const { card } = await openAndSend(page, luban, '开始')
  await expect(card.getByTestId('key-hints')).toContainText('采用推荐')
  await page.getByTestId('lang-switch').press('Enter')
  await expect(card.getByTestId('key-hints')).toHaveText('Keys:1–9 choose an optionEnter submitEsc leave the fieldR accept recommended')
  await expect(card.getByTestId('accept-recommended')).toHaveText('Accept recommended: 小步修改')
  await expect(card.getByTestId('option-safe')).toHaveAttribute('aria-keyshortcuts', '2')
})


test('a form elicitation answered with the keyboard alone', async ({ page, lab }) => {
  const config = everythingConfig
  const luban = await lab.serve({
    scenario: { name: 'form', turns: [{ toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] }], final: '完成：{{results}}' },
    config,
  })
  await page.goto(luban.pageURL())
  await page.getByTestId('composer').focus()
  await page.keyboard.type('填表')
  await page.keyboard.press('Enter')
  const form = await nextCard(page, 'form')
  await expect(form.getByTestId('field-name')).toBeFocused()
  await page.keyboard.type('Ada Lovelace')
  // Tab into the titled single-select enum, then 3 chooses its third option.
  const group = form.getByTestId('form-field-titledSingleSelectEnum')
  for (let i = 0; i < 20 && !(await group.evaluate((el) => el.contains(document.activeElement))); i++) await page.keyboard.press('Tab')
  await focusVisible(page)
  await page.keyboard.press('3')
  await expect(form.getByTestId('field-titledSingleSelectEnum-hero-3')).toBeChecked()
  await expect(form.getByTestId('field-titledSingleSelectEnum-hero-3')).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(form.getByTestId('receipt')).toHaveAttribute('data-decision', 'accept')
  await expect(form.getByTestId('receipt-field-name')).toContainText('Ada Lovelace')
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  await expect.poll(async () => (await luban.api('GET', `/api/sessions/${encodeURIComponent(sessionId)}`)).body.session.status, { timeout: 30_000 }).toBe('completed')
  const tr = await luban.api('GET', `/api/sessions/${encodeURIComponent(sessionId)}`)
  const result = (tr.body.messages ?? []).filter((m: any) => m.role === 'tool').map((m: any) => String(m.content))
  expect(result[0]).toContain('hero-3')
})

test.describe('on a phone (touch, no keyboard)', () => {
  test.use({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })

  test('the key hints and option numbers are not shown; the recommended action still is', async ({ page, lab }) => {
    const luban = await lab.serve({ scenario })
    const { card } = await openAndSend(page, luban, '开始')
    await expect(card.getByTestId('option-safe')).toBeVisible()
    await expect(card.getByTestId('key-hints')).toBeHidden()
    await expect(card.locator('.key-num').first()).toBeHidden()
    await expect(card.getByTestId('accept-recommended')).toBeVisible()
    await card.getByTestId('accept-recommended').tap()
    await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  })
})
