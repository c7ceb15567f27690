// Global setup of the end-to-end tests: build the page (so the binary embeds
// the current web/dist), then `go build` the luban binary and the fake
// OpenAI-compatible server from the repository root into a temporary
// directory. Workers find them through LUBAN_E2E_BIN and LUBAN_E2E_FAKEOPENAI.
// A failed build fails the run: nothing is ever skipped.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { screenshotDir, repoRoot, webRoot } from './paths'

function run(cmd: string, args: string[], cwd: string) {
  const t0 = Date.now()
  execFileSync(cmd, args, { cwd, stdio: 'inherit', env: process.env })
  console.log(`e2e setup: ${cmd} ${args.join(' ')} (${((Date.now() - t0) / 1000).toFixed(1)}s)`)
}

export default function globalSetup() {
  rmSync(screenshotDir, { recursive: true, force: true })
  if (process.env.LUBAN_E2E_SKIP_WEB_BUILD !== '1') run('npm', ['run', 'build'], webRoot)
  const dir = mkdtempSync(path.join(tmpdir(), 'luban-e2e-'))
  const go = process.env.GO || 'go'
  run(go, ['build', '-o', path.join(dir, 'luban'), './cmd/luban'], repoRoot)
  run(go, ['build', '-o', path.join(dir, 'fakeopenai-serve'), './internal/testkit/cmd/fakeopenai-serve'], repoRoot)
  process.env.LUBAN_E2E_BIN = path.join(dir, 'luban')
  process.env.LUBAN_E2E_FAKEOPENAI = path.join(dir, 'fakeopenai-serve')
  return () => rmSync(dir, { recursive: true, force: true })
}
