// The end-to-end harness: every test starts its own `luban serve` (the binary
// built by global-setup.ts) on a free loopback port with a fresh database in
// the test's output directory, and opens the page through `/?token=…`.
// Processes are stopped with SIGTERM at the end of the test (SIGKILL when a
// test asks for it); their logs, scenarios, databases and the fake model's
// recorded requests stay in the output directory as evidence.
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { test as base, expect, type Locator, type Page, type TestInfo } from '@playwright/test'
import { screenshotDir } from './paths'

/** TOKEN is the first principal's token; OTHER_TOKEN is a second principal. */
export const TOKEN = 'e2e-token'
export const OTHER_TOKEN = 'e2e-other-token'

/** ToolCall is one tool call of a scripted turn (docs/scenario.md). */
export type ScriptedToolCall = { name: string; arguments: unknown }
/** Scenario is a `scripted:<file>` scenario (docs/scenario.md). */
export type Scenario = {
  name: string
  turns: { text?: string; toolCalls?: ScriptedToolCall[] }[]
  final?: string
}

/** ServeOptions says how to start one `luban serve`. */
export type ServeOptions = {
  /** name labels the process's files (log); default "luban". */
  name?: string
  /** scenario is written to a file and played with --model scripted:<file>. */
  scenario?: Scenario
  /** model is the --model flag when no scenario is given (e.g. "openai:fake-model"). */
  model?: string
  /** db is the --db flag; default a SQLite file in the test's directory. */
  db?: string
  /** port to listen on; default a free one chosen by the kernel. */
  port?: number
  /** ttl is --interaction-ttl (a Go duration); default the server's (24h). */
  ttl?: string
  /** env is added to the process environment (OPENAI_BASE_URL, LUBAN_AGENT…). */
  env?: Record<string, string>
  /** config is a YAML configuration file's text (docs/agents.md), written beside the log and passed as --config. */
  config?: string
}

/** ApiResult is a JSON answer of the API, status included. */
export type ApiResult<T = any> = { status: number; body: T }

/** Luban is one running `luban serve` process. */
export class Luban {
  readonly url: string
  readonly port: number
  readonly opts: ServeOptions
  private proc: ChildProcess
  private exited: Promise<number | null>

  constructor(proc: ChildProcess, exited: Promise<number | null>, url: string, opts: ServeOptions) {
    this.proc = proc
    this.exited = exited
    this.url = url.replace(/\/$/, '')
    this.port = Number(new URL(url).port)
    this.opts = opts
  }

  /** pageURL is the sign-in URL the server prints: `/?token=…`. */
  pageURL(token = TOKEN): string {
    return `${this.url}/?token=${encodeURIComponent(token)}`
  }

  /** api calls the HTTP API with a bearer token and decodes the JSON answer. */
  async api<T = any>(method: string, p: string, body?: unknown, token = TOKEN): Promise<ApiResult<T>> {
    const res = await fetch(this.url + p, {
      method,
      headers: { Authorization: `Bearer ${token}`, Accept: 'application/json', 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }

  /** kill9 ends the process with SIGKILL (a crash) and waits for its exit. */
  async kill9(): Promise<void> {
    this.proc.kill('SIGKILL')
    await this.exited
  }

  /** stop sends SIGTERM (a drain) and waits; SIGKILL after 15 s. */
  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return
    this.proc.kill('SIGTERM')
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 15_000)
    await this.exited
    clearTimeout(t)
  }
}

/** FakeOpenAI is a running internal/testkit/cmd/fakeopenai-serve. */
export class FakeOpenAI {
  readonly url: string
  private file: string
  private proc: ChildProcess

  constructor(proc: ChildProcess, url: string, file: string) {
    this.proc = proc
    this.url = url
    this.file = file
  }

  /** requests is every request body received so far (chat.completions JSON). */
  requests(): any[] {
    return JSON.parse(readFileSync(this.file, 'utf8'))
  }

  /** waitRequests waits until n requests were received and returns them all. */
  async waitRequests(n: number): Promise<any[]> {
    await expect.poll(() => this.requests().length, { message: `fake OpenAI requests`, timeout: 20_000 }).toBeGreaterThanOrEqual(n)
    return this.requests()
  }

  stop() {
    this.proc.kill('SIGTERM')
  }
}

/** FakeTurn is one answer of the fake model (fakeopenai.Turn). */
export type FakeTurn = { text?: string; reasoning?: string; toolCalls?: { id: string; name: string; arguments: string }[] }

/** FakeOptions start the fake model in a mode (fakeopenai-serve flags). */
export type FakeOptions = {
  /** reasoning: a thinking model that answers 400 when a tool-call turn comes back without its reasoning_content. */
  reasoning?: boolean
}

/** Lab is the per-test fixture: start servers, the fake model, save screenshots. */
export type Lab = {
  /** dir is the test's output directory (kept as an artifact). */
  dir: string
  serve(opts?: ServeOptions): Promise<Luban>
  fakeOpenAI(turns: FakeTurn[], opts?: FakeOptions): Promise<FakeOpenAI>
  /** shot saves a screenshot of target as artifacts/e2e/screenshots/<test>-<name>.png. */
  shot(target: Page | Locator, name: string): Promise<void>
}

function slug(s: string): string {
  return s
    .replace(/[^\p{L}\p{N}]+/gu, '-')
    .replace(/^-|-$/g, '')
    .slice(0, 60)
}

/** waitLine resolves with the first match of re on a stream, or rejects on exit. */
function waitLine(proc: ChildProcess, stream: NodeJS.ReadableStream, re: RegExp, what: string, logFile: string): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let buf = ''
    const timer = setTimeout(() => reject(new Error(`${what}: no "${re}" within 30 s; see ${logFile}`)), 30_000)
    stream.on('data', (c: Buffer) => {
      buf += c.toString('utf8')
      const m = buf.match(re)
      if (m) {
        clearTimeout(timer)
        resolve(m)
      }
    })
    proc.once('exit', (code, sig) => {
      clearTimeout(timer)
      reject(new Error(`${what} exited (${code ?? sig}) before it was ready; see ${logFile}:\n${readFileSync(logFile, 'utf8').slice(-2000)}`))
    })
  })
}

function binary(env: string): string {
  const p = process.env[env]
  if (!p || !existsSync(p)) throw new Error(`${env} is not set or missing: run through \`npm run e2e\` (global-setup builds it)`)
  return p
}

async function startLuban(info: TestInfo, dir: string, opts: ServeOptions, n: number): Promise<{ luban: Luban; log: string }> {
  const name = `${opts.name ?? 'luban'}-${n}`
  const log = path.join(dir, `${name}.log`)
  const args = ['serve', '--addr', `127.0.0.1:${opts.port ?? 0}`, '--auth-token', `${TOKEN},${OTHER_TOKEN}`, '--workspace', dir]
  args.push('--db', opts.db ?? path.join(dir, 'luban.db'))
  if (opts.scenario) {
    const file = path.join(dir, `${opts.scenario.name}.json`)
    writeFileSync(file, JSON.stringify(opts.scenario, null, 2))
    args.push('--model', `scripted:${file}`)
  } else if (opts.model) {
    args.push('--model', opts.model)
  }
  if (opts.ttl) args.push('--interaction-ttl', opts.ttl)
  if (opts.config !== undefined) {
    const file = path.join(dir, `${name}.yaml`)
    writeFileSync(file, opts.config)
    args.push('--config', file)
  }
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    TMPDIR: dir, // a --db memory file left by a kill -9 stays in the test's directory
    LUBAN_SSE_HEARTBEAT: '2s',
    // The demo's paced text (model/scripted "delay") only slows tests down; a test can set it back.
    LUBAN_SCRIPTED_DELAY: '0',
    ...opts.env,
  }
  const out = createWriteStream(log)
  out.write(`$ luban ${args.join(' ')}\n`)
  const proc = spawn(binary('LUBAN_E2E_BIN'), args, { env, stdio: ['ignore', 'pipe', 'pipe'] })
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)))
  proc.stdout!.pipe(out, { end: false })
  proc.stderr!.pipe(out, { end: false })
  exited.then(() => out.end())
  const m = await waitLine(proc, proc.stdout!, /luban serving on (http:\/\/\S+)/, name, log)
  const luban = new Luban(proc, exited, m[1], opts)
  const ready = await fetch(`${luban.url}/readyz`)
  expect(ready.status, `${name} /readyz`).toBe(200)
  info.annotations.push({ type: 'server', description: `${name} ${luban.url} (${log})` })
  return { luban, log }
}

/**
 * test is Playwright's test with a `lab` fixture. At the end of each test
 * every process it started is stopped and its log attached; a server log
 * that mentions a Go panic or a data race fails the test.
 */
export const test = base.extend<{ lab: Lab }>({
  lab: async ({}, use, info) => {
    const dir = info.outputPath()
    mkdirSync(dir, { recursive: true })
    mkdirSync(screenshotDir, { recursive: true })
    const servers: { luban: Luban; log: string }[] = []
    const fakes: FakeOpenAI[] = []
    let shots = 0
    const lab: Lab = {
      dir,
      async serve(opts = {}) {
        const s = await startLuban(info, dir, opts, servers.length + 1)
        servers.push(s)
        return s.luban
      },
      async fakeOpenAI(turns, opts = {}) {
        const n = fakes.length + 1
        const turnsFile = path.join(dir, `fakeopenai-${n}-turns.json`)
        const reqFile = path.join(dir, `fakeopenai-${n}-requests.json`)
        writeFileSync(turnsFile, JSON.stringify(turns, null, 2))
        const args = ['-turns', turnsFile, '-requests', reqFile, '-stdin-exit', ...(opts.reasoning ? ['-reasoning'] : [])]
        const proc = spawn(binary('LUBAN_E2E_FAKEOPENAI'), args, {
          stdio: ['pipe', 'pipe', 'pipe'],
        })
        const errLog = path.join(dir, `fakeopenai-${n}.log`)
        proc.stderr!.pipe(createWriteStream(errLog))
        const m = await waitLine(proc, proc.stdout!, /^url (\S+)/m, 'fakeopenai-serve', errLog)
        const f = new FakeOpenAI(proc, m[1], reqFile)
        fakes.push(f)
        return f
      },
      async shot(target, name) {
        shots++
        const prefix = [info.file && path.basename(info.file, '.spec.ts'), info.project.name, slug(info.title)].filter(Boolean).join('-')
        const file = path.join(screenshotDir, `${prefix}-${String(shots).padStart(2, '0')}-${name}.png`)
        await target.screenshot({ path: file })
        await info.attach(name, { path: file, contentType: 'image/png' })
      },
    }
    await use(lab)
    for (const s of servers) await s.luban.stop()
    for (const f of fakes) f.stop()
    for (const s of servers) {
      await info.attach(path.basename(s.log), { path: s.log, contentType: 'text/plain' })
      const text = readFileSync(s.log, 'utf8')
      expect(text, `${s.log} has no Go panic or data race`).not.toMatch(/^panic:|WARNING: DATA RACE/m)
    }
  },
})

export { expect }

/** SendOptions for openAndSend. */
type Opened = { sessionId: string; card: Locator }

/**
 * openAndSend opens the page signed in, sends message, and waits for the
 * first question card. It returns the session id (from the URL /s/{id}) and
 * the card.
 */
export async function openAndSend(page: Page, luban: Luban, message: string, token = TOKEN): Promise<Opened> {
  await page.goto(luban.pageURL(token))
  await expect(page.getByTestId('model-name')).toBeVisible()
  await page.getByTestId('composer').fill(message)
  await page.getByTestId('composer').press('Enter')
  const first = page.locator('[data-testid="input-card"][data-phase="editing"]').first()
  await expect(first).toBeVisible()
  // A locator by request id keeps pointing at this card when more follow.
  const requestId = await first.getAttribute('data-request-id')
  const card = page.locator(`[data-testid="input-card"][data-request-id="${requestId}"]`)
  await expect(page).toHaveURL(/\/s\/[^/]+$/)
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!)
  return { sessionId, card }
}

/** toolMessages returns the transcript's tool messages for a tool call id. */
export async function toolMessages(luban: Luban, sessionId: string, toolCallId: string, token = TOKEN): Promise<any[]> {
  const tr = await luban.api('GET', `/api/sessions/${encodeURIComponent(sessionId)}`, undefined, token)
  expect(tr.status).toBe(200)
  return (tr.body.messages ?? []).filter((m: any) => m.role === 'tool' && m.toolCallId === toolCallId)
}

/** askUser builds an ask_user tool call for a scenario. */
export function askUser(args: Record<string, unknown>): ScriptedToolCall {
  return { name: 'ask_user', arguments: args }
}

/**
 * deployQuestion is an ask_user tool call of mode multiple with a note
 * (部署到哪些环境？ dev/staging/prod), the multiple-choice card the drafts
 * and keyboard specs answer.
 */
export const deployQuestion: ScriptedToolCall = askUser({
  title: '部署到哪些环境？',
  mode: 'multiple',
  allowCustom: true,
  options: [
    { id: 'dev', label: '开发' },
    { id: 'staging', label: '预发' },
    { id: 'prod', label: '生产' },
  ],
})

/** layoutBatch is an AskUser tool call of two questions (布局: single; 平台: multi_select), the batch card those specs answer. */
export const layoutBatch: ScriptedToolCall = {
  name: 'AskUser',
  arguments: {
    questions: [
      { question: '用哪种布局？', header: '布局', multi_select: false, options: [{ label: '网格', description: '两列' }, { label: '列表', description: '一列' }] },
      { question: '支持哪些平台？', header: '平台', multi_select: true, options: [{ label: 'Linux', description: '服务器' }, { label: 'macOS', description: '桌面' }] },
    ],
  },
}
