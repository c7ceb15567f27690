// The inbox (docs/design.md §12): the header count follows GET /api/events live when
// a session the page never opened asks, an answer given in the inbox
// resumes that session's run, and another principal sees none of it.
import { expectNoSeriousViolations } from './axe'
import { askUser, expect, OTHER_TOKEN, test, TOKEN, type Luban } from './harness'

/** ask starts a session through the API (not the page) and reads its stream to the pause. */
async function ask(luban: Luban, message: string, token = TOKEN): Promise<string> {
  const res = await fetch(`${luban.url}/api/chat`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ message }),
  })
  expect(res.status).toBe(200)
  const text = await res.text()
  expect(text).toContain('event: user_input_required')
  return /"sessionId":"([^"]+)"/.exec(text)![1]
}

test('the header count updates live when another session asks, and answering from the inbox resumes it', async ({ page, browser, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'inbox',
      turns: [
        {
          text: '先问一下。',
          toolCalls: [
            askUser({
              title: '发布到哪个环境？',
              mode: 'single',
              options: [
                { id: 'staging', label: '预发布' },
                { id: 'prod', label: '生产' },
              ],
            }),
          ],
        },
      ],
      final: '好的，已选：{{results}}',
    },
  })
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('model-name')).toBeVisible()
  await expect(page.getByTestId('inbox-count')).toHaveText('0')
  await expect(page).toHaveTitle('luban')

  // A second principal, in its own browser context.
  const other = await browser.newContext()
  const page2 = await other.newPage()
  await page2.goto(luban.pageURL(OTHER_TOKEN))
  await expect(page2.getByTestId('model-name')).toBeVisible()
  await expect(page2.getByTestId('inbox-count')).toHaveText('0')

  // Two sessions the page never opened ask, one after the other: the
  // count follows without a reload.
  const first = await ask(luban, '发布网站')
  await expect(page.getByTestId('inbox-count')).toHaveText('1')
  await expect(page).toHaveTitle('(1) luban')
  const second = await ask(luban, '发布文档')
  await expect(page.getByTestId('inbox-count')).toHaveText('2')
  await expect(page).toHaveTitle('(2) luban')

  await page.getByTestId('inbox-button').click()
  const entries = page.getByTestId('inbox-item')
  await expect(entries).toHaveCount(2)
  const entry = page.locator(`[data-testid="inbox-item"][data-session-id="${first}"]`)
  await expect(entry.getByTestId('inbox-session')).toHaveText('发布网站')
  const listed = await luban.api('GET', '/api/interactions?status=pending')
  const row = listed.body.interactions.find((i: any) => i.sessionId === first)
  expect(row.agent).not.toBe('')
  await expect(entry.getByTestId('inbox-agent')).toContainText(row.agent)
  await expect(entry.getByTestId('input-card').getByRole('heading')).toHaveText('发布到哪个环境？')
  await lab.shot(page.getByTestId('inbox'), 'inbox')
  await expectNoSeriousViolations(page, 'the inbox open with two questions')
  await page.emulateMedia({ colorScheme: 'dark' })
  await lab.shot(page.getByTestId('inbox'), 'inbox-dark')
  await expectNoSeriousViolations(page, 'the inbox open, dark')
  await page.emulateMedia({ colorScheme: 'light' })

  // Answer from the inbox: the session is never opened.
  await entry.getByText('预发布', { exact: true }).click()
  await entry.getByTestId('submit').click()
  const card = entry.getByTestId('input-card')
  await expect(card).toHaveAttribute('data-phase', 'resolved')
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(page.getByTestId('inbox-count')).toHaveText('1')
  await expect(page).toHaveTitle('(1) luban')
  await expect(page.getByTestId('chat')).toHaveAttribute('data-session-id', '')
  await lab.shot(page.getByTestId('inbox'), 'inbox-answered')
  await expectNoSeriousViolations(page, 'the inbox with a receipt')

  // The run went on: its transcript ends with the model's reply to the answer.
  await expect
    .poll(async () => {
      const tr = await luban.api('GET', `/api/sessions/${first}`)
      return { status: tr.body.session.status, last: tr.body.messages.at(-1)?.content }
    })
    .toEqual({ status: 'completed', last: expect.stringContaining('预发布 (staging)') })
  const tr2 = await luban.api('GET', `/api/sessions/${second}`)
  expect(tr2.body.session.status).toBe('waiting_input')

  // The other principal saw nothing: no count, an empty inbox, nothing listed.
  await expect(page2.getByTestId('inbox-count')).toHaveText('0')
  await expect(page2).toHaveTitle('luban')
  await page2.getByTestId('inbox-button').click()
  await expect(page2.getByTestId('inbox-empty')).toBeVisible()
  await expect(page2.getByTestId('inbox-item')).toHaveCount(0)
  const theirs = await luban.api('GET', '/api/interactions?status=pending', undefined, OTHER_TOKEN)
  expect(theirs.body.interactions).toEqual([])
  await other.close()
})
