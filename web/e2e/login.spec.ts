// Signing in and model text (docs/design.md §18 "Signing in with a token
// URL", "Model text makes no requests"): a token URL does not switch a
// signed-in browser to another principal without the user's confirmation,
// and assistant text with a Markdown image pointing at that URL makes the
// page request nothing.
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { askUser, expect, openAndSend, OTHER_TOKEN, test } from './harness'

/** otherSite serves one page with a link to href from another port of this host. */
async function otherSite(href: string): Promise<{ url: string; close: () => void }> {
  const srv = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' })
    res.end(`<!doctype html><a id="go" href="${href}">free prize</a>`)
  })
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/`, close: () => srv.close() }
}

test('a Markdown image in model text makes no request', async ({ page, lab }) => {
  const evil = `看图 ![x](/?token=${OTHER_TOKEN}) 和 ![y](/api/sessions)`
  const luban = await lab.serve({ scenario: { name: 'image', turns: [], final: evil } })
  const seen: string[] = []
  page.on('request', (r) => seen.push(r.url()))
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('model-name')).toBeVisible()
  seen.length = 0
  await page.getByTestId('composer').fill('画一张图')
  await page.getByTestId('composer').press('Enter')
  const reply = page.getByTestId('message-assistant').last()
  await expect(reply).toContainText('🖼 x')
  await expect(reply.locator('img')).toHaveCount(0)
  await expect(reply.locator('a.md-image').first()).toHaveAttribute('href', `/?token=${OTHER_TOKEN}`)
  await lab.shot(reply, 'image-as-link')
  expect(seen.filter((u) => u.includes('token='))).toEqual([])
  // The CSP stops an image of this origin even if one got into the page:
  // Chromium reports the attempt, but it never reaches the server.
  const answered: string[] = []
  page.on('response', (r) => answered.push(r.url()))
  const blocked = await page.evaluate(
    (u) =>
      new Promise<string>((resolve) => {
        document.addEventListener('securitypolicyviolation', (e) => resolve(e.violatedDirective), { once: true })
        const img = document.createElement('img')
        img.src = u
        document.body.appendChild(img)
      }),
    `/?token=${OTHER_TOKEN}&via=injected`,
  )
  expect(blocked).toBe('img-src')
  expect(answered.filter((u) => u.includes('token='))).toEqual([])
  // Still the same principal: its session is listed.
  await page.reload()
  await expect(page.getByTestId('session-list').locator('button.session')).toHaveCount(1)
})

test('a token URL does not switch a signed-in browser without confirmation', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'login', turns: [], final: '好' } })
  await page.goto(luban.pageURL())
  await page.getByTestId('composer').fill('我的会话')
  await page.getByTestId('composer').press('Enter')
  await expect(page.getByTestId('message-assistant')).toContainText('好')
  const sessions = page.getByTestId('session-list').locator('button.session')
  await expect(sessions).toHaveCount(1)

  // Another principal's link: a confirmation page, and nothing changed.
  await page.goto(luban.pageURL(OTHER_TOKEN))
  const confirm = page.getByTestId('login-confirm')
  await expect(confirm).toBeVisible()
  await expect(page.getByTestId('login-from')).toHaveText(/^p_[0-9a-f]{16}$/)
  await expect(page.getByTestId('login-to')).toHaveText(/^p_[0-9a-f]{16}$/)
  await lab.shot(page, 'confirm')
  await page.getByTestId('login-keep').click()
  await expect(page).toHaveURL(`${luban.url}/`)
  await expect(sessions).toHaveCount(1)

  // The user's own confirmation switches: the other principal has no session.
  await page.goto(luban.pageURL(OTHER_TOKEN))
  await page.getByTestId('login-switch').click()
  await expect(page).toHaveURL(`${luban.url}/`)
  await expect(page.getByTestId('model-name')).toBeVisible()
  await expect(page.getByTestId('welcome')).toBeVisible()
  await expect(sessions).toHaveCount(0)
  const own = await luban.api('GET', '/api/sessions')
  expect(own.body.sessions).toHaveLength(1)
})

test('a token link on another site signs nobody in by itself', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'login', turns: [], final: '好' } })
  await page.goto(luban.pageURL())
  await page.getByTestId('composer').fill('我的会话')
  await page.getByTestId('composer').press('Enter')
  await expect(page.getByTestId('message-assistant')).toContainText('好')
  const sessions = page.getByTestId('session-list').locator('button.session')
  await expect(sessions).toHaveCount(1)

  const evil = await otherSite(luban.pageURL(OTHER_TOKEN))
  try {
    await page.goto(evil.url)
    await page.locator('#go').click()
    // The Strict cookie was not sent: a page whose only way on is a link.
    await expect(page.getByTestId('login-continue-page')).toBeVisible()
    await lab.shot(page, 'from-another-site')
    await page.goto(`${luban.url}/`)
    await expect(sessions).toHaveCount(1)

    // Following it from this origin shows who is signed in: the confirmation.
    await page.goto(evil.url)
    await page.locator('#go').click()
    await page.getByTestId('login-continue').click()
    await expect(page.getByTestId('login-confirm')).toBeVisible()
    await expect(page.getByTestId('login-from')).toHaveText(/^p_[0-9a-f]{16}$/)
    await page.getByTestId('login-keep').click()
    await expect(sessions).toHaveCount(1)
  } finally {
    evil.close()
  }
})

test('reopening the printed URL after answering a question: the token leaves the address, the sessions are listed beside the welcome, the waiting question is named', async ({ page, browser, lab }) => {
  const luban = await lab.serve({
    scenario: {
      name: 'reopen-url',
      turns: [
        { text: '先问副本数。', toolCalls: [askUser({ title: '副本数', mode: 'number', integer: true, minimum: 1 })] },
        { text: '再问环境。', toolCalls: [askUser({ title: '部署到哪里？', mode: 'single', options: [{ id: 'dev', label: '开发' }, { id: 'prod', label: '生产' }] })] },
      ],
      final: '好',
    },
  })
  const { sessionId, card } = await openAndSend(page, luban, '扩容到三个副本')
  await card.getByTestId('custom-input').fill('3')
  await card.getByTestId('submit').click()
  await expect(card).toHaveAttribute('data-phase', 'resolved')
  await expect(page.locator('[data-testid="input-card"][data-phase="editing"]')).toHaveCount(1)

  // The same browser, and a browser that has never signed in, open the URL luban serve printed.
  const fresh = await browser.newContext()
  try {
    for (const p of [page, await fresh.newPage()]) {
      await p.goto(luban.pageURL())
      await expect(p).toHaveURL(`${luban.url}/`)
      expect(await p.evaluate(() => window.location.href)).not.toContain('token')
      await expect(p.getByTestId('welcome')).toBeVisible()
      const waiting = p.getByTestId('welcome-waiting')
      await expect(waiting).toContainText('有 1 个问题在等你回答')
      await expect(waiting).toContainText('扩容到三个副本')
      const list = p.getByTestId('session-list')
      await expect(p.getByTestId('sessions-toggle')).toHaveAttribute('aria-expanded', 'true')
      await expect(list.getByTestId(`session-${sessionId}`)).toBeVisible()
      await expect(list.getByTestId(`session-title-${sessionId}`)).toHaveText('扩容到三个副本')
      await expect(list.getByTestId(`session-status-${sessionId}`)).toHaveAttribute('data-status', 'waiting_input')
    }
    await lab.shot(page, 'reopened-url')
    await page.getByTestId(`session-${sessionId}`).click()
    await expect(page).toHaveURL(new RegExp(`/s/${sessionId}$`))
    await expect(page.getByTestId('receipt')).toContainText('3')
    await expect(page.locator('[data-testid="input-card"][data-phase="editing"]')).toHaveCount(1)
  } finally {
    await fresh.close()
  }
})
