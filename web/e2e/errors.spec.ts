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

test('free text over the bound: a counter near it, and the 413 names the limit by the field', async ({ page, lab }) => {
  const luban = await lab.serve({
    scenario: { name: 'text-limit', turns: [{ toolCalls: [askUser({ title: '写下说明', mode: 'text' })] }], final: '好的：{{results}}' },
  })
  await page.addInitScript(() => localStorage.setItem('luban.lang', 'zh'))
  const { card } = await openAndSend(page, luban, '长文本')
  const box = card.getByTestId('custom-input')
  await box.fill('短')
  await expect(card.getByTestId('text-counter')).toHaveCount(0)
  await box.fill('字'.repeat(7500))
  await expect(card.getByTestId('text-counter')).toHaveText('7,500 / 8,000 字')
  await box.fill('字'.repeat(9000))
  await expect(card.getByTestId('text-counter')).toHaveText('9,000 / 8,000 字，超出 1,000 字')
  await expect(card.getByTestId('text-counter')).toHaveAttribute('data-over', 'true')
  const refused = page.waitForResponse((r) => r.url().endsWith('/api/chat/continue'))
  await card.getByTestId('submit').click()
  const res = await refused
  expect(res.status()).toBe(413)
  const err = (await res.json()).error
  expect(err.code).toBe('payload_too_large')
  expect(err.details).toEqual([expect.objectContaining({ field: 'customInput', code: 'too_long', params: { max: 8000, got: 9000, unit: 'characters' } })])
  const shown = card.getByTestId('field-error-customInput')
  await expect(shown).toContainText('最多 8000')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await expect(box).toHaveValue('字'.repeat(9000))
  await lab.shot(card, 'text-too-long-zh')
  await page.getByTestId('lang-switch').click()
  await expect(shown).toContainText('at most 8000 characters')
})
