// A takeover mid-reply, seen by a page that stays open: the first process
// streams part of the answer (committed as message_delta events), is killed
// with SIGKILL, and the next process on the same database and port takes the
// run over once the lease ran out and answers in full under a new messageId.
// The event log keeps the dead attempt's deltas, which never get a final
// `message`; the page must drop that bubble when the final message arrives,
// as a reload (the transcript) would show it. The model is a small
// OpenAI-compatible server in this file: its first call streams a piece and
// hangs, the next ones answer in full.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect, test } from './harness'

const DEAD = '从前有'
const FULL = ['从前有座山，', '山里有座庙。']

/** TakeoverModel hangs after DEAD on its first call and answers FULL after. */
type TakeoverModel = { url: string; calls: () => number; close: () => Promise<void> }

async function takeoverModel(): Promise<TakeoverModel> {
  let calls = 0
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-takeover', object: 'chat.completion.chunk', created: 0, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
  const srv: Server = createServer(async (req, res) => {
    for await (const _ of req) {
      // Drain the request body.
    }
    calls++
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' })
    if (calls === 1) {
      res.write(chunk({ role: 'assistant', content: DEAD }))
      return // held open until the process that asked is killed
    }
    res.write(chunk({ role: 'assistant', content: FULL[0] }))
    res.write(chunk({ content: FULL[1] }))
    res.write(chunk({}, 'stop'))
    res.end('data: [DONE]\n\n')
  })
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port } = srv.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls: () => calls,
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections()
        srv.close(() => resolve())
      }),
  }
}

test('kill -9 mid-reply, takeover by the next process: the open page shows only the full reply', async ({ page, lab }) => {
  const model = await takeoverModel()
  try {
    const env = { OPENAI_BASE_URL: model.url, OPENAI_API_KEY: 'sk-fake', LUBAN_LEASE: '1s' }
    const first = await lab.serve({ name: 'dies', model: 'openai:fake-model', env })
    await page.goto(first.pageURL())
    await page.getByTestId('composer').fill('讲个故事')
    await page.getByTestId('composer').press('Enter')
    const assistant = page.getByTestId('message-assistant')
    await expect(assistant).toContainText(DEAD)
    await expect(page).toHaveURL(/\/s\/[^/]+$/)
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
    // A mark on the window tells that the page was never reloaded.
    await page.evaluate(() => ((window as unknown as { stayed: boolean }).stayed = true))

    await first.kill9()
    const second = await lab.serve({ name: 'takes-over', model: 'openai:fake-model', env, port: first.port })

    await expect(page.getByTestId('running')).toHaveCount(0)
    await expect(assistant).toHaveCount(1)
    await expect(assistant.locator('.markdown')).toHaveText(FULL.join(''))
    await expect(page.getByTestId('message-user')).toHaveCount(1)
    await expect(page.getByTestId(`session-status-${sessionId}`)).toHaveAttribute('data-status', 'completed')
    expect(await page.evaluate(() => (window as unknown as { stayed?: boolean }).stayed)).toBe(true)
    await lab.shot(page, 'page-after-takeover')

    // The dead attempt's deltas are in the event log under a messageId that
    // has no final message, which is what the page had to drop; a reload
    // shows the same single reply.
    const tr = (await second.api('GET', `/api/sessions/${sessionId}`)).body
    const replies = tr.messages.filter((m: { role: string }) => m.role === 'assistant')
    expect(replies.map((m: { content: string }) => m.content)).toEqual([FULL.join('')])
    expect(model.calls()).toBe(2)
    await page.reload()
    await expect(assistant.locator('.markdown')).toHaveText(FULL.join(''))
    await expect(assistant).toHaveCount(1)
  } finally {
    await model.close()
  }
})
