// Several approvals of one model message on the page (docs/design.md §17
// "Batch"): the scripted model calls write_file twice in one message; the
// run pauses once with both approvals; a reload before answering shows both
// cards; "全部批准" answers both in ONE POST /api/chat/continue, each card
// turns into its receipt, both files are written once and the run goes on
// to its end.
import { readFileSync } from 'node:fs'
import path from 'node:path'
import type { Request } from '@playwright/test'
import { expectNoSeriousViolations } from './axe'
import { expect, openAndSend, test, toolMessages } from './harness'

const first = { path: 'notes/a.md', content: 'alpha\n' }
const second = { path: 'notes/b.md', content: 'beta\n' }

test('two approvals of one message: a reload shows both, "Approve all" answers both at once, the run continues', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'batch',
      turns: [{ text: '我来写两个文件。', toolCalls: [{ name: 'write_file', arguments: first }, { name: 'write_file', arguments: second }] }],
      final: '完成：{{results}}',
    },
  })
  const { sessionId } = await openAndSend(page, luban, '写两个文件')
  const cards = page.locator('[data-testid="input-card"][data-mode="approval"]')
  await expect(cards).toHaveCount(2)
  await expect(cards.nth(0)).toHaveAttribute('data-phase', 'editing')
  await expect(cards.nth(1)).toHaveAttribute('data-phase', 'editing')
  // The first question of the pause takes the focus, and keeps it when the second comes.
  await expect(cards.nth(0)).toBeFocused()
  const ids = await cards.evaluateAll((els) => els.map((e) => e.getAttribute('data-request-id')!))
  expect(new Set(ids).size).toBe(2)
  // Both wait in one pause: the server lists both, in call order.
  const pending = await luban.api('GET', `/api/interactions/pending?sessionId=${encodeURIComponent(sessionId)}`)
  expect(pending.status).toBe(200)
  expect(pending.body.requests.map((r: { id: string }) => r.id)).toEqual(ids)
  expect(pending.body.pending.id).toBe(ids[0])

  // A reload before answering restores both cards and the bar.
  await page.reload()
  await expect(page.getByTestId('model-name')).toBeVisible()
  await expect(cards).toHaveCount(2)
  expect(await cards.evaluateAll((els) => els.map((e) => [e.getAttribute('data-request-id'), e.getAttribute('data-phase')]))).toEqual(
    ids.map((id) => [id, 'editing']),
  )
  await expect(cards.nth(0).getByTestId('approval-tool')).toHaveText('write_file')
  await expect(cards.nth(1).locator('.json-string').first()).toHaveText(`"${second.path}"`)
  const bar = page.getByTestId('approve-all-bar')
  await expect(bar).toHaveText(/2 个工具调用在等待批准/)
  const button = bar.getByTestId('approve-all')
  await expect(button).toHaveText('全部批准（2 个）')
  await expect(page.getByTestId('composer-hint')).toHaveText('请先批准或拒绝上面的这些工具调用')
  await lab.shot(page.getByTestId('transcript'), 'two-approvals')
  await bar.scrollIntoViewIfNeeded()
  await lab.shot(bar, 'approve-all-bar')
  await expectNoSeriousViolations(page, 'two approvals and "Approve all"')

  // The keyboard reaches the button from the last card (Tab, bounded) and presses it.
  const continues: Request[] = []
  page.on('request', (r) => r.method() === 'POST' && r.url().endsWith('/api/chat/continue') && continues.push(r))
  await cards.nth(1).getByTestId('approval-approve').focus()
  for (let n = 0; n < 20 && !(await button.evaluate((b) => b === document.activeElement)); n++) await page.keyboard.press('Tab')
  await expect(button).toBeFocused()
  const answered = page.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await page.keyboard.press('Enter')
  const res = await answered
  expect(res.status()).toBe(202)

  for (const n of [0, 1]) {
    await expect(cards.nth(n)).toHaveAttribute('data-phase', 'resolved')
    const receipt = cards.nth(n).getByTestId('receipt')
    await expect(receipt).toHaveAttribute('data-decision', 'approve')
    await expect(receipt.getByTestId('receipt-status')).toHaveText('已批准')
  }
  await expect(page.getByTestId('approve-all-bar')).toHaveCount(0)
  await expect(page.getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await lab.shot(page.getByTestId('transcript'), 'both-receipts')

  // ONE continue, in the batch form.
  expect(continues).toHaveLength(1)
  expect(continues[0].postDataJSON()).toEqual({
    sessionId,
    answers: ids.map((requestId) => ({ requestId, decision: 'approve' })),
  })
  // Each tool ran once, with the model's arguments.
  for (const f of [first, second]) expect(readFileSync(path.join(lab.dir, f.path), 'utf8')).toBe(f.content)
  for (const [id, f] of [['call_1_0_0', first], ['call_1_0_1', second]] as const) {
    const tm = await toolMessages(luban, sessionId, id)
    expect(tm.map((m) => m.content)).toEqual([`wrote ${Buffer.byteLength(f.content)} bytes to ${f.path}`])
  }
})
