// Issue 18, polish round, in Chromium: the session list is a drawer closed
// by default on a phone (the transcript and a card get the screen), a
// reload with a batch card open focuses its first unanswered question on
// screen, a sign-in link with a wrong token shows the page's own "token
// rejected" state (zh and en), and the demo streams slowly enough to stop.
import { expectNoSeriousViolations } from './axe'
import { askUser, expect, openAndSend, test, TOKEN } from './harness'

test.describe('at 360 px', () => {
  test.use({ viewport: { width: 360, height: 740 }, isMobile: true, hasTouch: true })

  test('the session list is a drawer, closed by default; keyboard and axe clean', async ({ page, lab }) => {
    const luban = await lab.serve({ scenario: { name: 'drawer', turns: [{ text: '先问一个问题。', toolCalls: [askUser({ title: '副本数', mode: 'number' })] }], final: '好' } })
    const { sessionId, card } = await openAndSend(page, luban, '抽屉测试')
    const toggle = page.getByTestId('sessions-toggle')
    await expect(toggle).toHaveAttribute('aria-expanded', 'false')
    await expect(toggle).toHaveAccessibleName(/^会话/)
    await expect(page.getByTestId(`session-${sessionId}`)).toBeHidden()
    // Header and the closed list together leave the transcript most of the screen.
    const header = (await page.locator('header').boundingBox())!
    const nav = (await page.getByTestId('session-list').boundingBox())!
    expect(nav.y + nav.height - header.y, 'header + closed session list').toBeLessThan(140)
    const transcript = (await page.getByTestId('transcript').boundingBox())!
    expect(transcript.height, 'the transcript height').toBeGreaterThan(400)
    await expect(card.getByTestId('custom-input')).toBeInViewport({ ratio: 1 })
    await expectNoSeriousViolations(page, 'drawer closed at 360 px')
    await lab.shot(page, 'drawer-closed-360')

    // Keyboard: Enter opens it, the rows show, a row opens its session and the drawer closes.
    await toggle.focus()
    await page.keyboard.press('Enter')
    await expect(toggle).toHaveAttribute('aria-expanded', 'true')
    await expect(page.getByTestId(`session-${sessionId}`)).toBeInViewport({ ratio: 1 })
    await expectNoSeriousViolations(page, 'drawer open at 360 px')
    await lab.shot(page, 'drawer-open-360')
    await page.getByTestId(`session-${sessionId}`).focus()
    await page.keyboard.press('Enter')
    await expect(toggle).toHaveAttribute('aria-expanded', 'false')
    await expect(page.getByTestId(`session-${sessionId}`)).toBeHidden()
    // Space toggles it too, in English as well.
    await page.getByTestId('lang-switch').click()
    await toggle.focus()
    await page.keyboard.press('Space')
    await expect(toggle).toHaveAttribute('aria-expanded', 'true')
    await expect(toggle).toHaveAccessibleName(/^Sessions \(1\)$/)
  })

  test('a reload with a batch card open focuses its first unanswered question, on screen', async ({ page, lab }) => {
    const q = (n: number) => ({
      question: `第 ${n} 个问题？`,
      header: `问题${n}`,
      context: '很长的背景说明，\n'.repeat(6),
      multi_select: n === 2,
      options: [
        { label: `甲${n}`, description: '第一个选项的说明' },
        { label: `乙${n}`, description: '第二个选项的说明' },
        { label: `丙${n}`, description: '第三个选项的说明' },
      ],
    })
    const luban = await lab.serve({
      scenario: {
        name: 'reload-batch',
        turns: [{ text: '先说明一下。\n\n' + '这是一段很长的介绍。'.repeat(30), toolCalls: [{ name: 'AskUser', arguments: { questions: [q(1), q(2), q(3)] } }] }],
        final: '好',
      },
    })
    const { card } = await openAndSend(page, luban, '批量提问')
    await expect(card).toHaveAttribute('data-mode', 'questions')
    await card.getByTestId('q0-option-1').click()
    await card.getByTestId('q1-option-0').click()
    await expect(card.getByTestId('hint')).toHaveText('还有 1 题未答：第 3 题')
    await page.reload()
    await expect(card).toHaveAttribute('data-phase', 'editing')
    await expect(card.getByTestId('q0-option-1')).toBeChecked() // the draft came back
    const first = card.getByTestId('q2-option-0')
    await expect(first).toBeFocused()
    await expect(first).toBeInViewport({ ratio: 1 })
    // The whole question (it fits) in view inside the transcript, the
    // scroller: its text above the choice, nothing under the composer.
    // Within a pixel: the scroll offset is whole pixels, the layout is not.
    const t = (await page.getByTestId('transcript').boundingBox())!
    for (const box of [await first.boundingBox(), await card.getByTestId('question-2').boundingBox()]) {
      expect(box!.y).toBeGreaterThanOrEqual(t.y - 1)
      expect(box!.y + box!.height).toBeLessThanOrEqual(t.y + t.height + 1)
    }
    await lab.shot(page, 'reload-batch-focus-360')

    // The hint jumps there too (click or Enter): answer the others first, clear one, jump.
    await card.getByTestId('q0-option-0').focus()
    await card.getByTestId('hint').click()
    await expect(first).toBeFocused()
  })
})

test('a sign-in link with a wrong token: the page says the token was rejected and what to do (zh)', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'noop', turns: [], final: '好' } })
  const res = await page.goto(`${luban.url}/?token=wrong`)
  expect(res!.status()).toBe(401)
  const box = page.getByTestId('unauthorized')
  await expect(box).toHaveAttribute('data-reason', 'token_rejected')
  await expect(box.getByRole('heading')).toHaveText('令牌无效')
  await expect(box).toContainText('服务器不接受这个链接里的令牌')
  await expect(box).toContainText('luban serve 启动时在终端里打印的网址')
  await expect(page.locator('body')).not.toContainText('invalid token')
  // The refused token leaves the address bar.
  await expect(page).toHaveURL(`${luban.url}/`)
  await expectNoSeriousViolations(page, 'token rejected')
  await lab.shot(page, 'token-rejected-zh')
  // The API's 401 is JSON as before.
  const api = await page.request.get(`${luban.url}/api/sessions`)
  expect(api.status()).toBe(401)
  expect((await api.json()).error.code).toBe('unauthorized')
  // The right link still signs in.
  await page.goto(luban.pageURL(TOKEN))
  await expect(page.getByTestId('model-name')).toBeVisible()
  await expect(page.getByTestId('unauthorized')).toHaveCount(0)
})

test.describe('in English', () => {
  test.use({ locale: 'en-US' })
  test('a sign-in link with a wrong token (en)', async ({ page, lab }) => {
    const luban = await lab.serve({ scenario: { name: 'noop', turns: [], final: 'ok' } })
    await page.goto(`${luban.url}/?token=wrong`)
    const box = page.getByTestId('unauthorized')
    await expect(box.getByRole('heading')).toHaveText('Token rejected')
    await expect(box).toContainText('The server does not accept the token in this link')
    await expect(box).toContainText('Open the URL that luban serve printed')
    await lab.shot(page, 'token-rejected-en')
  })
})

test('the demo streams at a pace a person can stop', async ({ page, lab }) => {
  // The demo's own pace in a slower setting (LUBAN_SCRIPTED_DELAY), so the stop lands mid-reply on a busy machine.
  const luban = await lab.serve({ model: 'scripted', env: { LUBAN_SCRIPTED_DELAY: '100ms' } })
  await page.goto(luban.pageURL())
  await expect(page.getByTestId('welcome-demo')).toBeVisible()
  await page.getByTestId('composer').fill('开始演示')
  await page.getByTestId('composer').press('Enter')
  const reply = page.getByTestId('message-assistant').last()
  await expect(reply).toContainText('你好')
  const stop = page.getByTestId('stop')
  await expect(stop).toBeVisible()
  await stop.click()
  await expect(reply.getByTestId('message-stopped')).toBeVisible()
  // Stopped before the end: the demo's first reply ends in "First, the environment.)".
  await expect(reply).not.toContainText('First, the environment.)')
  await expect(page.locator('[data-testid="input-card"]')).toHaveCount(0)
})

test('reopening the sign-in link with a question waiting names it on the welcome screen and opens it', async ({ page, lab }) => {
  const luban = await lab.serve({ scenario: { name: 'reopen', turns: [{ text: '先问一个问题。', toolCalls: [askUser({ title: '副本数', mode: 'number' })] }], final: '好' } })
  const { sessionId, card } = await openAndSend(page, luban, '重新打开')
  await expect(card).toHaveAttribute('data-phase', 'editing')
  await page.goto(luban.pageURL(TOKEN))
  const waiting = page.getByTestId('welcome-waiting')
  await expect(waiting).toContainText('有 1 个问题在等你回答')
  await expect(waiting).toContainText('重新打开')
  await expectNoSeriousViolations(page, 'welcome with a question waiting')
  await lab.shot(page, 'welcome-waiting')
  await page.getByTestId('welcome-waiting-open').click()
  await expect(page).toHaveURL(new RegExp(`/s/${sessionId}$`))
  await expect(page.getByTestId('input-card')).toHaveAttribute('data-phase', 'editing')
})
