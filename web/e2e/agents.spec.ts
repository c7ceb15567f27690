// Two agents from a configuration file (docs/design.md §9) and an approval that
// survives a crash (docs/design.md §10), end to end: a real `luban serve --config`
// talking to the in-repo fake OpenAI-compatible server
// (internal/testkit/cmd/fakeopenai-serve). The page picks the agent that has
// write_file under `approval: always`; its write waits on the page as an
// approval card; luban is killed with SIGKILL and started again on the same
// SQLite file; after a reload the person approves, and the file is written
// exactly once and the model's next request carries the tool's result.
import path from 'node:path'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { expect, test, type Luban } from './harness'

const config = `# two agents; the writer asks before every write
agents:
  - name: helper
    model: openai:fake-model
    instructions: You answer questions about the workspace.
    tools: [current_time, list_files]
  - name: writer
    model: openai:fake-model
    instructions: You write files in the workspace. The user approves every write.
    tools: [list_files, read_file, write_file]
    approval:
      write_file: always
`

/** toolCalls reads luban_tool_calls_total{tool} (all outcomes) from /metrics. */
async function toolCalls(luban: Luban, tool: string): Promise<number> {
  const text = await (await fetch(`${luban.url}/metrics`)).text()
  let n = 0
  for (const line of text.split('\n')) {
    const m = /^luban_tool_calls_total\{([^}]*)\} (\S+)$/.exec(line)
    if (m && m[1].split(',').includes(`tool="${tool}"`)) n += Number(m[2])
  }
  return n
}

test('config with two agents: the writer\'s write_file waits on the page, survives kill -9, runs exactly once after approve', async ({ page, lab }) => {
  const content = '# 部署计划\n\n1. 备份数据库\n2. 灰度发布 📦\n'
  const bytes = Buffer.byteLength(content, 'utf8')
  const fake = await lab.fakeOpenAI([
    { text: '我把计划写进 notes/plan.md。', toolCalls: [{ id: 'call_write_1', name: 'write_file', arguments: JSON.stringify({ path: 'notes/plan.md', content }) }] },
    { text: '计划已写好。' },
  ])
  const env = { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-fake' }
  const db = path.join(lab.dir, 'agents.db')
  const first = await lab.serve({ name: 'before', config, env, db })

  const agents = await first.api('GET', '/api/agents')
  expect(agents.status).toBe(200)
  expect(agents.body.agents.map((a: any) => a.name)).toEqual(['helper', 'writer'])
  expect(agents.body.agents[1].tools).toContain('write_file')

  // The picker offers both agents, the default preselected; pick the writer.
  await page.goto(first.pageURL())
  const picker = page.getByTestId('agent-picker')
  await expect(picker).toHaveValue('helper')
  await expect(picker.locator('option')).toHaveText(['helper (默认) · openai:fake-model', 'writer · openai:fake-model'])
  await picker.selectOption('writer')
  await expect(page.getByTestId('agent-picker-tools')).toContainText('write_file')
  await lab.shot(page, 'agent-picker')
  await page.getByTestId('composer').fill('把部署计划写到 notes/plan.md')
  await page.getByTestId('composer').press('Enter')

  const card = page.locator('[data-testid="input-card"][data-mode="approval"]')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await expect(card.getByTestId('approval-tool')).toHaveText('write_file')
  await expect(card.getByTestId('approval-arguments')).toContainText('notes/plan.md')
  await expect(page).toHaveURL(/\/s\/[^/]+$/)
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  const requestId = await card.getAttribute('data-request-id')
  await expect(page.getByTestId('session-header').getByTestId('session-agent')).toHaveAttribute('data-agent', 'writer')
  await expect(page.getByTestId(`session-agent-${sessionId}`)).toHaveAttribute('data-agent', 'writer')
  await lab.shot(page, 'approval-waiting')

  // The writer's request offered write_file; nothing ran yet.
  const before = await fake.waitRequests(1)
  expect(before).toHaveLength(1)
  expect(before[0].tools.map((t: any) => t.function.name)).toContain('write_file')
  expect(before[0].messages[0]).toMatchObject({ role: 'system', content: 'You write files in the workspace. The user approves every write.' })
  const target = path.join(lab.dir, 'notes', 'plan.md')
  expect(existsSync(target)).toBe(false)
  expect(await toolCalls(first, 'write_file')).toBe(0)
  const pendingBefore = (await first.api('GET', `/api/interactions/pending?sessionId=${encodeURIComponent(sessionId)}`)).body.pending
  expect(pendingBefore).toMatchObject({ id: requestId, tool: 'approval', mode: 'approval', toolName: 'write_file', toolCallId: 'call_write_1', resumable: true })

  // A crash while the write waits, then the same database on the same port.
  await first.kill9()
  const second = await lab.serve({ name: 'after', config, env, db, port: first.port })
  const pendingAfter = (await second.api('GET', `/api/interactions/pending?sessionId=${encodeURIComponent(sessionId)}`)).body.pending
  expect(pendingAfter).toEqual(pendingBefore)

  await page.reload()
  const restored = page.locator(`[data-testid="input-card"][data-request-id="${requestId}"]`)
  await expect(restored).toHaveAttribute('data-phase', 'editing')
  await expect(restored).toHaveAttribute('data-mode', 'approval')
  await expect(page.getByTestId('session-header').getByTestId('session-agent')).toHaveAttribute('data-agent', 'writer')
  await expect(page.getByTestId('agent-picker')).toHaveCount(0) // a session keeps its agent
  await lab.shot(restored, 'approval-after-restart')
  await restored.getByTestId('approval-approve').click()

  const receipt = restored.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-decision', 'approve')
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await expect(page.getByTestId('message-assistant').last()).toContainText('计划已写好。')
  await lab.shot(page, 'approved-after-restart')

  // Written exactly once: the bytes, no temporary file left, one execution
  // of the tool (the process's own counter), one ToolResult, one answer.
  expect(readFileSync(target, 'utf8')).toBe(content)
  expect(readdirSync(path.dirname(target))).toEqual(['plan.md'])
  expect(await toolCalls(second, 'write_file')).toBe(1)
  const tr = (await second.api('GET', `/api/sessions/${encodeURIComponent(sessionId)}/trace`)).body
  const kinds = tr.trace.filter((t: any) => t.data?.toolCallId === 'call_write_1').map((t: any) => t.kind)
  expect(kinds.filter((k: string) => k === 'tool_started')).toHaveLength(1)
  expect(kinds.filter((k: string) => k === 'tool_result')).toHaveLength(1)
  expect(tr.audit.filter((a: any) => a.requestId === requestId).map((a: any) => a.action)).toEqual(['requested', 'answered'])

  // The model's next request carries the tool's own result for the call.
  const reqs = await fake.waitRequests(2)
  expect(reqs).toHaveLength(2)
  const msgs = reqs[1].messages
  expect(msgs.map((m: any) => m.role)).toEqual([...reqs[0].messages.map((m: any) => m.role), 'assistant', 'tool'])
  expect(msgs.at(-2).tool_calls.map((c: any) => c.id)).toEqual(['call_write_1'])
  expect(msgs.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_write_1', content: `wrote ${bytes} bytes to notes/plan.md` })
})
