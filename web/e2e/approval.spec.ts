// Approvals on the page (docs/design.md §10): the approval card for a write_file
// call of the model, approve, edit (an invalid value first, then a valid
// one), reject with a reason at 360 px with the keyboard alone; the receipt
// and the ToolResult the run recorded.
import { expect, openAndSend, test, toolMessages, type Scenario } from './harness'

const args = { path: 'notes/plan.md', content: '# Plan\n' }

// The scripted model calls write_file, then sums up the results. With a
// scripted model the built-in agent offers write_file, under approval.
function scenario(name: string): Scenario {
  return {
    name,
    turns: [{ text: '我来写计划。', toolCalls: [{ name: 'write_file', arguments: args }] }],
    final: '完成：{{results}}',
  }
}

test('approve: the card shows the call, the tool runs once after approve', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: scenario('approve') })
  const { sessionId, card } = await openAndSend(page, luban, '写个计划')
  await expect(card).toHaveAttribute('data-mode', 'approval')
  // The heading is worded in the page's language (the request's title is
  // the server's English "Run write_file?"), and the tool's description
  // shows once.
  await expect(card.getByRole('heading')).toHaveText('运行 write_file？')
  await expect(card).toHaveAttribute('aria-label', '运行 write_file？')
  // The card itself has the focus, not its "always allow" box, and its tool
  // line says it waits for the approval.
  await expect(card).toBeFocused()
  await expect(card.getByTestId('approval-remember')).not.toBeFocused()
  // The composer's hint names what waits: an approval, not a question.
  await expect(page.getByTestId('composer-hint')).toHaveText('请先批准或拒绝上面的工具调用')
  await expect(page.locator('[data-testid="tool-call"][data-tool="write_file"] [data-testid="tool-state"]')).toHaveText('等待批准')
  await expect(card.getByTestId('approval-tool')).toHaveText('write_file')
  // The built-in tool's bilingual description shows in the page language only.
  await expect(card.getByTestId('approval-description')).toHaveText('在工作区中写入文本文件。')
  await expect(card.getByText(/Writes a text file/)).toHaveCount(0)
  const argsView = card.getByTestId('approval-arguments')
  await expect(argsView.locator('.json-key').first()).toHaveText('"path"')
  await expect(argsView.locator('.json-string').first()).toHaveText('"notes/plan.md"')
  await lab.shot(card, 'approval-card')

  await card.getByTestId('approval-approve').click()
  await expect(card).toHaveAttribute('data-phase', 'resolved')
  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-decision', 'approve')
  await expect(receipt.getByTestId('receipt-status')).toHaveText('已批准')
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  const tm = await toolMessages(luban, sessionId, 'call_1_0_0')
  expect(tm.map((m) => m.content)).toEqual(['wrote 7 bytes to notes/plan.md'])
  await lab.shot(card, 'approval-receipt')
})

test('edit: an invalid value is refused before sending, a valid one runs', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: scenario('edit') })
  const { sessionId, card } = await openAndSend(page, luban, '写个计划')
  await card.getByTestId('approval-edit').click()
  const editor = card.getByTestId('approval-editor')
  await expect(editor).toBeFocused()
  await editor.fill('{"path": "", "content": 1}')
  await card.getByTestId('approval-send-edit').click()
  // The editor's own check words its problems like the server's, by code.
  await expect(card.getByTestId('field-error-arguments')).toContainText('太短了，至少 1 个字')
  await expect(card.getByTestId('field-error-arguments')).toContainText('类型不对，应为文字')
  await expect(card.getByTestId('field-error-arguments')).not.toContainText('minLength')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await lab.shot(card, 'approval-edit-invalid')

  // Valid under the schema but outside the workspace: the server's 422
  // (the tool's own rule) shows by the editor and the card stays open.
  const refused = page.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await editor.fill('{"path": "../escape.md", "content": "x"}')
  await card.getByTestId('approval-send-edit').click()
  const res = await refused
  expect(res.status()).toBe(422)
  expect((await res.json()).error.details).toEqual([
    { field: 'arguments.path', code: 'outside_workspace', params: { path: '../escape.md' }, message: '"../escape.md" leads outside the workspace' },
  ])
  // Worded by its code in the page language, by the editor.
  await expect(card.getByTestId('field-error-arguments')).toHaveText('“../escape.md”不在工作区内：请填写工作区内的相对路径')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await lab.shot(card, 'approval-edit-outside-workspace')

  await editor.fill('{"path": "docs/plan.md", "content": "# Plan v2\\n"}')
  await card.getByTestId('approval-send-edit').click()
  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-decision', 'edit')
  await expect(receipt.getByTestId('receipt-status')).toHaveText('已修改后批准')
  await expect(receipt.getByTestId('receipt-arguments')).toContainText('docs/plan.md')
  await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  const tm = await toolMessages(luban, sessionId, 'call_1_0_0')
  expect(tm).toHaveLength(1)
  expect(tm[0].content).toContain('The user changed the arguments of this write_file call')
  expect(tm[0].content).toContain('wrote 10 bytes to docs/plan.md')
})

test.describe('at 360 px', () => {
  test.use({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })

  test('reject with a reason, with the keyboard alone; nothing overflows', async ({ page, lab }) => {
    const luban = await lab.serve({ scenario: scenario('reject') })
    const { sessionId, card } = await openAndSend(page, luban, '写个计划')
    const box = await card.boundingBox()
    expect(box!.x + box!.width).toBeLessThanOrEqual(360)
    await card.getByTestId('approval-reject').focus()
    await page.keyboard.press('Enter')
    const reason = card.getByTestId('approval-reason')
    await expect(reason).toBeFocused()
    // Writing a reject: Approve, "always allow" and Edit are gone; the key
    // hint says Ctrl+Enter confirms the reject.
    await expect(card.getByTestId('approval-approve')).toHaveCount(0)
    await expect(card.getByTestId('approval-remember')).toHaveCount(0)
    await expect(card.getByTestId('approval-edit')).toHaveCount(0)
    await expect(card.getByTestId('key-hints')).toContainText('Ctrl+Enter 确认拒绝')
    await page.keyboard.type('先别写文件')
    await page.keyboard.press('Tab')
    await expect(card.getByTestId('approval-confirm-reject')).toBeFocused()
    await lab.shot(page, 'approval-reject-360')
    await page.keyboard.press('Enter')
    const receipt = card.getByTestId('receipt')
    await expect(receipt).toHaveAttribute('data-decision', 'reject')
    await expect(receipt.getByTestId('receipt-message')).toContainText('先别写文件')
    await expect(receipt.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
    // A deliberate rejection is not an error on the tool line.
    const line = page.locator('[data-testid="tool-call"][data-tool="write_file"]')
    await expect(line.getByTestId('tool-state')).toHaveText('已拒绝')
    await expect(line).not.toHaveClass(/tool-error/)
    const tm = await toolMessages(luban, sessionId, 'call_1_0_0')
    expect(tm).toHaveLength(1)
    expect(tm[0].isError).toBe(true)
    expect(tm[0].content).toContain('Their message: "先别写文件"')
  })
})
