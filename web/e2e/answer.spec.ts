// Answering through the page (docs/design.md §A.6.4 rows 单选追问 and 多选 + 自定义输入,
// an AgentScope AskUser batch, and model text rendered as text): the card,
// the read-only receipt, and the exact ToolResult the model gets next.
import { askUser, expect, openAndSend, test, toolMessages } from './harness'

test('single choice through the OpenAI-compatible path: the next model request carries the answer', async ({ page, lab }) => {
  const args = {
    title: '请选择执行方式',
    description: '先分析还是直接动手？',
    mode: 'single',
    options: [
      { id: 'safe', label: '先分析', description: '只读，不改代码', recommended: true },
      { id: 'implement', label: '直接实现' },
    ],
    submitLabel: '就这样',
  }
  const fake = await lab.fakeOpenAI([
    { text: '我需要问一下。', toolCalls: [{ id: 'call_1', name: 'ask_user', arguments: JSON.stringify(args) }] },
    { text: '好的，**先分析**。' },
  ])
  const luban = await lab.serve({ model: 'openai:fake-model', env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-fake' } })

  const { sessionId, card } = await openAndSend(page, luban, '帮我改代码')
  await expect(page.getByTestId('model-name')).toHaveText(/fake-model/)
  await expect(card).toHaveAttribute('data-mode', 'single')
  await expect(card.getByRole('heading')).toHaveText('请选择执行方式')
  await expect(card.getByTestId('recommended-safe')).toBeVisible()
  await expect(card).toContainText('只读，不改代码')
  await expect(card.getByTestId('expires-at')).toBeVisible()
  await expect(card.getByTestId('submit')).toBeDisabled()
  await expect(card.getByTestId('hint')).toBeVisible()
  await expect(card.getByTestId('submit')).toHaveText('就这样')
  await lab.shot(card, 'card-single')

  const requestId = await card.getAttribute('data-request-id')
  await card.getByText('先分析', { exact: true }).click()
  await expect(card.getByTestId('option-safe')).toBeChecked()
  await card.getByTestId('submit').click()

  await expect(card).toHaveAttribute('data-phase', 'resolved')
  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-status', 'answered')
  await expect(receipt.getByTestId('receipt-status')).toHaveText('已提交')
  await expect(receipt.getByTestId('receipt-selections')).toContainText('先分析')
  await expect(receipt.getByTestId('receipt-time')).toBeVisible()
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await expect(page.getByTestId('message-assistant').last()).toContainText('好的，先分析。')
  await expect(page.getByTestId('message-assistant').last().locator('strong')).toHaveText('先分析')
  await expect(card.getByTestId('submit')).toHaveCount(0)
  await lab.shot(card, 'receipt-single')

  // The model's second request: the ToolResult of the original call, once.
  const reqs = await fake.waitRequests(2)
  expect(reqs).toHaveLength(2)
  expect(reqs[0].tools.map((t: any) => t.function.name)).toContain('ask_user')
  const msgs = reqs[1].messages
  const last = msgs[msgs.length - 1]
  expect(last.role).toBe('tool')
  expect(last.tool_call_id).toBe('call_1')
  expect(JSON.parse(last.content)).toMatchObject({ selections: ['safe'], customInput: '', cancelled: false })
  expect(msgs.filter((m: any) => m.role === 'tool')).toHaveLength(1)

  // The evidence docs/design.md §A.6.4 asks for: the lifecycle in the trace and audit.
  const tr = await luban.api('GET', `/api/sessions/${sessionId}/trace`)
  expect(tr.status).toBe(200)
  const actions = tr.body.audit.filter((a: any) => a.requestId === requestId).map((a: any) => a.action)
  expect(actions).toEqual(['requested', 'answered'])
})

test('multiple choice with custom input: ids and text reach the ToolResult unchanged', async ({ page, lab }) => {
  // Two lines: the 其他说明 box is a textarea, so the line break reaches the tool.
  const custom = '灰度发布 🚀，先放 10% 再看指标 👀\n“引号” <b>不是标签</b>'
  const luban = await lab.serve({
    scenario: {
      name: 'features',
      turns: [
        {
          text: '选几个功能。',
          toolCalls: [
            askUser({
              title: '启用哪些功能？',
              mode: 'multiple',
              allowCustom: true,
              options: [
                { id: 'logging', label: '日志' },
                { id: 'metrics', label: '指标 📈', recommended: true },
                { id: 'tracing', label: '链路追踪' },
              ],
            }),
          ],
        },
      ],
      final: '收到：\n{{results}}',
    },
  })
  const { sessionId, card } = await openAndSend(page, luban, '部署服务')
  await expect(card).toHaveAttribute('data-mode', 'multiple')
  await expect(card.getByTestId('option-logging')).toHaveAttribute('type', 'checkbox')
  await lab.shot(card, 'card-multiple')

  await card.getByTestId('option-metrics').check()
  await card.getByTestId('option-tracing').check()
  await card.getByTestId('option-logging').check()
  await card.getByTestId('option-logging').uncheck()
  await card.getByTestId('custom-input').fill(custom)
  await card.getByTestId('submit').click()

  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-status', 'answered')
  await expect(receipt.getByTestId('receipt-selections')).toContainText('指标 📈、链路追踪')
  await expect(receipt.getByTestId('receipt-selections')).not.toContainText('日志')
  expect(await receipt.getByTestId('receipt-custom').innerText()).toBe(custom)
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await expect(page.getByTestId('message-assistant').last()).toContainText('指标 📈 (metrics)')
  await lab.shot(card, 'receipt-multiple')

  const toolCallId = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last.toolCallId
  const results = await toolMessages(luban, sessionId, toolCallId)
  expect(results).toHaveLength(1)
  const content = JSON.parse(results[0].content)
  expect(content.selections).toEqual(['metrics', 'tracing'])
  expect(content.customInput).toBe(custom)
  expect(content.cancelled).toBe(false)
})

test('an AskUser batch: header chips, context, preview, Other, one answer per question', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'batch',
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
                    context: 'src/layout.ts 第 12 行\n  return <Grid/>',
                    multi_select: false,
                    options: [
                      { label: '网格 (Recommended)', description: '两列', preview: '┌──┬──┐\n│ A│ B│\n└──┴──┘' },
                      { label: '列表', description: '一列', preview: '<b>不是 HTML</b>\n- A\n- B' },
                    ],
                  },
                  {
                    question: '支持哪些平台？',
                    header: '平台',
                    multi_select: true,
                    options: [
                      { label: 'Linux', description: '服务器' },
                      { label: 'macOS', description: '桌面' },
                      { label: 'Windows', description: '桌面' },
                    ],
                  },
                ],
              },
            },
          ],
        },
      ],
      final: '结果：{{results}}',
    },
  })
  const { sessionId, card } = await openAndSend(page, luban, '设计界面')
  await expect(card).toHaveAttribute('data-mode', 'questions')
  // The heading says how many questions follow; each question's text shows
  // once, in its own group (the batch's title is its first question).
  await expect(card.getByRole('heading')).toHaveText('请回答以下 2 个问题')
  await expect(card.getByText('用哪种布局？', { exact: true })).toHaveCount(1)
  await expect(card.getByTestId('question-header-0')).toHaveText('布局')
  await expect(card.getByTestId('question-header-1')).toHaveText('平台')
  expect(await card.getByTestId('question-context-0').innerText()).toBe('src/layout.ts 第 12 行\n  return <Grid/>')
  await expect(card.getByText('网格 (Recommended)', { exact: true })).toBeVisible()
  await expect(card.getByTestId('q0-other')).toBeVisible()
  await expect(card.getByTestId('q1-other')).toBeVisible()
  await expect(card.getByTestId('q1-option-0')).toHaveAttribute('type', 'checkbox')
  await expect(card.getByTestId('submit')).toBeDisabled()

  await card.getByTestId('q0-option-1').focus()
  expect(await card.getByTestId('q0-preview').innerText()).toBe('<b>不是 HTML</b>\n- A\n- B')
  await expect(card.locator('b')).toHaveCount(0)
  await card.getByTestId('q0-option-1').check()
  await lab.shot(card, 'card-askuser')

  await card.getByTestId('q1-option-0').check()
  await card.getByTestId('q1-option-2').check()
  await card.getByTestId('q1-other-input').fill('FreeBSD ✨\n以及 OpenBSD')
  await expect(card.getByTestId('q1-other')).toBeChecked()
  await card.getByTestId('submit').click()

  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-status', 'answered')
  await expect(receipt.getByTestId('receipt-answer-0')).toContainText('用哪种布局？')
  // The batch's title is its first question: the receipt names it once.
  await expect(receipt.getByTestId('receipt-title')).toHaveCount(0)
  await expect(receipt.getByText('用哪种布局？', { exact: true })).toHaveCount(1)
  await expect(receipt.getByTestId('receipt-answer-0')).toContainText('列表')
  await expect(receipt.getByTestId('receipt-answer-1')).toContainText('Linux、Windows')
  await expect(receipt.getByTestId('receipt-answer-1')).toContainText('FreeBSD ✨')
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  await lab.shot(card, 'receipt-askuser')

  const toolCallId = (await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.last.toolCallId
  const results = await toolMessages(luban, sessionId, toolCallId)
  expect(results).toHaveLength(1)
  expect(results[0].content).toContain('FreeBSD ✨')
  expect(results[0].content).toContain('以及 OpenBSD')
  expect(results[0].metadata?.answers).toEqual([
    { question: '用哪种布局？', selected: ['列表'], other: '' },
    { question: '支持哪些平台？', selected: ['Linux', 'Windows'], other: 'FreeBSD ✨\n以及 OpenBSD' },
  ])
})

test('model text with HTML renders as text: no element, no script; bidi controls show as markers', async ({ page, lab }) => {
  const evil = '<img src=x onerror=alert(1)>'
  const luban = await lab.serve({
    scenario: {
      name: 'xss',
      turns: [
        {
          text: `看这里 ${evil} 和 <script>alert(2)</script>`,
          toolCalls: [
            askUser({
              title: `标题 ${evil}`,
              description: `说明 ${evil}`,
              mode: 'single',
              options: [
                { id: 'a', label: evil, description: `<a href="javascript:alert(3)">点我</a>` },
                { id: 'b', label: '正常' },
                { id: 'c', label: 'gnp\u202E.exe' },
              ],
              submitLabel: `<b>提交</b>`,
            }),
          ],
        },
      ],
      // Text starting with a tag is an HTML block to Markdown: it must stay.
      final: `<script>x</script> **结束** ${evil}`,
    },
  })
  const dialogs: string[] = []
  page.on('dialog', async (d) => {
    dialogs.push(d.message())
    await d.dismiss()
  })
  const { card } = await openAndSend(page, luban, '试试')
  await expect(card.getByText(evil, { exact: true })).toBeVisible()
  await expect(card.getByRole('heading')).toHaveText(`标题 ${evil}`)
  await expect(card.getByTestId('submit')).toHaveText('<b>提交</b>')
  await expect(page.getByTestId('message-assistant').first()).toContainText(`看这里 ${evil} 和 <script>alert(2)</script>`)
  await expect(card.getByText('gnp⟨U+202E⟩.exe', { exact: true })).toBeVisible()
  expect(await card.innerText()).not.toContain('\u202E')
  await lab.shot(card, 'card-html-label')

  await card.getByTestId('option-a').check()
  await card.getByTestId('submit').click()
  const receipt = card.getByTestId('receipt')
  await expect(receipt.getByTestId('receipt-selections')).toContainText(evil)
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  const last = page.getByTestId('message-assistant').last()
  await expect(last.locator('.markdown')).toHaveText(`<script>x</script> 结束 ${evil}`)
  await expect(last.locator('strong')).toHaveText('结束')
  await lab.shot(card, 'receipt-html-label')

  await expect(page.locator('img')).toHaveCount(0)
  await expect(page.locator('main script, main b, main a[href^="javascript"]')).toHaveCount(0)
  expect(dialogs).toEqual([])
})

test('a 422 keeps the card editable with the server message by its field; the fixed answer goes through', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'directory',
      turns: [{ toolCalls: [askUser({ title: '输出到哪个目录？', mode: 'directory' })] }],
      final: '好的：{{results}}',
    },
  })
  const { sessionId, card } = await openAndSend(page, luban, '生成文件')
  await expect(card.getByTestId('directory-hint')).toBeVisible()
  await card.getByTestId('custom-input').fill('../../etc')
  const refused = page.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await card.getByTestId('submit').click()
  const res = await refused
  expect(res.status()).toBe(422)
  expect((await res.json()).error.code).toBe('invalid_answer')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await expect(card.getByTestId('field-error-customInput')).toBeVisible()
  await expect(card.getByTestId('custom-input')).toHaveValue('../../etc') // what was typed is kept
  await lab.shot(card, 'card-422')
  expect((await luban.api('GET', `/api/interactions/pending?sessionId=${sessionId}`)).body.pending).not.toBeNull()

  await card.getByTestId('custom-input').fill('out/reports')
  await card.getByTestId('submit').click()
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await expect(card.getByTestId('receipt-custom')).toHaveText('out/reports')
  await expect(card.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
})

test('a number question with bounds: the field says them, the page refuses an answer beyond them without sending it, and the server still checks', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: { name: 'replicas', turns: [{ text: '要几个副本？', toolCalls: [askUser({ title: '副本数', mode: 'number', integer: true, minimum: 1, maximum: 9 })] }], final: '好' },
  })
  const { sessionId, card } = await openAndSend(page, luban, '扩容')
  const requestId = (await card.getAttribute('data-request-id'))!
  const input = card.getByTestId('custom-input')
  await expect(input).toHaveAttribute('min', '1')
  await expect(input).toHaveAttribute('max', '9')
  await expect(input).toHaveAttribute('step', '1')
  await expect(input).toHaveAttribute('inputmode', 'numeric')
  await expect(card.getByTestId('number-hint')).toHaveText('1 到 9 之间的整数')

  // The server's own words for 12, from its 422.
  const refused = await luban.api('POST', '/api/chat/continue', { sessionId, requestId, selections: [], customInput: '12', cancelled: false })
  expect(refused.status).toBe(422)
  expect(refused.body.error.code).toBe('invalid_answer')
  expect(refused.body.error.details).toMatchObject([{ field: 'customInput', code: 'out_of_range', params: { max: 9 } }])

  const sent: string[] = []
  page.on('request', (r) => r.url().endsWith('/api/chat/continue') && sent.push(r.postData() ?? ''))
  await input.fill('12')
  await card.getByTestId('submit').click()
  const err = card.getByTestId('field-error-customInput')
  await expect(err).toHaveText('不能大于 9')
  await expect(err.locator('[data-code]')).toHaveAttribute('data-code', 'out_of_range')
  await expect(input).toBeFocused()
  await expect(input).toHaveAttribute('aria-invalid', 'true')
  await input.fill('2.5')
  await expect(err).toHaveText('类型不对，应为整数')
  await lab.shot(card, 'number-bounds')
  expect(sent).toEqual([])
  await expect(card).toHaveAttribute('data-phase', 'editing')

  await input.fill('3')
  await expect(err).toHaveCount(0)
  await card.getByTestId('submit').click()
  await expect(card).toHaveAttribute('data-phase', 'resolved')
  expect(sent).toHaveLength(1)
  const [result] = await toolMessages(luban, sessionId, (await luban.api('GET', `/api/sessions/${sessionId}`)).body.interactions[0].request.toolCallId)
  expect(JSON.parse(result.content)).toMatchObject({ customInput: '3', cancelled: false })
})
