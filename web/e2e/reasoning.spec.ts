// A reasoning model (docs/models.md "Reasoning models"): its thinking shows
// folded above the answer, as text, never inside it; and the run only goes
// on because luban sends the thinking back on the tool-call turn (the fake
// in reasoning mode answers 400 otherwise, as DeepSeek's thinking mode).
import { expect, openAndSend, test } from './harness'

test('thinking is folded, shown as text, kept out of the answer, and sent back', async ({ page, lab }) => {
  const thinking = '先想清楚：用户要部署。<b>不是标签</b>\n第二行 🚀'
  const args = { title: '部署到哪里？', mode: 'single', options: [{ id: 'prod', label: '生产' }, { id: 'staging', label: '预发' }] }
  const fake = await lab.fakeOpenAI(
    [
      { reasoning: thinking, text: '我先问一下环境。', toolCalls: [{ id: 'call_think', name: 'ask_user', arguments: JSON.stringify(args) }] },
      { reasoning: '答案已经有了', text: '好的，部署到**生产**。' },
    ],
    { reasoning: true },
  )
  const luban = await lab.serve({ model: 'openai:deepseek-reasoner', env: { OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-fake' } })

  const { card } = await openAndSend(page, luban, '部署一下')
  const first = page.getByTestId('message-assistant').first()
  await expect(first).toContainText('我先问一下环境。')
  const folded = first.getByTestId('reasoning')
  await expect(folded).toBeVisible()
  await expect(folded).not.toHaveAttribute('open', '')
  await expect(folded.getByTestId('reasoning-text')).toBeHidden()
  await expect(first.locator('.markdown')).not.toContainText('先想清楚')
  await lab.shot(first, 'reasoning-folded')

  await folded.locator('summary').click()
  await expect(folded.getByTestId('reasoning-text')).toBeVisible()
  expect(await folded.getByTestId('reasoning-text').textContent()).toBe(thinking)
  await expect(folded.locator('b')).toHaveCount(0)
  await lab.shot(first, 'reasoning-open')

  await card.getByText('生产', { exact: true }).click()
  await card.getByTestId('submit').click()
  await expect(card.page().getByTestId('run-status')).toHaveAttribute('data-run-status', 'completed')
  const last = page.getByTestId('message-assistant').last()
  await expect(last).toContainText('好的，部署到生产。')
  await expect(last.getByTestId('reasoning')).not.toHaveAttribute('open', '')

  // The request after the answer carried the thinking back, byte for byte.
  const reqs = await fake.waitRequests(2)
  const turn = reqs[1].messages.find((m: any) => m.role === 'assistant' && m.tool_calls?.[0]?.id === 'call_think')
  expect(turn.reasoning_content).toBe(thinking)
  expect(turn.content).toBe('我先问一下环境。')

  // A reload shows the same folded thinking from the transcript.
  await page.reload()
  const again = page.getByTestId('message-assistant').first().getByTestId('reasoning')
  await expect(again).toBeVisible()
  await expect(again).not.toHaveAttribute('open', '')
  expect(await again.getByTestId('reasoning-text').textContent()).toBe(thinking)
})
