// End-to-end tests of the page in Debian's headless Chromium, driven by
// Playwright through executablePath: no browser is ever downloaded
// (CHROMIUM_PATH overrides /usr/bin/chromium). global-setup.ts builds the
// page and the Go binaries; every test starts its own `luban serve` on
// loopback with a fresh database (harness.ts).
// Run: npm run e2e (from web/). Artifacts, all git-ignored, land in
// ../../artifacts/e2e: test-results/ (per-test logs, databases, traces),
// screenshots/ (each card and receipt) and report/ (HTML).
import { defineConfig } from '@playwright/test'
import path from 'node:path'
import { artifactDir } from './paths'

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
  globalSetup: './global-setup.ts',
  outputDir: path.join(artifactDir, 'test-results'),
  fullyParallel: true,
  workers: Number(process.env.E2E_WORKERS || 2),
  retries: 0,
  forbidOnly: !!process.env.CI,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: [['list'], ['html', { outputFolder: path.join(artifactDir, 'report'), open: 'never' }]],
  use: {
    browserName: 'chromium',
    headless: true,
    viewport: { width: 1280, height: 800 },
    screenshot: 'on',
    trace: 'retain-on-failure',
    locale: 'zh-CN',
    timezoneId: 'Asia/Shanghai',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
      args: chromiumArgs,
    },
  },
})
