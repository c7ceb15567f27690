// End-to-end tests of the page in Debian's headless Chromium, driven by
// Playwright through executablePath: no browser is ever downloaded.
// Run: LUBAN_URL='http://127.0.0.1:8080/?token=…' npm run e2e
// (CHROMIUM_PATH overrides the browser binary; artifacts land in
// ../../artifacts/e2e and ../../test-results/e2e, both git-ignored.)
import { defineConfig, devices } from '@playwright/test'

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  outputDir: '../../test-results/e2e',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 15_000 },
  reporter: [['list'], ['html', { outputFolder: '../../artifacts/e2e/report', open: 'never' }]],
  use: {
    headless: true,
    screenshot: 'on',
    trace: 'retain-on-failure',
    locale: 'zh-CN',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: chromiumArgs,
    },
  },
  projects: [
    { name: 'desktop', use: { ...devices['Desktop Chrome'], channel: undefined } },
    { name: 'phone-360', use: { browserName: 'chromium', viewport: { width: 360, height: 740 }, isMobile: false } },
  ],
})
