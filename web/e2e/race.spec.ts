// Two tabs answer one question at once, each following the session's events
// (docs/design.md §24, "Answered elsewhere"): the first answer is taken, and
// the other tab — whose own answer was still in flight when the first one's
// receipt reached it — says 已在另一个窗口回答；你的回答没有被采用 above the
// winner's receipt instead of showing it as if it were its own.
import { askUser, expect, openAndSend, test, toolMessages, type Scenario } from './harness'

const scenario: Scenario = {
  name: 'race',
  turns: [
    {
      text: '问一下。',
      toolCalls: [
        askUser({
          title: '部署到哪里？',
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

test('two tabs answer at once: the losing tab says it was answered in another window', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario })
  const { sessionId, card } = await openAndSend(page, luban, '开始')
  const requestId = await card.getAttribute('data-request-id')

  const tab2 = await page.context().newPage()
  await tab2.goto(`${luban.url}/s/${sessionId}`)
  const card2 = tab2.locator(`[data-testid="input-card"][data-request-id="${requestId}"]`)
  await expect(card2).toHaveAttribute('data-phase', 'editing')

  // Tab 2 answers first, but its request is held on the way until tab 1's
  // answer was taken: the race as two people clicking at once lose it.
  let release!: () => void
  const held = new Promise<void>((r) => (release = r))
  await tab2.route('**/api/chat/continue', async (route) => {
    await held
    await route.continue()
  })
  await card2.getByTestId('option-b').check()
  await card2.getByTestId('submit').click()
  await expect(card2).toHaveAttribute('data-phase', 'submitting')

  await card.getByTestId('option-a').check()
  await card.getByTestId('submit').click()
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  // Tab 2's event stream brings tab 1's receipt while its own answer is in flight.
  await expect(card2).toHaveAttribute('data-phase', 'resolved')

  const refused = tab2.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  release()
  const res = await refused
  expect(res.status()).toBe(409)
  expect((await res.json()).error.code).toBe('already_resolved')

  await expect(card2.getByTestId('resolved-elsewhere')).toHaveText('已在另一个窗口回答；你的回答没有被采用')
  await expect(card2.getByTestId('receipt').getByTestId('receipt-selections')).toHaveText(/甲方案/)
  await expect(card.getByTestId('resolved-elsewhere')).toHaveCount(0)
  await lab.shot(card2, 'receipt-race-lost')

  const toolCallId = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last.toolCallId
  const results = await toolMessages(luban, sessionId, toolCallId)
  expect(results).toHaveLength(1)
  expect(JSON.parse(results[0].content).selections).toEqual(['a'])
})
