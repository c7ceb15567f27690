// Drafts of open cards (issue 18): what a person chose and typed on a card
// that still waits comes back after a reload, per request; it is gone once
// the request resolves (answered here or elsewhere, expired), so a reload
// after that shows the receipt and no draft is left in the browser.
import type { Page } from '@playwright/test'
import { askUser, deployQuestion, expect, layoutBatch, openAndSend, OTHER_TOKEN, test, toolMessages, type Scenario } from './harness'

const PREFIX = 'luban.draft.v1:'

/** drafts are the draft entries in the page's localStorage (key → parsed value). */
async function drafts(page: Page): Promise<Record<string, unknown>> {
  return page.evaluate((prefix) => {
    const out: Record<string, unknown> = {}
    for (let i = 0; i < localStorage.length; i++) {
      const k = localStorage.key(i)!
      if (k.startsWith(prefix)) out[k] = JSON.parse(localStorage.getItem(k)!).v
    }
    return out
  }, PREFIX)
}

const three: Scenario = {
  name: 'drafts',
  turns: [
    {
      text: '先问部署。',
      toolCalls: [
        deployQuestion,
      ],
    },
    {
      toolCalls: [
        layoutBatch,
      ],
    },
    { text: '写计划。', toolCalls: [{ name: 'write_file', arguments: { path: 'plan.md', content: '# Plan\n' } }] },
  ],
  final: '完成：{{results}}',
}

test('a card keeps its choices and text over reloads, per request; submitted, nothing is left', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: three })
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  const requestId = (await card.getAttribute('data-request-id'))!
  await card.getByTestId('option-staging').check()
  await card.getByTestId('option-prod').check()
  await card.getByTestId('custom-input').fill('先预发，\n再生产 🚀')
  await expect.poll(() => drafts(page)).toEqual({ [`${PREFIX}${sessionId}/${requestId}`]: { selections: ['staging', 'prod'], custom: '先预发，\n再生产 🚀' } })

  await page.reload()
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await expect(card.getByTestId('option-staging')).toBeChecked()
  await expect(card.getByTestId('option-prod')).toBeChecked()
  await expect(card.getByTestId('option-dev')).not.toBeChecked()
  await expect(card.getByTestId('custom-input')).toHaveValue('先预发，\n再生产 🚀')
  await lab.shot(card, 'restored')
  await card.getByTestId('submit').click()
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  const results = await toolMessages(luban, sessionId, (await luban.api('GET', `/api/interactions/${requestId}`)).body.request.toolCallId)
  expect(JSON.parse(results[0].content)).toMatchObject({ selections: ['staging', 'prod'], customInput: '先预发，\n再生产 🚀' })

  // The batch: one draft for the whole card, a new key (its own request).
  const batch = page.locator('[data-testid="input-card"][data-mode="questions"]')
  await expect(batch).toHaveAttribute('data-phase', 'editing')
  const batchId = (await batch.getAttribute('data-request-id'))!
  await batch.getByTestId('q0-option-1').check()
  await batch.getByTestId('q1-option-0').check()
  await batch.getByTestId('q1-other-input').fill('Windows')
  await expect.poll(async () => Object.keys(await drafts(page))).toEqual([`${PREFIX}${sessionId}/${batchId}`])
  await page.reload()
  await expect(batch.getByTestId('q0-option-1')).toBeChecked()
  await expect(batch.getByTestId('q1-option-0')).toBeChecked()
  await expect(batch.getByTestId('q1-other')).toBeChecked()
  await expect(batch.getByTestId('q1-other-input')).toHaveValue('Windows')
  await batch.getByTestId('submit').click()
  await expect(batch.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')

  // The approval: the reject panel and its reason, the remember box.
  const approval = page.locator('[data-testid="input-card"][data-mode="approval"]')
  await expect(approval).toHaveAttribute('data-phase', 'editing')
  await approval.getByTestId('approval-reject').click()
  await approval.getByTestId('approval-reason').fill('先别写文件')
  await expect.poll(async () => Object.values(await drafts(page))).toEqual([expect.objectContaining({ mode: 'reject', reason: '先别写文件' })])
  await page.reload()
  await expect(approval.getByTestId('approval-reason')).toHaveValue('先别写文件')
  await approval.getByTestId('approval-confirm-reject').click()
  await expect(approval.getByTestId('receipt')).toHaveAttribute('data-decision', 'reject')
  await expect(approval.getByTestId('receipt-message')).toContainText('先别写文件')
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')

  expect(await drafts(page)).toEqual({})
  await page.reload()
  await expect(page.getByTestId('receipt')).toHaveCount(3)
  await expect(page.locator('[data-testid="input-card"][data-phase="editing"]')).toHaveCount(0)
  expect(await drafts(page)).toEqual({})
})

function oneQuestion(name: string): Scenario {
  return {
    name,
    turns: [{ toolCalls: [askUser({ title: '用哪个？', mode: 'single', options: [{ id: 'a', label: '甲' }, { id: 'b', label: '乙' }] })] }],
    final: '完成：{{results}}',
  }
}

test('a draft of a request that expired while the page was closed is gone on the next visit', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: oneQuestion('expire'), ttl: '6s' })
  // The browser's clock is paused and the page does not follow the
  // session's events: the card cannot expire in the page, however slow this
  // machine is; the server's sweeper expires the request while the page is away.
  await page.context().clock.install()
  await page.context().clock.pauseAt(Date.now() + 1000)
  await page.route('**/api/sessions/*/events', (r) => r.abort())
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  await card.getByTestId('option-b').check()
  await expect.poll(async () => Object.keys(await drafts(page))).toHaveLength(1)
  await page.goto('about:blank')
  await page.unroute('**/api/sessions/*/events')
  await expect
    .poll(async () => (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last?.status, { timeout: 20_000 })
    .toBe('expired')

  await page.goto(`${luban.url}/s/${sessionId}`)
  await expect(page.getByTestId('receipt')).toHaveAttribute('data-status', 'expired')
  await expect.poll(() => drafts(page)).toEqual({})
  await page.reload()
  await expect(page.getByTestId('receipt')).toHaveAttribute('data-status', 'expired')
  expect(await drafts(page)).toEqual({})
})

test('a draft goes when another client answers, while the page watches', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: oneQuestion('elsewhere') })
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  const requestId = (await card.getAttribute('data-request-id'))!
  await card.getByTestId('option-a').check()
  await expect.poll(async () => Object.keys(await drafts(page))).toHaveLength(1)
  const res = await luban.api('POST', '/api/chat/continue', { sessionId, requestId, selections: ['b'], customInput: '', cancelled: false })
  expect(res.status).toBe(202)
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  // The card says it was answered elsewhere and that the choice made here went unsent.
  await expect(card.getByTestId('resolved-elsewhere')).toHaveText('已在另一个窗口回答；你在这里未发送的草稿已丢弃')
  await expect.poll(() => drafts(page)).toEqual({})
})

test('two people on one browser: a draft is keyed by session and request, so the other never gets it', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: oneQuestion('two-people') })
  const a = await openAndSend(page, luban, '开始')
  await a.card.getByTestId('option-b').check()
  await expect.poll(async () => Object.keys(await drafts(page))).toHaveLength(1)
  const [aKey] = Object.keys(await drafts(page))
  expect(aKey).toContain(encodeURIComponent(a.sessionId))

  // The second principal signs in on the same browser (confirming the
  // switch) and gets the same question in its own session.
  await page.goto(luban.pageURL(OTHER_TOKEN))
  await page.getByTestId('login-switch').click()
  await expect(page.getByTestId('model-name')).toBeVisible()
  await page.getByTestId('composer').fill('开始')
  await page.getByTestId('composer').press('Enter')
  const bCard = page.locator('[data-testid="input-card"][data-phase="editing"]')
  await expect(bCard).toBeVisible()
  await expect(page).toHaveURL(/\/s\/[^/]+$/)
  expect(decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)).not.toBe(a.sessionId)
  await expect(bCard.getByTestId('option-b')).not.toBeChecked()
  await expect(bCard.getByTestId('option-a')).not.toBeChecked()
  // A's session is not theirs to open: no card, and A's draft stays where it was, unread.
  await page.goto(`${luban.url}/s/${a.sessionId}`)
  await expect(page.locator('[data-testid="notice"][data-code="session_not_found"]')).toBeVisible()
  await expect(page.getByTestId('input-card')).toHaveCount(0)
  expect(Object.keys(await drafts(page))).toEqual([aKey])
})
