// Assistant Markdown in Chromium: GFM tables (no raw pipes; in their own
// keyboard-focusable box at 360 px, the page never scrolls sideways), task lists,
// strikethrough, code blocks highlighted by a chunk that is loaded only once
// a code block is shown, a copy button that puts the exact code on the
// clipboard, links that open in a new tab without opener or referrer, and
// unsafe link targets left as text.
import { expect, test } from './harness'

test.use({ viewport: { width: 360, height: 740 }, permissions: ['clipboard-read', 'clipboard-write'] })

const code = 'package main\n\nfunc main() {\n\tfmt.Println("<b>你好</b>")\n}'
const text = [
  '结果如下：',
  '',
  '| 服务 | 副本 | 说明 |',
  '|:--|--:|:--|',
  '| api | 3 | 一个非常非常长的说明文字，让表格比手机屏幕更宽：/var/lib/luban/workspaces/project/src |',
  '| worker | 1 | `queue` |',
  '',
  '- [x] 构建',
  '- [ ] 发布',
  '',
  '~~旧方案~~ 新方案见 [文档](https://example.com/docs) 或 [坏链接](javascript:alert(1))。',
  '',
  '```go',
  code,
  '```',
].join('\n')

test('GFM table, task list, strikethrough, lazy highlighting, copy, safe links at 360 px', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'md', turns: [{ text }] } })
  const chunks: string[] = []
  page.on('request', (r) => {
    if (r.url().includes('/assets/')) chunks.push(new URL(r.url()).pathname)
  })
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('welcome')).toBeVisible()
  expect(chunks.some((c) => c.includes('highlight-')), 'no highlighter before a code block').toBe(false)

  await page.getByTestId('composer').fill('表格')
  await page.getByTestId('composer').press('Enter')
  const msg = page.getByTestId('message-assistant').last()
  const table = msg.locator('table')
  await expect(table).toBeVisible()
  await expect(table.locator('th')).toHaveText(['服务', '副本', '说明'])
  await expect(table.locator('tbody tr').first().locator('td').nth(1)).toHaveText('3')
  await expect(table.locator('tbody tr').first().locator('td').nth(1)).toHaveCSS('text-align', 'right')
  expect(await msg.innerText()).not.toContain('|')
  await expect(msg.locator('li input[type="checkbox"]')).toHaveCount(2)
  await expect(msg.locator('li input[type="checkbox"]').first()).toBeChecked()
  await expect(msg.locator('del')).toHaveText('旧方案')

  // The long cell wraps; whatever is still wider scrolls inside the table's
  // own box: the box fits the screen and the page does not scroll sideways.
  const wrap = msg.locator('.table-wrap')
  const box = (await wrap.boundingBox())!
  expect(box.x).toBeGreaterThanOrEqual(0)
  expect(box.x + box.width).toBeLessThanOrEqual(360)
  const page2 = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth }))
  expect(page2.scroll).toBeLessThanOrEqual(page2.client)
  await wrap.focus()
  await expect(wrap).toBeFocused()

  // Links: http(s) opens in a new tab without opener/referrer; javascript: is text.
  const link = msg.getByRole('link', { name: '文档' })
  await expect(link).toHaveAttribute('href', 'https://example.com/docs')
  await expect(link).toHaveAttribute('target', '_blank')
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer')
  await expect(msg.getByRole('link', { name: '坏链接' })).toHaveCount(0)
  await expect(msg.getByText('坏链接')).toBeVisible()

  // The code block: text at once, highlighted after the lazy chunk, copyable.
  const block = msg.getByTestId('code-block')
  await expect(block).toHaveAttribute('data-lang', 'go')
  await expect(block.locator('code')).toHaveAttribute('data-highlighted', 'true')
  await expect(block.locator('.hljs-keyword').first()).toHaveText('package')
  expect(await block.locator('code').textContent()).toBe(code)
  expect(await block.locator('b').count()).toBe(0)
  expect(chunks.some((c) => c.includes('highlight-')), 'the highlighter loaded for the code block').toBe(true)
  await lab.shot(msg, 'gfm-table-code')

  await block.getByTestId('copy-code').click()
  await expect(block.getByTestId('copy-code')).toHaveText('已复制')
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(code)
})
