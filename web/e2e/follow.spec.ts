// Following a running session after a reload: the page reads the transcript
// (GET /api/sessions/{id} with lastEventId) and resumes the event stream
// after it with Last-Event-ID instead of replaying from event 0; the reply
// streaming then shows its text so far (not in the transcript until it
// commits: read once from the log) and the rest once it streams. The model is a small
// OpenAI-compatible server in this file whose stream is held open until the
// test releases it, so the run is still running when the page reloads (or
// when the user stops it mid-stream: the text so far stays, marked stopped,
// and the server stores it so a reload shows it too).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect, test } from './harness'

/** GatedModel streams "第一段，", then waits for release() before the rest. */
type GatedModel = { url: string; calls: () => number; release: () => void; close: () => Promise<void> }

async function gatedModel(): Promise<GatedModel> {
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  let calls = 0
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-gated', object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  const srv: Server = createServer(async (req, res) => {
    for await (const _ of req) {
      // Drain the request body.
    }
    calls++
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
    res.write(chunk({ role: 'assistant', content: '第一段，' }))
    await gate
    res.write(chunk({ content: '第二段。' }))
    res.write(chunk({}, 'stop'))
    res.end('data: [DONE]\n\n')
  })
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls: () => calls,
    release,
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections()
        srv.close(() => resolve())
      }),
  }
}

test('a reload while the run streams resumes after lastEventId (Last-Event-ID), and the answer shows once', async ({ page, lab }) => {
  const model = await gatedModel()
  try {
    const luban = await lab.serve({ model: 'openai:fake-model', env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-fake' } })
    await page.goto(luban.pageURL())
    await expect(page.getByTestId('welcome')).toBeVisible()
    await expect(page.getByTestId('welcome-demo')).toHaveCount(0) // not a scripted model
    await page.getByTestId('composer').fill('慢慢回答')
    await page.getByTestId('composer').press('Enter')
    await expect(page.getByTestId('message-assistant')).toContainText('第一段，')
    await expect(page.getByTestId('welcome')).toHaveCount(0)
    await expect(page).toHaveURL(/\/s\/[^/]+$/)
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)

    const transcript = page.waitForResponse((r) => new URL(r.url()).pathname === `/api/sessions/${sessionId}`)
    const events = page.waitForRequest((r) => new URL(r.url()).pathname === `/api/sessions/${sessionId}/events` && r.headers()['last-event-id'] !== undefined)
    await page.reload()
    const tr = await (await transcript).json()
    expect(tr.session.status).toBe('running')
    expect(tr.lastEventId).toBeGreaterThan(0)
    expect((await events).headers()['last-event-id']).toBe(String(tr.lastEventId))
    await expect(page.getByTestId('running')).toBeVisible()
    await expect(page.getByTestId(`session-status-${sessionId}`)).toHaveAttribute('data-status', 'running')
    await expect(page.getByTestId(`session-status-${sessionId}`)).toHaveText('运行中')

    // The reply streaming now is not in the transcript yet: its text so far
    // shows from the log before the rest streams.
    const assistant = page.getByTestId('message-assistant')
    await expect(assistant).toContainText('第一段，')
    await expect(assistant).not.toContainText('第二段')
    model.release()
    await expect(assistant).toHaveText(/第一段，第二段。/)
    await expect(assistant).toHaveCount(1)
    await expect(page.getByTestId('message-user')).toHaveCount(1)
    await expect(page.getByTestId('running')).toHaveCount(0)
    await expect(page.getByTestId(`session-status-${sessionId}`)).toHaveText('已完成')
    await lab.shot(page, 'page-followed-after-reload')
    expect(model.calls()).toBe(1)
  } finally {
    await model.close()
  }
})

test('a stop while the reply streams keeps the text so far, marked stopped, after a reload too; the run ends cancelled', async ({ page, lab }) => {
  const model = await gatedModel()
  try {
    const luban = await lab.serve({ model: 'openai:fake-model', env: { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-fake' } })
    await page.goto(luban.pageURL())
    await page.getByTestId('composer').fill('写长一点')
    await page.getByTestId('composer').press('Enter')
    const assistant = page.getByTestId('message-assistant')
    await expect(assistant).toContainText('第一段，')
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)

    await page.getByTestId('stop').click()
    // The partial reply stays, marked stopped; the run's end shows once.
    await expect(assistant.getByTestId('message-stopped')).toHaveText('（已停止）')
    await expect(assistant).toContainText('第一段，')
    await expect(assistant).toHaveCount(1)
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-run-status', 'cancelled')
    await expect(page.getByTestId('running')).toHaveCount(0)
    await expect(page.getByTestId('send')).toBeVisible()
    await lab.shot(page, 'page-stopped-mid-stream')
    await expect.poll(async () => (await luban.api('GET', `/api/sessions/${sessionId}`)).body.session.status).toBe('cancelled')
    // The server stored the text streamed so far, marked stopped: a reload
    // shows it with its mark, once.
    const tr = (await luban.api('GET', `/api/sessions/${sessionId}`)).body
    expect(tr.messages.filter((m: { role: string }) => m.role === 'assistant')).toMatchObject([{ content: '第一段，', stopped: true }])
    await page.reload()
    await expect(assistant).toHaveCount(1)
    await expect(assistant).toContainText('第一段，')
    await expect(assistant.getByTestId('message-stopped')).toHaveText('（已停止）')
    await expect(page.getByTestId('message-user')).toHaveCount(1)
    await expect(page.getByTestId('run-status')).toHaveAttribute('data-run-status', 'cancelled')
    await lab.shot(page, 'page-stopped-after-reload')
    expect(model.calls()).toBe(1)
  } finally {
    await model.close()
  }
})
