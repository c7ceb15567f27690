// The page as a chat a person would choose (part A): no state traps the
// user. A submit while the server is down goes back to editing with the
// input kept and a retry that cannot answer twice; every open tab follows
// its session (an answer in one shows in the other, and so does the next
// question); a new card scrolls into view and takes the focus while header
// and composer stay on screen; the composer waits while a question does; a
// failed run's reason survives a reload with a retry; receipts show their
// own resolution, the run's end shows once.
import { askUser, expect, openAndSend, test, toolMessages, type Scenario } from './harness'

const twoQuestions: Scenario = {
  name: 'two-questions',
  turns: [
    {
      text: '先确认环境。',
      toolCalls: [
        askUser({
          title: '发布到哪个环境？',
          mode: 'single',
          options: [
            { id: 'staging', label: '预发布', recommended: true },
            { id: 'prod', label: '生产' },
          ],
        }),
      ],
    },
    { text: '再确认说明。', toolCalls: [askUser({ title: '发布说明是什么？', mode: 'text' })] },
  ],
  final: '好的：{{results}}',
}

test('a submit while the server is down goes back to editing with the input kept; the retry lands once', async ({ page, lab }) => {
  const db = `${lab.dir}/down.db`
  const first = await lab.serve({ name: 'before', scenario: twoQuestions, db })
  const { sessionId, card } = await openAndSend(page, first, '发布')
  await card.getByTestId('option-prod').check()
  await first.kill9()

  await card.getByTestId('submit').click()
  // Not stuck in 提交中…: back to editing, the choice kept, the reason worded, a retry offered.
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await expect(card.getByTestId('option-prod')).toBeChecked()
  await expect(card.getByTestId('card-error')).toHaveAttribute('data-code', 'network')
  await expect(card.getByTestId('card-error')).toContainText('连不上服务器')
  await expect(card.getByTestId('cancel')).toBeEnabled()
  // The focus is on the retry (not lost to the page), and the error describes it.
  await expect(card.getByTestId('retry')).toBeFocused()
  await expect(card.getByTestId('retry')).toHaveAccessibleDescription(/连不上服务器/)
  await lab.shot(card, 'card-server-down')

  const second = await lab.serve({ name: 'after', scenario: twoQuestions, db, port: first.port })
  await card.getByTestId('retry').click()
  await expect(card).toHaveAttribute('data-phase', 'resolved')
  await expect(card.getByTestId('receipt-selections')).toContainText('生产')
  const next = page.locator('[data-testid="input-card"][data-phase="editing"]')
  await expect(next.getByRole('heading')).toHaveText('发布说明是什么？')
  const last = (await second.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body
  const toolCallId = (await second.api('GET', `/api/sessions/${sessionId}`)).body.interactions[0].request.toolCallId
  expect(await toolMessages(second, sessionId, toolCallId)).toHaveLength(1)
  expect(last.pending.title).toBe('发布说明是什么？')
})

test('a resend of an answer that did land (a 5xx after commit, a lost reply) shows the 409 receipt as success', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: twoQuestions })
  const { sessionId, card } = await openAndSend(page, luban, '发布')
  const requestId = (await card.getAttribute('data-request-id'))!
  // The first continue reaches the server, but its answer is lost on the
  // way back: the page sees a 502 although the request was consumed.
  let first = true
  await page.route('**/api/chat/continue', async (route) => {
    if (!first) return route.continue()
    first = false
    await route.fetch({ headers: { ...route.request().headers(), accept: 'application/json' } })
    await route.fulfill({ status: 502, contentType: 'application/json', body: '{"error":{"code":"bad_gateway","message":"upstream"}}' })
  })
  await card.getByTestId('option-staging').check()
  await card.getByTestId('submit').click()
  const resolved = card.locator('[data-testid="receipt"]')
  // The watch of the session may show the receipt first; otherwise the card
  // offers a retry whose 409 already_resolved is the same receipt.
  await expect(card.getByTestId('retry').or(resolved)).toBeVisible()
  if (await card.getByTestId('retry').isVisible()) {
    await expect(card.getByTestId('card-error')).toContainText('服务器出错了')
    await card.getByTestId('retry').click()
  }
  await expect(resolved).toHaveAttribute('data-status', 'answered')
  // The answer was this card's own: no "answered elsewhere".
  await expect(card.getByTestId('resolved-elsewhere')).toHaveCount(0)
  const tr = (await luban.api('GET', `/api/sessions/${sessionId}`)).body
  const it = tr.interactions.find((i: any) => i.request.id === requestId)
  expect(it.receipt.selections).toEqual(['staging'])
  expect(await toolMessages(luban, sessionId, it.request.toolCallId)).toHaveLength(1)
})

test('two pages on one session: an answer in one shows in the other, and so does the next question', async ({ browser, page, lab }) => {
  const luban = await lab.serve({ scenario: twoQuestions })
  const { sessionId, card } = await openAndSend(page, luban, '发布')
  const requestId = (await card.getAttribute('data-request-id'))!

  const other = await browser.newContext({ locale: 'zh-CN' })
  const pageB = await other.newPage()
  await pageB.goto(luban.pageURL())
  await pageB.goto(`${luban.url}/s/${encodeURIComponent(sessionId)}`)
  const cardB = pageB.locator(`[data-testid="input-card"][data-request-id="${requestId}"]`)
  await expect(cardB).toHaveAttribute('data-phase', 'editing')
  await expect(pageB.getByTestId('composer-hint')).toHaveText('请先回答上面的问题')
  // Said once: the box itself has no placeholder while the hint shows.
  await expect(pageB.getByTestId('composer')).toHaveAttribute('placeholder', '')
  await expect(pageB.getByTestId('send')).toBeDisabled()

  // Answered in A: B shows the receipt and then the next question, live.
  await card.getByTestId('option-prod').check()
  await card.getByTestId('submit').click()
  await expect(cardB).toHaveAttribute('data-phase', 'resolved')
  await expect(cardB.getByTestId('receipt-selections')).toContainText('生产')
  const nextB = pageB.locator('[data-testid="input-card"][data-phase="editing"]')
  await expect(nextB.getByRole('heading')).toHaveText('发布说明是什么？')
  await expect(pageB.getByTestId(`session-status-${sessionId}`)).toHaveAttribute('data-status', 'waiting_input')

  // Answered in B: A follows to the end.
  await nextB.getByTestId('custom-input').fill('修复登录')
  await nextB.getByTestId('submit').click()
  const nextA = page.locator('[data-testid="input-card"]').nth(1)
  await expect(nextA).toHaveAttribute('data-phase', 'resolved')
  await expect(nextA.getByTestId('receipt-custom')).toHaveText('修复登录')
  await expect(page.getByTestId('message-assistant').last()).toContainText('好的')
  for (const p of [page, pageB]) {
    // Each receipt shows its own resolution; the run's end shows once.
    await expect(p.getByTestId('receipt-status')).toHaveText(['已提交', '已提交'])
    await expect(p.getByTestId('run-status')).toHaveCount(1)
    await expect(p.getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
    await expect(p.getByTestId(`session-status-${sessionId}`)).toHaveAttribute('data-status', 'completed')
    await expect(p.getByTestId('send')).toBeDisabled() // empty composer, no question waits
    await expect(p.getByTestId('composer-hint')).toHaveCount(0)
  }
  await lab.shot(pageB, 'second-page-followed')
  // A reload (the transcript's path) shows the same: own resolutions, one run end.
  await page.reload()
  await expect(page.getByTestId('receipt-status')).toHaveText(['已提交', '已提交'])
  await expect(page.getByTestId('run-status')).toHaveCount(1)
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await other.close()
})

test('a new card scrolls into view and takes the focus; header and composer stay on screen', async ({ page, lab }) => {
  const long = Array.from({ length: 60 }, (_, i) => `第 ${i + 1} 行说明。`).join('\n\n')
  const luban = await lab.serve({
    scenario: {
      name: 'long',
      turns: [{ text: long, toolCalls: [askUser({ title: '继续吗？', mode: 'single', options: [{ id: 'yes', label: '继续' }, { id: 'no', label: '停止' }] })] }],
      final: '完成',
    },
  })
  const { card } = await openAndSend(page, luban, '长一点')
  await expect(card).toBeInViewport()
  await expect(card.getByTestId('option-yes')).toBeFocused()
  const vh = page.viewportSize()!.height
  const header = (await page.locator('header.header').boundingBox())!
  const composer = (await page.getByTestId('composer').boundingBox())!
  expect(header.y).toBeGreaterThanOrEqual(0)
  expect(composer.y + composer.height).toBeLessThanOrEqual(vh)
  // The document itself does not scroll: only the transcript does.
  expect(await page.evaluate(() => document.scrollingElement!.scrollHeight <= window.innerHeight)).toBe(true)
  const transcript = page.getByTestId('transcript')
  expect(await transcript.evaluate((el) => el.scrollHeight > el.clientHeight)).toBe(true)
  await lab.shot(page, 'card-in-view')

  await page.keyboard.press('Space') // the focused radio: choose 继续
  await expect(card.getByTestId('option-yes')).toBeChecked()
  // Scrolled up to read: the transcript stays there while the run goes on
  // (answered by another client, so no click scrolls the page).
  await transcript.evaluate((el) => (el.scrollTop = 0))
  const requestId = (await card.getAttribute('data-request-id'))!
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  const res = await luban.api('POST', '/api/chat/continue', { sessionId, requestId, selections: ['yes'], customInput: '', cancelled: false })
  expect(res.status).toBe(202)
  await expect(page.getByTestId('message-assistant').last()).toHaveText(/完成/)
  await expect(card).toHaveAttribute('data-phase', 'resolved')
  expect(await transcript.evaluate((el) => el.scrollTop)).toBeLessThan(100)
  // Back at the bottom, it sticks there again.
  await transcript.evaluate((el) => (el.scrollTop = el.scrollHeight))
  await page.getByTestId('composer').fill('再来')
  await page.getByTestId('composer').press('Enter')
  const again = page.locator('[data-testid="input-card"][data-phase="editing"]')
  await expect(again).toBeInViewport()
  expect(await transcript.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight)).toBeLessThan(60)
})

test('a message refused while a question waits keeps its text and says why', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: twoQuestions })
  const { sessionId } = await openAndSend(page, luban, '发布')
  await expect(page.getByTestId('send')).toBeDisabled()
  await page.getByTestId('composer').fill('插一句')
  await expect(page.getByTestId('send')).toBeDisabled()
  // Another client's send reaches the server anyway: the refusal is shown
  // in the page's words, the text stays in the composer, no bubble stays.
  const refused = await page.evaluate(async (sid) => {
    const r = await fetch('/api/chat', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ sessionId: sid, message: '插一句' }) })
    return r.status
  }, sessionId)
  expect(refused).toBe(409)
  await expect(page.getByTestId('composer')).toHaveValue('插一句')
  await expect(page.getByTestId('message-user')).toHaveCount(1)
})

test('a failed run shows its reason live and after a reload, with a retry of its message', async ({ page, lab }) => {
  // A model endpoint nobody listens on: every attempt is refused.
  const luban = await lab.serve({ model: 'openai:fake-model', env: { OPENAI_BASE_URL: 'http://127.0.0.1:9/v1', OPENAI_API_KEY: 'sk-fake' } })
  await page.goto(luban.pageURL())
  await page.getByTestId('composer').fill('你好')
  await page.getByTestId('composer').press('Enter')
  const err = page.getByTestId('run-error')
  await expect(err).toHaveAttribute('data-code', 'model_error', { timeout: 30_000 })
  await expect(err).toContainText('模型调用失败')
  await expect(page).toHaveURL(/\/s\/[^/]+$/)
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  await expect(page.getByTestId(`session-status-${sessionId}`)).toHaveAttribute('data-status', 'failed')

  await page.reload()
  await expect(err).toHaveAttribute('data-code', 'model_error')
  await expect(err).toContainText('模型调用失败')
  await expect(page.locator('.msg-user-text')).toHaveText(['你好'])
  await lab.shot(page, 'run-error-after-reload')
  await page.getByTestId('language').or(page.getByTestId('lang-switch')).click()
  await expect(err).toContainText('The model call failed')

  // Retry sends the run's message again: a new run, which fails the same way.
  const chat = page.waitForRequest((r) => r.url().endsWith('/api/chat') && r.method() === 'POST')
  await page.getByTestId('retry-run').click()
  expect((await chat).postDataJSON()).toEqual({ sessionId, message: '你好' })
  await expect(page.getByTestId('run-error')).toHaveCount(2, { timeout: 30_000 })
  await expect(page.getByTestId('message-user')).toHaveCount(2)
  const tr = (await luban.api('GET', `/api/sessions/${sessionId}`)).body
  expect(tr.errors.map((e: any) => e.code)).toEqual(['model_error', 'model_error'])
})
