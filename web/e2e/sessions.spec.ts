// Sessions in the sidebar at 360 px: search by title, rename inline (PATCH,
// Esc cancels), delete after a confirmation; a session whose run waits for an
// answer asks again and is deleted with ?force=true (its run stops); axe in
// the search, rename and confirmation states.
import { expectNoSeriousViolations } from './axe'
import { askUser, expect, openAndSend, test } from './harness'

test.use({ viewport: { width: 360, height: 740 } })

test('search, rename and delete sessions, force-deleting one whose question waits', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'sessions',
      turns: [{ text: '问一下', toolCalls: [askUser({ title: '继续吗？', mode: 'single', options: [{ id: 'y', label: '是' }, { id: 'n', label: '否' }] })] }],
    },
  })
  // alpha waits for an answer; beta's question is cancelled, so its run ended.
  const alpha = await openAndSend(page, luban, 'alpha 部署任务')
  await page.getByTestId('new-session').click()
  await page.getByTestId('composer').fill('beta 报告任务')
  await page.getByTestId('composer').press('Enter')
  const betaCard = page.locator('[data-testid="input-card"][data-phase="editing"]')
  await expect(betaCard).toBeVisible()
  const beta = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  expect(beta).not.toBe(alpha.sessionId)
  await betaCard.getByTestId('cancel').click()
  await betaCard.getByTestId('cancel-yes').click()
  await expect(page.getByTestId('receipt')).toHaveAttribute('data-status', 'cancelled')
  await expect.poll(async () => (await luban.api('GET', `/api/sessions/${beta}`)).body.session.status).toBe('cancelled')
  const list = page.getByTestId('session-list')
  // At 360 px the list is a drawer, closed by default.
  await page.getByTestId('sessions-toggle').click()
  await expect(list.getByTestId(`session-${alpha.sessionId}`)).toBeVisible()
  await expect(list.getByTestId(`session-${beta}`)).toBeVisible()

  // Search by title, any case, every word.
  const search = page.getByTestId('session-search')
  await search.fill('BETA 报告')
  await expect(list.getByTestId(`session-${beta}`)).toBeVisible()
  await expect(list.getByTestId(`session-${alpha.sessionId}`)).toHaveCount(0)
  await search.fill('nothing-like-this')
  await expect(page.getByTestId('no-match')).toBeVisible()
  await expectNoSeriousViolations(page, 'a search without a match')
  await search.fill('')
  await expect(list.getByTestId(`session-${alpha.sessionId}`)).toBeVisible()

  // Rename: Esc cancels, Enter saves through PATCH.
  await page.getByTestId(`rename-${beta}`).click()
  const input = page.getByTestId('rename-input')
  await expect(input).toBeFocused()
  await input.fill('不要这个')
  await input.press('Escape')
  await expect(list.getByTestId(`session-${beta}`)).toContainText('beta 报告任务')
  await expect(list.getByTestId(`session-${beta}`), 'focus goes back to the session').toBeFocused()
  await page.getByTestId(`rename-${beta}`).click()
  await expectNoSeriousViolations(page, 'renaming a session')
  await page.getByTestId('rename-input').fill('  季度 <b>报告</b>  ')
  await page.getByTestId('rename-input').press('Enter')
  await expect(list.getByTestId(`session-${beta}`)).toContainText('季度 <b>报告</b>')
  await expect(list.getByTestId(`session-${beta}`)).toBeFocused()
  await expect(list.locator('b')).toHaveCount(0)
  const listed = await luban.api('GET', '/api/sessions')
  expect(listed.body.sessions.find((s: any) => s.id === beta).title).toBe('季度 <b>报告</b>')
  await search.fill('季度')
  await expect(list.getByTestId(`session-${beta}`)).toBeVisible()
  await search.fill('')
  await lab.shot(page, 'sessions-renamed')

  // Delete the open session whose question waits: asked once, worded as a
  // waiting question, the focus on Cancel; confirmed, it is forced.
  await page.getByTestId(`session-${alpha.sessionId}`).click()
  await expect(page.getByTestId('chat')).toHaveAttribute('data-session-id', alpha.sessionId)
  // Picking a session on a phone closes the drawer; open it again.
  await expect(page.getByTestId('sessions-toggle')).toHaveAttribute('aria-expanded', 'false')
  await page.getByTestId('sessions-toggle').click()
  await page.getByTestId(`delete-${alpha.sessionId}`).click()
  await expect(page.getByTestId('delete-confirm')).toContainText('有问题在等待回答')
  await expect(page.getByTestId('delete-confirm')).not.toContainText('任务仍在运行')
  await expect(page.getByTestId('delete-no')).toBeFocused()
  await expectNoSeriousViolations(page, 'confirming a forced delete')
  await lab.shot(page, 'delete-running')
  expect((await luban.api('GET', `/api/sessions/${alpha.sessionId}`)).status, 'the refused delete changed nothing').toBe(200)
  await page.getByTestId('delete-force').click()
  await expect(list.getByTestId(`session-${alpha.sessionId}`)).toHaveCount(0)
  await expect(page.getByTestId('session-search'), 'focus goes to the search box').toBeFocused()
  expect((await luban.api('GET', `/api/sessions/${alpha.sessionId}`)).status).toBe(404)
  await expect(page.getByTestId('chat')).toHaveAttribute('data-session-id', '')
  await expect(page).toHaveURL(/\/$/)

  // Delete the ended one: one confirmation; "cancel" first keeps it.
  await page.getByTestId(`delete-${beta}`).click()
  await page.getByTestId('delete-no').click()
  await expect(list.getByTestId(`session-${beta}`)).toBeVisible()
  await page.getByTestId(`delete-${beta}`).click()
  await expect(page.getByTestId('delete-no')).toBeFocused()
  await page.keyboard.press('Escape')
  await expect(page.getByTestId('delete-confirm')).toHaveCount(0)
  await page.getByTestId(`delete-${beta}`).click()
  await page.getByTestId('delete-yes').click()
  await expect(list.getByTestId(`session-${beta}`)).toHaveCount(0)
  expect((await luban.api('GET', `/api/sessions/${beta}`)).status).toBe(404)
  await expect(list.getByText('还没有会话')).toBeVisible()
})
