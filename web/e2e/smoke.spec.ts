// Smoke test: the page served by a running `luban serve` loads, is signed in
// through the token URL, and shows the model name in its header.
import { expect, test } from '@playwright/test'

function lubanURL(): string {
  const url = process.env.LUBAN_URL
  if (!url) throw new Error('LUBAN_URL is not set: start `luban serve` and pass the URL it prints (with ?token=…)')
  return url
}

test('the page loads, signs in and names the model', async ({ page }, info) => {
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(String(e)))
  await page.goto(lubanURL())
  await expect(page.getByTestId('model-name')).toBeVisible()
  await expect(page.getByTestId('unauthorized')).toHaveCount(0)
  await expect(page.getByTestId('composer')).toBeVisible()
  await page.screenshot({ path: info.outputPath('smoke.png'), fullPage: true })
  expect(errors).toEqual([])
})
