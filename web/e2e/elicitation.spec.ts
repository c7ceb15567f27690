// MCP on the page (docs/design.md §11), at 360 px with the keyboard: the form and
// url cards of server-everything's real elicitations (luban as an MCP
// client, the server started by luban over stdio), and the /q/{requestId}
// page an MCP host's URL-mode request points at (luban as an MCP server).
import path from 'node:path'
import { expect, openAndSend, OTHER_TOKEN, test, TOKEN, type Luban, type Scenario } from './harness'
import { everythingConfig } from './paths'


const config = everythingConfig

const scenario: Scenario = {
  name: 'elicitations',
  turns: [
    { text: '先填表。', toolCalls: [{ name: 'everything__trigger-elicitation-request', arguments: {} }] },
    {
      text: '再登录。',
      toolCalls: [{ name: 'everything__trigger-url-elicitation', arguments: { url: 'https://auth.example.com:8443/authorize?client=luban', message: 'Sign in to continue' } }],
    },
  ],
  final: '完成：{{results}}',
}

test.use({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })

test('form and url cards: checked before sending, answered with the keyboard; the URL opens only on a click', async ({ page, lab, context }) => {
  const luban = await lab.serve({ scenario, config })
  const { sessionId, card } = await openAndSend(page, luban, '试试 MCP')
  await expect(card).toHaveAttribute('data-mode', 'form')
  await expect(card.getByTestId('elicitation-server')).toContainText('everything')
  const box = await card.boundingBox()
  expect(box!.x + box!.width).toBeLessThanOrEqual(360)
  // Every field type of server-everything's form, with defaults.
  for (const [name, type] of [['name', 'string'], ['check', 'boolean'], ['birthdate', 'date'], ['integer', 'integer'], ['number', 'number'], ['titledSingleSelectEnum', 'enum'], ['titledMultipleSelectEnum', 'multi']])
    await expect(card.getByTestId(`form-field-${name}`)).toHaveAttribute('data-type', type)
  await expect(card.getByTestId('required-name')).toBeVisible()
  await expect(card.getByTestId('field-integer')).toHaveValue('42')
  await expect(card.getByTestId('bounds-integer')).toHaveText('1–100')
  await lab.shot(card, 'elicitation-form-360')

  // Submit at once: the required name is missing; nothing is sent, the
  // field gets focus and says why.
  await card.getByTestId('submit').focus()
  await page.keyboard.press('Enter')
  await expect(card.getByTestId('field-error-content.name')).toBeVisible()
  await expect(card.getByTestId('field-name')).toBeFocused()
  await page.keyboard.type('Ada Lovelace')
  await card.getByTestId('field-integer').focus()
  await page.keyboard.press('Control+A')
  await page.keyboard.type('500')
  await page.keyboard.press('Enter')
  await expect(card.getByTestId('field-error-content.integer')).toBeVisible()
  await expect(card.getByTestId('field-integer')).toBeFocused()
  await page.keyboard.press('Control+A')
  await page.keyboard.type('7')
  await card.getByTestId('field-check').focus()
  await page.keyboard.press('Space')
  await lab.shot(card, 'elicitation-form-errors-360')
  await page.keyboard.press('Enter')
  const receipt = card.getByTestId('receipt')
  await expect(receipt).toHaveAttribute('data-decision', 'accept')
  await expect(receipt.getByTestId('receipt-field-name')).toContainText('Ada Lovelace')
  await expect(receipt.getByTestId('receipt-field-integer')).toContainText('7')
  await lab.shot(card, 'elicitation-form-receipt-360')

  // The url card.
  const open = page.locator('[data-testid="input-card"][data-mode="url"][data-phase="editing"]')
  await expect(open).toBeVisible()
  const url = page.locator(`[data-testid="input-card"][data-request-id="${await open.getAttribute('data-request-id')}"]`)
  await expect(url.getByTestId('url-full')).toHaveText('https://auth.example.com:8443/authorize?client=luban')
  await expect(url.getByTestId('url-host')).toHaveText('auth.example.com:8443')
  const link = url.getByTestId('url-open')
  await expect(link).toHaveAttribute('href', 'https://auth.example.com:8443/authorize?client=luban')
  await expect(link).toHaveAttribute('target', '_blank')
  await expect(link).toHaveAttribute('rel', /noopener/)
  expect(context.pages()).toHaveLength(1)
  expect(new URL(page.url()).pathname).toBe(`/s/${sessionId}`)
  await lab.shot(url, 'elicitation-url-360')
  await link.focus()
  await page.keyboard.press('Tab')
  await expect(url.getByTestId('submit')).toBeFocused()
  await page.keyboard.press('Enter')
  await expect(url.getByTestId('receipt-status')).toHaveText('已完成网址操作')
  // The run goes on to its end (the page shows the end once, not on each receipt).
  await expect
    .poll(async () => (await luban.api('GET', `/api/sessions/${encodeURIComponent(sessionId)}`)).body.session.status, { timeout: 30_000 })
    .toBe('completed')
  expect(context.pages()).toHaveLength(1)

  const tr = await luban.api('GET', `/api/sessions/${encodeURIComponent(sessionId)}`)
  const results = (tr.body.messages ?? []).filter((m: any) => m.role === 'tool').map((m: any) => String(m.content))
  expect(results).toHaveLength(2)
  expect(results[0]).toContain('Ada Lovelace')
  expect(results[1]).toContain('User completed the URL elicitation flow')
})

/** mcp posts one JSON-RPC request to luban's /mcp as a 2026-07-28 host and returns its result. */
async function mcp(luban: Luban, params: Record<string, unknown>, token = TOKEN): Promise<any> {
  const res = await fetch(`${luban.url}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'Mcp-Protocol-Version': '2026-07-28',
      // The 2026-07-28 transport names the method and tool in headers too.
      'Mcp-Method': 'tools/call',
      'Mcp-Name': String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-host', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { url: {} } },
        },
      },
    }),
  })
  let text = await res.text()
  expect(res.status, text).toBe(200)
  if ((res.headers.get('content-type') ?? '').includes('text/event-stream'))
    text = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).join('')
  const msg = JSON.parse(text)
  expect(msg.error, JSON.stringify(msg.error)).toBeUndefined()
  return msg.result
}

test('/q/{requestId}: just the MCP host question, answered with the keyboard after luban restarted; the retry gets the answer; others see nothing', async ({ page, lab, browser }) => {
  const db = path.join(lab.dir, 'q.db')
  const before = await lab.serve({ name: 'before', model: 'scripted', db })
  const args = { title: 'Deploy where?', mode: 'single', options: [{ id: 'dev', label: 'Dev' }, { id: 'prod', label: 'Prod', recommended: true }] }
  const first = await mcp(before, { name: 'ask_user', arguments: args })
  expect(first.resultType).toBe('input_required')
  const ir = first.inputRequests.luban
  expect(ir.method, JSON.stringify(ir)).toBe('elicitation/create')
  const el = ir.params
  expect(el.mode).toBe('url')
  const requestId = first._meta.requestId
  expect(el.url).toBe(`${before.url}/q/${requestId}`)

  // luban dies (SIGKILL) with the question open and comes back on the same
  // database and port: the URL the host holds still shows the question.
  await before.kill9()
  const luban = await lab.serve({ name: 'after', model: 'scripted', db, port: before.port })

  // Signed in as usual, then the URL the host shows.
  await page.goto(luban.pageURL())
  await page.goto(el.url)
  const q = page.getByTestId('question-page')
  await expect(q).toBeVisible()
  await expect(page.getByTestId('session-list')).toHaveCount(0)
  const card = q.getByTestId('input-card')
  await expect(card.getByRole('heading')).toHaveText('Deploy where?')
  await expect(q.getByTestId('question-source')).toContainText('e2e-host')
  await lab.shot(page, 'question-page-360')
  // It has the chat's side padding at 360 px, and its brand looks like the chat header's, not a blue link.
  for (const el of [q.getByRole('heading', { level: 2 }), card, q.getByTestId('question-source')]) {
    const box = (await el.boundingBox())!
    expect(box.x, 'left padding').toBeGreaterThanOrEqual(8)
    expect(box.x + box.width, 'right padding').toBeLessThanOrEqual(352)
  }
  const brand = await page.locator('.header h1 a').evaluate((a) => {
    const s = getComputedStyle(a)
    return { line: s.textDecorationLine, color: s.color, h1: getComputedStyle(a.parentElement!).color }
  })
  expect(brand.line).toBe('none')
  expect(brand.color).toBe(brand.h1)
  await card.getByTestId('option-dev').focus()
  await page.keyboard.press('ArrowDown')
  await expect(card.getByTestId('option-prod')).toBeChecked()
  await card.getByTestId('submit').focus()
  await page.keyboard.press('Enter')
  await expect(card.getByTestId('receipt')).toHaveAttribute('data-status', 'answered')
  await lab.shot(page, 'question-page-receipt-360')

  const again = await mcp(luban, { name: 'ask_user', arguments: args, requestState: first.requestState })
  expect(again.resultType).not.toBe('input_required')
  expect(again._meta.status).toBe('answered')
  expect(again.content[0].text).toContain('Prod')

  // A reload shows the receipt; another principal gets "not found".
  await page.reload()
  await expect(page.getByTestId('question-page').getByTestId('receipt')).toBeVisible()
  const other = await browser.newContext({ viewport: { width: 360, height: 740 } })
  const op = await other.newPage()
  await op.goto(luban.pageURL(OTHER_TOKEN))
  await op.goto(el.url)
  await expect(op.getByTestId('question-error')).toHaveAttribute('data-code', 'interaction_not_found')
  await expect(op.getByTestId('input-card')).toHaveCount(0)
  await other.close()
})
