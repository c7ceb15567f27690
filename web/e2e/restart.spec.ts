// Refresh and restart through the page (docs/design.md §A.6.4 rows 页面刷新 and
// 服务重启): a reload restores the open card from GET
// /api/interactions/pending; after a kill -9 and a start on the same SQLite
// file the same question is answered and the run resumes exactly (one ToolResult
// for the original call, no question asked twice); with --db memory, or when
// the run's agent is gone, the card says "服务已重启，请重新发起任务" instead.
import { askUser, expect, openAndSend, test, toolMessages, type FakeTurn, type Scenario } from './harness'

const NOT_RESUMABLE = '服务已重启，请重新发起任务'
const SESSION_GONE = '这个会话不存在或已被删除'

const releaseScenario: Scenario = {
  name: 'release',
  turns: [
    {
      text: '先确认发布环境。',
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
  ],
  final: '计划：{{results}}',
}

test('a page refresh restores the open card, and the answer after it continues the run', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'refresh',
      turns: [{ text: '请描述一下。', toolCalls: [askUser({ title: '需求是什么？', mode: 'text', submitLabel: '发送描述' })] }],
      final: '明白了：{{results}}',
    },
  })
  const { sessionId, card } = await openAndSend(page, luban, '帮我写个脚本')
  const requestId = await card.getAttribute('data-request-id')
  await expect(card).toHaveAttribute('data-mode', 'text')
  await card.getByTestId('custom-input').fill('写了一半')

  const pending = page.waitForResponse((r) => r.url().includes('/api/interactions/pending?sessionId='))
  await page.reload()
  expect((await pending).status()).toBe(200)
  const restored = page.getByTestId('input-card')
  await expect(restored).toHaveCount(1)
  await expect(restored).toHaveAttribute('data-request-id', requestId!)
  await expect(restored).toHaveAttribute('data-phase', 'editing')
  await expect(restored.getByTestId('submit')).toHaveText('发送描述')
  await expect(page.getByTestId('message-user')).toHaveText(/帮我写个脚本/)
  await expect(page.getByTestId('message-assistant')).toHaveText(/请描述一下。/)
  await lab.shot(restored, 'card-restored')

  const text = '每天 9 点备份 📦\n保留 7 天'
  await restored.getByTestId('custom-input').fill(text)
  await restored.getByTestId('submit').click()
  const receipt = restored.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-status', 'answered')
  expect(await receipt.getByTestId('receipt-custom').innerText()).toBe(text)
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await expect(page.getByTestId('message-assistant').last()).toContainText('每天 9 点备份 📦')
  await lab.shot(restored, 'receipt-after-refresh')

  // And a refresh after the answer shows the receipt, not a card to answer.
  await page.reload()
  await expect(page.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(page.getByTestId('submit')).toHaveCount(0)
  const results = await toolMessages(luban, sessionId, (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last.toolCallId)
  expect(results).toHaveLength(1)
  expect(JSON.parse(results[0].content).customInput).toBe(text)
})

test('server restart (kill -9, same database), reload, submit: the fake model sees an exact resume', async ({ page, lab }) => {
  const ask = {
    title: '请选择执行方式',
    mode: 'single',
    options: [
      { id: 'safe', label: '先分析', recommended: true },
      { id: 'implement', label: '直接实现' },
    ],
  }
  const turns: FakeTurn[] = [
    { text: '我先问一下。', toolCalls: [{ id: 'call_restart_1', name: 'ask_user', arguments: JSON.stringify(ask) }] },
    { text: '重启后继续完成。' },
  ]
  const fake = await lab.fakeOpenAI(turns)
  const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-fake' }
  const first = await lab.serve({ name: 'before', model: 'openai:fake-model', env })
  const { sessionId, card } = await openAndSend(page, first, '改代码')
  const requestId = await card.getAttribute('data-request-id')
  const before = (await first.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.pending
  expect(before.resumable).toBe(true)
  await first.kill9()

  const second = await lab.serve({ name: 'after', model: 'openai:fake-model', env, port: first.port })
  const after = (await second.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.pending
  expect(after).toEqual(before) // the same request, same expiry, still resumable

  await page.reload()
  const restored = page.getByTestId('input-card')
  await expect(restored).toHaveAttribute('data-request-id', requestId!)
  await expect(restored).toHaveAttribute('data-phase', 'editing')
  await lab.shot(restored, 'card-after-restart')
  await restored.getByTestId('option-implement').check()
  await restored.getByTestId('submit').click()
  await expect(restored.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(restored.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await expect(page.getByTestId('message-assistant').last()).toContainText('重启后继续完成。')
  await lab.shot(restored, 'receipt-after-restart')

  // Exactly two model calls: the first asked, the second got the answer as
  // the ToolResult of the original call and nothing else was replayed.
  const reqs = await fake.waitRequests(2)
  expect(reqs).toHaveLength(2)
  const msgs = reqs[1].messages
  expect(msgs.map((m: any) => m.role)).toEqual([...reqs[0].messages.map((m: any) => m.role), 'assistant', 'tool'])
  expect(msgs[msgs.length - 2].tool_calls.map((c: any) => c.id)).toEqual(['call_restart_1'])
  expect(msgs[msgs.length - 1].tool_call_id).toBe('call_restart_1')
  expect(JSON.parse(msgs[msgs.length - 1].content)).toMatchObject({ selections: ['implement'], cancelled: false })
})

test('server restart without a reload: the open card submits to the new process', async ({ page, lab }) => {
  const first = await lab.serve({ name: 'before', scenario: releaseScenario })
  const { sessionId, card } = await openAndSend(page, first, '发布')
  await first.kill9()
  const second = await lab.serve({ name: 'after', scenario: releaseScenario, port: first.port })

  await card.getByTestId('option-prod').check()
  await card.getByTestId('submit').click()
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(card.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await expect(page.getByTestId('message-assistant').last()).toContainText('计划：- ask_user: 生产 (prod)')
  const tr = (await second.api('GET', `/api/sessions/${sessionId}/trace`)).body
  expect(tr.trace.filter((t: any) => t.kind === 'model_call')).toHaveLength(2)
  expect(tr.trace.filter((t: any) => t.kind === 'tool_result')).toHaveLength(1)
})

test('--db memory: after a restart the card says the session does not exist and sends nothing more', async ({ page, lab }) => {
  const first = await lab.serve({ name: 'before', scenario: releaseScenario, db: 'memory' })
  const { card } = await openAndSend(page, first, '发布')
  await first.kill9()
  await lab.serve({ name: 'after', scenario: releaseScenario, db: 'memory', port: first.port })

  const refused = page.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await card.getByTestId('option-staging').check()
  await card.getByTestId('submit').click()
  const res = await refused
  expect(res.status()).toBe(404)
  expect((await res.json()).error.code).toBe('session_not_found')
  await expect(card).toHaveAttribute('data-phase', 'not_resumable')
  await expect(card.getByTestId('not-resumable')).toHaveText(SESSION_GONE)
  await expect(card.getByTestId('submit')).toHaveCount(0)
  await expect(card.getByTestId('cancel')).toHaveCount(0)
  await expect(card.locator('input, button, textarea')).toHaveCount(0)
  await lab.shot(card, 'card-not-resumable-memory')
  // The page's follow of the session reconnects to the new process, which
  // does not know the session either: the transcript says so too, once.
  const gone = page.locator('[data-testid="notice"][data-code="session_not_found"]')
  await expect(gone).toContainText(SESSION_GONE, { timeout: 30_000 })
  await expect(gone).toHaveCount(1)

  // A reload finds no session at all (nothing was kept) and says so.
  await page.reload()
  const notice = page.locator('[data-testid="notice"][data-code="session_not_found"]')
  await expect(notice).toContainText(SESSION_GONE)
  await expect(page.getByTestId('composer')).toBeDisabled()
  await expect(page.getByTestId('input-card')).toHaveCount(0)
  await lab.shot(page, 'page-after-memory-restart')
})

test('a run whose agent is gone shows a not-resumable card on reload; with the agent back it resumes', async ({ page, lab }) => {
  const first = await lab.serve({ name: 'planner', scenario: releaseScenario, env: { LUBAN_AGENT: 'planner' } })
  const { sessionId, card } = await openAndSend(page, first, '发布')
  const requestId = await card.getAttribute('data-request-id')
  await first.stop()

  const second = await lab.serve({ name: 'coder', scenario: releaseScenario, env: { LUBAN_AGENT: 'coder' }, port: first.port })
  expect((await second.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.pending.resumable).toBe(false)
  await page.reload()
  const shown = page.getByTestId('input-card')
  await expect(shown).toHaveAttribute('data-phase', 'not_resumable')
  await expect(shown.getByTestId('not-resumable')).toHaveText(NOT_RESUMABLE)
  await expect(shown.locator('input, button, textarea')).toHaveCount(0)
  await lab.shot(shown, 'card-not-resumable-agent-gone')
  await second.stop()

  const third = await lab.serve({ name: 'planner-again', scenario: releaseScenario, env: { LUBAN_AGENT: 'planner' }, port: first.port })
  await page.reload()
  await expect(shown).toHaveAttribute('data-request-id', requestId!)
  await expect(shown).toHaveAttribute('data-phase', 'editing')
  await shown.getByTestId('option-staging').check()
  await shown.getByTestId('submit').click()
  await expect(shown.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  const last = (await third.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last
  expect(await toolMessages(third, sessionId, last.toolCallId)).toHaveLength(1)
})
