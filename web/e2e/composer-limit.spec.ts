// A chat message over the server's bound (32,000 characters): the composer
// counts from 90 % of it, and the server's 413 (payload_too_large, details
// naming `message` and its max) is said by the composer with its own verb,
// in view at 360 px, the text kept (design §14 "Free-text bound").
import { expect, test } from './harness'

test.use({ viewport: { width: 360, height: 780 } })

test('a too-long message is refused by the composer, with the bound, in zh and en', async ({ page, lab }) => {
  const luban = await lab.serve({ model: 'scripted' })
  await page.goto(luban.pageURL())
  const composer = page.getByTestId('composer')
  await composer.fill('长'.repeat(40_000))
  await expect(page.getByTestId('text-counter')).toHaveText('40,000 / 32,000 字，超出 8,000 字')
  await page.getByTestId('send').click()
  const err = page.getByTestId('composer-error')
  await expect(err).toHaveText('消息太长了，最多 32,000 个字；请删减后再发送')
  await expect(err).toBeInViewport()
  await expect(composer).toHaveValue('长'.repeat(40_000))
  await expect(page.getByTestId('notice')).toHaveCount(0)
  await lab.shot(page, 'composer-too-long-zh')

  await page.getByTestId('lang-switch').click()
  await page.getByTestId('send').click()
  await expect(err).toHaveText('The message is too long: at most 32,000 characters; shorten it and send again')
  await expect(page.getByTestId('text-counter')).toHaveText('40,000 / 32,000 characters, 8,000 over')
  await lab.shot(page, 'composer-too-long-en')
})
