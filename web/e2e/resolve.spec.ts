// One-time resolution through the page (docs/design.md §A.6.4 rows 取消, 重复提交,
// 跨会话提交, and an expiring request): every request ends in exactly one
// ToolResult, a refused answer changes nothing, and nothing disappears silently.
import { expectNoSeriousViolations } from './axe'
import { askUser, expect, openAndSend, OTHER_TOKEN, test, toolMessages, type Scenario } from './harness'

const NEVER = '这句话不该出现'

function oneQuestion(name: string, title = '继续吗？'): Scenario {
  return {
    name,
    turns: [
      {
        text: '问一下。',
        toolCalls: [
          askUser({
            title,
            mode: 'single',
            options: [
              { id: 'a', label: '甲方案' },
              { id: 'b', label: '乙方案' },
            ],
          }),
        ],
      },
    ],
    final: `完成：{{results}}`,
  }
}

async function modelCalls(luban: { api: (m: string, p: string) => Promise<{ body: any }> }, sessionId: string): Promise<number> {
  const tr = await luban.api('GET', `/api/sessions/${sessionId}/trace`)
  return tr.body.trace.filter((t: any) => t.kind === 'model_call').length
}

test('cancel: a cancel receipt, the ToolResult says cancelled, the run stops without another model turn', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { ...oneQuestion('cancel'), final: NEVER } })
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  await card.getByTestId('option-a').check() // a cancel ignores the form
  await card.getByTestId('cancel').click()
  // The cancel asks first, the focus on the safe choice; Esc closes and sends nothing.
  await expect(card.getByTestId('cancel-no')).toBeFocused()
  await lab.shot(card, 'cancel-confirm')
  await expectNoSeriousViolations(page, 'the cancel confirmation')
  await page.keyboard.press('Escape')
  await expect(card.getByTestId('cancel-confirm')).toHaveCount(0)
  await expect(card.getByTestId('cancel')).toBeFocused()
  await card.getByTestId('cancel').click()
  await card.getByTestId('cancel-yes').click()

  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-status', 'cancelled')
  await expect(receipt.getByTestId('receipt-status')).toHaveText('已取消')
  await expect(receipt.getByTestId('receipt-time')).toContainText('取消')
  await expect(receipt.getByTestId('receipt-selections')).toHaveCount(0)
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-run-status', 'cancelled')
  await expect(page.getByTestId('running')).toHaveCount(0)
  await lab.shot(card, 'receipt-cancelled')

  const last = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body
  expect(last.pending).toBeNull()
  expect(last.last.status).toBe('cancelled')
  const results = await toolMessages(luban, sessionId, last.last.toolCallId)
  expect(results).toHaveLength(1)
  expect(JSON.parse(results[0].content)).toMatchObject({ selections: [], customInput: '', cancelled: true })
  const tr = await luban.api('GET', `/api/sessions/${sessionId}`)
  expect(tr.body.session.status).toBe('cancelled')
  expect(await modelCalls(luban, sessionId)).toBe(1)
  await expect(page.getByText(NEVER)).toHaveCount(0)

  // A reload shows the same receipt, and no open card asks again.
  await page.reload()
  await expect(page.getByTestId('receipt')).toHaveAttribute('data-status', 'cancelled')
  await expect(page.locator('[data-testid="input-card"][data-phase="editing"]')).toHaveCount(0)
})

test('duplicate submit from two tabs: the second gets the 409 receipt, one ToolResult only', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: oneQuestion('duplicate') })
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  const requestId = await card.getAttribute('data-request-id')

  // Tab 2 has lost its session's event stream (every tab watches it
  // otherwise, and would show the answer live): its card stays open.
  const tab2 = await page.context().newPage()
  await tab2.route('**/api/sessions/*/events', (r) => r.abort())
  await tab2.goto(`${luban.url}/s/${sessionId}`)
  const card2 = tab2.getByTestId('input-card')
  await expect(card2).toHaveAttribute('data-phase', 'editing')
  await expect(card2).toHaveAttribute('data-request-id', requestId!)

  await card.getByTestId('option-a').check()
  await card.getByTestId('submit').click()
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(card.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')

  // Tab 2 still shows the open card; its answer is refused with the receipt
  // of the first one (409 already_resolved), not its own choice.
  const refused = tab2.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await card2.getByTestId('option-b').check()
  await card2.getByTestId('submit').click()
  const res = await refused
  expect(res.status()).toBe(409)
  expect((await res.json()).error.code).toBe('already_resolved')
  const receipt2 = card2.getByTestId('receipt')
  await expect(receipt2).toHaveAttribute('data-status', 'answered')
  await expect(receipt2.getByTestId('receipt-selections')).toContainText('甲方案')
  await expect(receipt2.getByTestId('receipt-selections')).not.toContainText('乙方案')
  // It says the answer came from elsewhere and this one was not taken; the first tab says nothing.
  await expect(card2.getByTestId('resolved-elsewhere')).toHaveText('已在另一个窗口回答；你的回答没有被采用')
  await expect(card.getByTestId('resolved-elsewhere')).toHaveCount(0)
  await lab.shot(card2, 'receipt-duplicate-409')

  const toolCallId = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last.toolCallId
  const results = await toolMessages(luban, sessionId, toolCallId)
  expect(results).toHaveLength(1)
  expect(JSON.parse(results[0].content).selections).toEqual(['a'])
  expect(await modelCalls(luban, sessionId)).toBe(2)
  const audit = (await luban.api('GET', `/api/sessions/${sessionId}/trace`)).body.audit.filter((a: any) => a.requestId === requestId)
  expect(audit.map((a: any) => `${a.action}:${a.reason ?? ''}`)).toEqual(['requested:', 'answered:', 'rejected:duplicate'])
})

test("a foreign session's request is refused and the original stays answerable", async ({ page, browser, lab }) => {
  const luban = await lab.serve({ scenario: oneQuestion('foreign') })
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  const requestId = (await card.getAttribute('data-request-id'))!

  // Another principal (the second token) in its own browser context: the
  // session is not theirs, the page shows nothing of it.
  const other = await browser.newContext()
  const pageB = await other.newPage()
  const own = await openAndSend(pageB, luban, '我的任务', OTHER_TOKEN)
  await pageB.goto(`${luban.url}/s/${sessionId}`)
  await expect(pageB.locator('[data-testid="notice"][data-code="session_not_found"]')).toBeVisible()
  await expect(pageB.getByTestId('input-card')).toHaveCount(0)
  await lab.shot(pageB, 'foreign-session-refused')

  const forge = (p: typeof page, body: unknown) =>
    p.evaluate(async (b) => {
      const r = await fetch('/api/chat/continue', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
        body: JSON.stringify(b),
      })
      return { status: r.status, body: await r.json() }
    }, body)
  const answerA = { requestId, selections: ['b'], customInput: '', cancelled: false }
  // B names A's session: unknown to B.
  expect(await forge(pageB, { sessionId, ...answerA })).toMatchObject({ status: 404, body: { error: { code: 'session_not_found' } } })
  // B names its own session with A's request: the request is not in it.
  expect(await forge(pageB, { sessionId: own.sessionId, ...answerA })).toMatchObject({ status: 404, body: { error: { code: 'interaction_not_found' } } })
  await other.close()

  // The same principal, a second session of theirs, with the first session's request.
  await page.getByTestId('new-session').click()
  const second = await openAndSend(page, luban, '第二个任务')
  expect(second.sessionId).not.toBe(sessionId)
  expect(await forge(page, { sessionId: second.sessionId, ...answerA })).toMatchObject({ status: 404, body: { error: { code: 'interaction_not_found' } } })

  // Nothing was consumed: the original card is still open and answers once.
  const pending = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body
  expect(pending.pending.id).toBe(requestId)
  await page.getByTestId(`session-${sessionId}`).click()
  const original = page.locator(`[data-testid="input-card"][data-request-id="${requestId}"]`)
  await expect(original).toHaveAttribute('data-phase', 'editing')
  await original.getByTestId('option-a').check()
  await original.getByTestId('submit').click()
  await expect(original.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(original.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await lab.shot(original, 'receipt-after-foreign')

  const results = await toolMessages(luban, sessionId, pending.pending.toolCallId)
  expect(results).toHaveLength(1)
  expect(JSON.parse(results[0].content).selections).toEqual(['a'])
  const audit = (await luban.api('GET', `/api/sessions/${sessionId}/trace`)).body.audit.map((a: any) => `${a.action}:${a.reason ?? ''}`)
  expect(audit).toEqual(['requested:', 'rejected:session_mismatch', 'rejected:session_mismatch', 'answered:'])
  // The other sessions' questions are untouched.
  expect((await luban.api('GET', `/api/interactions/pending?sessionId=${second.sessionId}`)).body.pending).not.toBeNull()
  expect((await luban.api('GET', `/api/interactions/pending?sessionId=${own.sessionId}`, undefined, OTHER_TOKEN)).body.pending).not.toBeNull()
})

test('an expiring request shows when it expires, then an 已超时 receipt; the run stops', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { ...oneQuestion('expire'), final: NEVER }, ttl: '3s' })
  // The browser's clock is paused, so the open card stays open however slow
  // this machine is; the server's clock runs and its sweeper expires the request.
  await page.context().clock.install()
  await page.context().clock.pauseAt(Date.now() + 1000)
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  const expiresAt = await card.getByTestId('expires-at').locator('time').getAttribute('datetime')
  expect(Math.abs(Date.parse(expiresAt!) - Date.now())).toBeLessThan(60_000)
  await lab.shot(card, 'card-expiring')
  // A second session in another tab that lost its event stream, for a
  // submit after the server expired it (a watching tab shows it live).
  const tab2 = await page.context().newPage()
  await tab2.route('**/api/sessions/*/events', (r) => r.abort())
  const { sessionId: sessionId2, card: card2 } = await openAndSend(tab2, luban, '另一个')

  // The server expired it (its sweeper), with an expired ToolResult, and the run stopped.
  await expect
    .poll(async () => (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last?.status, { timeout: 20_000 })
    .toBe('expired')
  const last = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last
  const results = await toolMessages(luban, sessionId, last.toolCallId)
  expect(results).toHaveLength(1)
  expect(JSON.parse(results[0].content)).toMatchObject({ selections: [], cancelled: true, expired: true })
  await expect.poll(async () => (await luban.api('GET', `/api/sessions/${sessionId}`)).body.session.status).toBe('expired')

  // A card still open in the browser: once the sweeper resolved the request,
  // a submit gets 410 interaction_expired with the expired receipt → 已超时.
  await expect
    .poll(async () => (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId2}`)).body.last?.status, { timeout: 20_000 })
    .toBe('expired')
  await expect(card2).toHaveAttribute('data-phase', 'editing')
  const refused = tab2.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await card2.getByTestId('option-a').check()
  await card2.getByTestId('submit').click()
  const res = await refused
  expect(res.status()).toBe(410)
  const expired = (await res.json()).error
  expect(expired).toMatchObject({ code: 'interaction_expired', receipt: { status: 'expired' } })
  await expect(card2.getByTestId('receipt')).toHaveAttribute('data-status', 'expired')
  // The receipt shown is the server's (error.receipt), with its resolvedAt.
  await expect(card2.getByTestId('receipt-time').locator('time')).toHaveAttribute('datetime', expired.receipt.resolvedAt)
  await expect(card2.getByTestId('receipt-status')).toHaveText('已超时')
  await lab.shot(card2, 'receipt-expired-410')

  // The open card of the watching tab turned into 已超时 live, from the
  // server's user_input_resolved (the browser's clock never moved), and
  // the session list says so too.
  const receipt = card.getByTestId('receipt')
  await expect(page.getByTestId(`session-status-${sessionId}`)).toHaveAttribute('data-status', 'expired')
  await expect(receipt).toHaveAttribute('data-status', 'expired')
  await expect(receipt.getByTestId('receipt-status')).toHaveText('已超时')
  await expect(receipt.getByTestId('receipt-time')).toContainText('超时时间')
  await expect(receipt.getByTestId('receipt-expires')).toHaveCount(0)
  await expect(card.getByTestId('submit')).toHaveCount(0)
  await lab.shot(card, 'receipt-expired')
  expect(await modelCalls(luban, sessionId)).toBe(1)

  // After a reload the receipt is still there: a timeout never disappears.
  await page.reload()
  await expect(page.getByTestId('receipt')).toHaveAttribute('data-status', 'expired')
  await expect(page.getByTestId('receipt-status')).toHaveText('已超时')
  await expect(page.getByText(NEVER)).toHaveCount(0)
})
