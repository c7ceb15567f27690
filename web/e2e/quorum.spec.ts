// A quorum approval walked by three people in three browser contexts
// (docs/design.md §16, docs/people.md "Routes: who answers"): Alice's agent
// calls write_file, routed to group finance with quorum 2 and selfApproval
// false. Alice watches her session; Bob and Carol approve from their inboxes.
// Alice's page shows "等待 finance（已批准 1/2）" after Bob, the tool runs
// once after Carol, and Alice's card turns into the receipt. Alice herself
// may not approve: 403 not_assignee.
import { existsSync, readFileSync } from 'node:fs'
import path from 'node:path'
import type { Browser, Page } from '@playwright/test'
import { expect, test, toolMessages } from './harness'

const ALICE = 'alice-e2e-token'
const BOB = 'bob-e2e-token'
const CAROL = 'carol-e2e-token'

const config = `people:
  - {id: alice, name: Alice, tokens: [${ALICE}]}
  - {id: bob, name: Bob, tokens: [${BOB}], groups: [finance]}
  - {id: carol, name: Carol, tokens: [${CAROL}], groups: [finance]}
agents:
  - name: team
    tools: [ask_user, write_file]
    routes:
      - match: {kind: approval, tool: write_file}
        assignees: [group:finance]
        quorum: 2
        selfApproval: false
`

const args = { path: 'notes/refund.md', content: 'refund 1200\n' }

/** signIn opens the page in a fresh browser context signed in with token. */
async function signIn(browser: Browser, url: string): Promise<Page> {
  const ctx = await browser.newContext()
  const page = await ctx.newPage()
  await page.goto(url)
  await expect(page.getByTestId('model-name')).toBeVisible()
  return page
}

/**
 * approveFromInbox opens page's inbox and approves the request there,
 * returning the continue's status. (Its body is not read from the browser:
 * the card re-renders on the answer and Chromium may drop the body first.)
 */
async function approveFromInbox(page: Page, requestId: string) {
  await page.getByTestId('inbox-button').click()
  const entry = page.locator(`[data-testid="inbox-item"][data-request-id="${requestId}"]`)
  await expect(entry).toBeVisible()
  const answered = page.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await entry.getByTestId('approval-approve').click()
  const res = await answered
  return { status: res.status() }
}

test('two of finance approve in their browsers while the owner watches; the tool runs once', async ({ browser, lab }) => {
  const luban = await lab.serve({
    config,
    scenario: { name: 'quorum', turns: [{ text: '我来记下退款。', toolCalls: [{ name: 'write_file', arguments: args }] }], final: '完成：{{results}}' },
  })
  const alice = await signIn(browser, luban.pageURL(ALICE))
  const bob = await signIn(browser, luban.pageURL(BOB))
  const carol = await signIn(browser, luban.pageURL(CAROL))

  // Alice starts the run and sees the approval card, waiting for finance.
  await alice.getByTestId('composer').fill('记下退款')
  await alice.getByTestId('composer').press('Enter')
  const first = alice.locator('[data-testid="input-card"][data-mode="approval"]').first()
  await expect(first).toBeVisible()
  const requestId = (await first.getAttribute('data-request-id'))!
  const card = alice.locator(`[data-testid="input-card"][data-request-id="${requestId}"]`)
  await expect(alice).toHaveURL(/\/s\/[^/]+$/)
  const sessionId = decodeURIComponent(new URL(alice.url()).pathname.split('/').pop()!)
  await expect(card.getByTestId('waiting-for')).toHaveText('等待 finance（已批准 0/2）')
  await lab.shot(card, 'owner-waiting-0')

  // Alice may not approve her own agent's call: the server answers 403
  // not_assignee, the page says why, and the question stays pending.
  const refused = alice.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await card.getByTestId('approval-approve').click()
  const own = await refused
  expect(own.status()).toBe(403)
  expect((await own.json()).error.code).toBe('not_assignee')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  // The card shows the server's message by the buttons (not yet worded
  // in the page's language), and no retry: retrying cannot help.
  const err = card.getByTestId('card-error')
  await expect(err).toHaveAttribute('data-code', 'not_assignee')
  await expect(err).toHaveText('这个问题不是交给你的：只有它等待的人可以回答')
  await expect(err.getByTestId('retry')).toHaveCount(0)
  await lab.shot(card, 'owner-refused')
  expect(existsSync(path.join(lab.dir, args.path))).toBe(false)

  // Bob approves from his inbox: recorded, not resolved; Alice's page says 1 of 2.
  const b = await approveFromInbox(bob, requestId)
  expect(b.status).toBe(202)
  await expect(card.getByTestId('waiting-for')).toHaveText('等待 finance（已批准 1/2）')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await lab.shot(card, 'owner-waiting-1')
  expect(existsSync(path.join(lab.dir, args.path))).toBe(false)

  // Carol approves: the tool runs, once, and Alice's card is the receipt.
  const c = await approveFromInbox(carol, requestId)
  expect(c.status).toBe(202)
  await expect(card).toHaveAttribute('data-phase', 'resolved')
  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-decision', 'approve')
  await expect(receipt.getByTestId('receipt-status')).toHaveText('已批准')
  await expect(alice.getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await lab.shot(card, 'owner-receipt')
  expect(readFileSync(path.join(lab.dir, args.path), 'utf8')).toBe(args.content)
  const tm = await toolMessages(luban, sessionId, 'call_1_0_0', ALICE)
  expect(tm.map((m) => m.content)).toEqual([`wrote ${args.content.length} bytes to ${args.path}`])

  for (const p of [alice, bob, carol]) await p.context().close()
})
