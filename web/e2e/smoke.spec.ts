// Smoke: the page served by `luban serve` signs in through the token URL,
// names the scripted model in its header, and refuses a browser without it.
import { expect, test } from './harness'

test('the page loads, signs in and names the model', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'smoke', turns: [], final: '你好' } })
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  await page.goto(luban.pageURL())
  await expect(page).toHaveURL(`${luban.url}/`) // the token left the address bar
  await expect(page.getByTestId('model-name')).toHaveText(/scripted:smoke/)
  await expect(page.getByTestId('unauthorized')).toHaveCount(0)
  await expect(page.getByTestId('composer')).toBeVisible()
  // A fresh page says what luban does; a scenario other than the built-in
  // demo plays only its own turns, so it gets no demo line.
  await expect(page.getByTestId('welcome')).toContainText('问题卡片')
  await expect(page.getByTestId('welcome')).toContainText('在下方输入消息开始')
  await expect(page.getByTestId('welcome-demo')).toHaveCount(0)
  await lab.shot(page, 'page')
  expect(errors).toEqual([])
})

test('the built-in demo (--model scripted) promises every question type', async ({ page, lab }) => {
  const luban = await lab.serve({ model: 'scripted' })
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('model-name')).toHaveText(/scripted:demo/)
  await expect(page.getByTestId('welcome-demo')).toContainText('scripted:demo')
  await expect(page.getByTestId('welcome-demo')).toContainText('发送任意消息开始演示')
  // The demo ends with two write_file calls of one reply under approval (docs/design.md §10, §17 "Batch"), and says so.
  // Before it, an MCP server's form (the demo server luban starts, docs/design.md §11).
  await expect(page.getByTestId('welcome-demo')).toContainText('一个 MCP 服务器的表单')
  await expect(page.getByTestId('welcome-demo')).toContainText('批准两次写文件（luban-demo/deploy-plan.md 和 luban-demo/checklist.md），可以用“全部批准”一次批准')
  await expect(page.getByTestId('welcome')).toContainText('批准、修改参数或拒绝')
  await lab.shot(page, 'welcome-demo')
})

test('without the token the page says how to sign in', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'smoke', turns: [], final: '你好' } })
  await page.goto(`${luban.url}/`)
  await expect(page.getByTestId('unauthorized')).toBeVisible()
  await expect(page.getByTestId('model-name')).toHaveCount(0)
})
