// A session deleted in one tab: the other tab following it is told at once.
// DELETE ends the session's open event streams; the page's reconnect is
// refused with 404 session_not_found and the transcript says the session
// is gone.
import { askUser, expect, openAndSend, test } from './harness'

test('a session deleted in one tab shows as gone in the other', async ({ browser, page, lab }) => {
  const luban = await lab.serve({
    scenario: { name: 'deleted', turns: [{ text: '问一下', toolCalls: [askUser({ title: '继续吗？', mode: 'single', options: [{ id: 'y', label: '是' }, { id: 'n', label: '否' }] })] }] },
  })
  const { sessionId, card } = await openAndSend(page, luban, '要删除的任务')
  const requestId = (await card.getAttribute('data-request-id'))!

  const other = await browser.newContext({ locale: 'zh-CN' })
  const pageB = await other.newPage()
  await pageB.goto(luban.pageURL())
  await pageB.goto(`${luban.url}/s/${encodeURIComponent(sessionId)}`)
  const cardB = pageB.locator(`[data-testid="input-card"][data-request-id="${requestId}"]`)
  await expect(cardB).toHaveAttribute('data-phase', 'editing')

  // Deleted in A (its question waits: asked once, forced).
  await page.getByTestId(`delete-${sessionId}`).click()
  await page.getByTestId('delete-force').click()
  await expect(page.getByTestId('session-list').getByTestId(`session-${sessionId}`)).toHaveCount(0)
  expect((await luban.api('GET', `/api/sessions/${sessionId}`)).status).toBe(404)

  // B, without a reload: the session is gone, said in the transcript.
  const gone = pageB.locator('[data-testid="notice"][data-code="session_not_found"]')
  await expect(gone).toBeVisible()
  await lab.shot(pageB, 'deleted-in-another-tab')

  // Opened afresh at its URL: said neutrally, no raw id as a title, nothing
  // can be typed into it, and a new session is one click away.
  await pageB.reload()
  await expect(gone).toHaveText(/这个会话不存在或已被删除/)
  await expect(pageB.getByTestId('chat')).not.toContainText(sessionId)
  await expect(pageB.getByTestId('composer')).toBeDisabled()
  await gone.getByTestId('gone-new-session').click()
  await expect.poll(() => new URL(pageB.url()).pathname).toBe('/')
  await expect(pageB.getByTestId('composer')).toBeEnabled()
  await other.close()
})
