// axe-core on the cards the demo walk (axe.spec.ts) does not show, in the
// light and the dark theme: the MCP form and url elicitation cards and
// their receipts, the /q/{requestId} page, and the inbox panel open with an
// AskUser batch and an approval waiting; no serious or critical violation.
import { expectNoSeriousViolations } from './axe'
import { expect, openAndSend, test, TOKEN, type Luban, type Scenario } from './harness'
import { everythingConfig } from './paths'


const mcpConfig = everythingConfig

const elicitations: Scenario = {
  name: 'elicitations',
  turns: [
    { toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] },
    { toolCalls: [{ name: 'everything__trigger-url-elicitation', arguments: { url: 'https://auth.example.com/authorize?client=luban', message: 'Sign in to continue' } }] },
  ],
  final: '完成：{{results}}',
}

const batchThenApproval: Scenario = {
  name: 'batch-approval',
  turns: [
    {
      toolCalls: [
        {
          name: 'AskUser',
          arguments: {
            questions: [
              {
                question: '用哪种布局？',
                header: '布局',
                context: 'src/layout.ts',
                multi_select: false,
                options: [
                  { label: '网格', description: '两列', preview: '┌──┬──┐' },
                  { label: '列表', description: '一列', preview: '- A' },
                ],
              },
              { question: '支持哪些平台？', header: '平台', multi_select: true, options: [{ label: 'Linux', description: '服务器' }, { label: 'macOS', description: '桌面' }] },
            ],
          },
        },
      ],
    },
    { toolCalls: [{ name: 'write_file', arguments: { path: 'plan.md', content: '# Plan\n' } }] },
  ],
  final: '完成：{{results}}',
}

/** ask starts a session through the API and reads its stream to the pause; it returns the session and the request. */
async function ask(luban: Luban, message: string): Promise<{ sessionId: string; requestId: string }> {
  const res = await fetch(`${luban.url}/api/chat`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
    body: JSON.stringify({ message }),
  })
  expect(res.status).toBe(200)
  const text = await res.text()
  expect(text).toContain('event: user_input_required')
  const sessionId = /"sessionId":"([^"]+)"/.exec(text)![1]
  const pending = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.pending
  return { sessionId, requestId: pending.id }
}

for (const theme of ['light', 'dark'] as const) {
  test(`axe: the form and url elicitation cards and receipts (${theme})`, async ({ page, lab }) => {
    await page.emulateMedia({ colorScheme: theme })
    const luban = await lab.serve({ scenario: elicitations, config: mcpConfig })
    const { card } = await openAndSend(page, luban, '试试 MCP')
    await expect(card).toHaveAttribute('data-mode', 'form')
    await expectNoSeriousViolations(page, `${theme}: form elicitation card`)
    // The form's own check: every problem marked by its field.
    await card.getByTestId('field-integer').fill('500')
    await card.getByTestId('submit').click()
    await expect(card.getByTestId('field-error-content.name')).toBeVisible()
    await expectNoSeriousViolations(page, `${theme}: form elicitation card with field errors`)
    await card.getByTestId('field-name').fill('Ada')
    await card.getByTestId('field-integer').fill('7')
    await card.getByTestId('submit').click()
    await expect(card.getByTestId('receipt')).toHaveAttribute('data-decision', 'accept')
    await expectNoSeriousViolations(page, `${theme}: form elicitation receipt`)

    const url = page.locator('[data-testid="input-card"][data-mode="url"]')
    await expect(url).toHaveAttribute('data-phase', 'editing')
    await url.scrollIntoViewIfNeeded()
    await expectNoSeriousViolations(page, `${theme}: url elicitation card`)
    await lab.shot(url, `url-card-${theme}`)
    await url.getByTestId('decline').click()
    await expect(url.getByTestId('receipt')).toBeVisible()
    await expectNoSeriousViolations(page, `${theme}: url elicitation receipt`)
  })

  test(`axe: the /q/{requestId} page and the inbox open with a batch and an approval (${theme})`, async ({ page, lab }) => {
    await page.emulateMedia({ colorScheme: theme })
    const luban = await lab.serve({ scenario: batchThenApproval })
    // One session gets to its approval, another waits at its batch.
    const first = await ask(luban, '第一个')
    const answered = await luban.api('POST', '/api/chat/continue', {
      sessionId: first.sessionId,
      requestId: first.requestId,
      selections: [],
      customInput: '',
      cancelled: false,
      answers: [
        { question: '用哪种布局？', selected: ['网格'], other: '' },
        { question: '支持哪些平台？', selected: ['Linux'], other: '' },
      ],
    })
    expect(answered.status).toBe(202)
    await expect.poll(async () => (await luban.api('GET', `/api/interactions/pending?sessionId=${first.sessionId}`)).body.pending?.mode).toBe('approval')
    const second = await ask(luban, '第二个')

    await page.goto(luban.pageURL())
    await expect(page.getByTestId('model-name')).toBeVisible()
    await page.goto(`${luban.url}/q/${encodeURIComponent(second.requestId)}`)
    const q = page.getByTestId('question-page')
    await expect(q.getByTestId('input-card')).toHaveAttribute('data-mode', 'questions')
    await expectNoSeriousViolations(page, `${theme}: /q/{requestId} with a batch`)
    await lab.shot(page, `q-page-${theme}`)

    await page.goto(luban.url + '/')
    await expect(page.getByTestId('inbox-count')).toHaveText('2')
    await page.getByTestId('inbox-button').click()
    const inbox = page.getByTestId('inbox')
    await expect(inbox.locator('[data-testid="input-card"][data-mode="approval"]')).toBeVisible()
    await expect(inbox.locator('[data-testid="input-card"][data-mode="questions"]')).toBeVisible()
    await expectNoSeriousViolations(page, `${theme}: the inbox open with a batch and an approval`)
    await lab.shot(inbox, `inbox-${theme}`)
  })
}
