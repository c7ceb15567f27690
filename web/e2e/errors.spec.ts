// The page words a rejected answer itself (issue 18): each 422 detail's
// stable code and params become a sentence in the page language, shown by
// the control its field path names; the server's English message is only
// the fallback. The same card switches from Chinese to English.
import { askUser, expect, openAndSend, test } from './harness'

test('a rejected answer shows the Chinese sentence in zh and the English one in en, by its field', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: { name: 'directory', turns: [{ toolCalls: [askUser({ title: '输出到哪个目录？', mode: 'directory' })] }], final: '好的：{{results}}' },
  })
  await page.addInitScript(() => localStorage.setItem('luban.lang', 'zh'))
  const { card } = await openAndSend(page, luban, '生成文件')
  await card.getByTestId('custom-input').fill('../../etc')
  const refused = page.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await card.getByTestId('submit').click()
  const res = await refused
  expect(res.status()).toBe(422)
  const details = (await res.json()).error.details
  expect(details).toEqual([expect.objectContaining({ field: 'customInput', code: 'outside_workspace', params: { path: '../../etc' } })])

  const shown = card.getByTestId('field-error-customInput')
  await expect(shown.locator('li')).toHaveText('“../../etc”不在工作区内：请填写工作区内的相对路径')
  await expect(shown.locator('li')).toHaveAttribute('data-code', 'outside_workspace')
  await expect(shown).not.toContainText(details[0].message)
  // The control it names is marked, points at it and gets the focus.
  await expect(card.getByTestId('custom-input')).toHaveAttribute('aria-invalid', 'true')
  await expect(card.getByTestId('custom-input')).toBeFocused()
  const describedBy = (await card.getByTestId('custom-input').getAttribute('aria-describedby'))!.split(' ')
  expect(describedBy).toContain(await shown.getAttribute('id'))
  await lab.shot(card, 'rejected-zh')

  await page.getByTestId('lang-switch').click()
  await expect(shown.locator('li')).toHaveText('"../../etc" is outside the workspace: enter a path relative to it')
  await lab.shot(card, 'rejected-en')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await expect(card.getByTestId('custom-input')).toHaveValue('../../etc')
})
