// The approval contract on the page (docs/design.md §10). These types mirror
// approval/request.go, approval/answer.go and approval/result.go.
import type { FieldError, InputRequest, Receipt } from '../types'

/** An approval's InputRequest: tool and mode "approval". */
export type ApprovalRequest = Omit<InputRequest, 'mode' | 'tool'> & {
  tool: 'approval'
  mode: 'approval'
  toolName: string
  description?: string
  arguments: Record<string, unknown>
  argumentsSchema?: JsonSchema
}

/** The three decisions of docs/design.md §10. */
export type Decision = 'approve' | 'edit' | 'reject'

/** Body of POST /api/chat/continue for an approval, less sessionId and requestId. */
export type ApprovalAnswer = {
  decision?: Decision
  arguments?: Record<string, unknown>
  message?: string
  remember?: 'session'
  cancelled: boolean
}

/** The receipt of an approval: the usual fields plus the decision. */
export type ApprovalReceipt = Omit<Receipt, 'selections' | 'customInput'> & {
  decision?: Decision
  arguments?: Record<string, unknown>
  message?: string
  remember?: 'session'
}

/** The subset of JSON Schema that checkArguments understands. */
export type JsonSchema = {
  type?: string | string[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  additionalProperties?: boolean | JsonSchema
  minLength?: number
  maxLength?: number
  enum?: unknown[]
  items?: JsonSchema
}

/** isApproval reports whether a request is an approval (mode "approval"). */
export function isApproval(r: { mode?: string; tool?: string }): boolean {
  return r.mode === 'approval' || r.tool === 'approval'
}

function typeOf(v: unknown): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'array'
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number'
  return typeof v
}

function typeMatches(want: string, got: string): boolean {
  return want === got || (want === 'number' && got === 'integer')
}

/**
 * parseArguments parses the editor's text as a JSON object and checks it
 * against the tool's schema (types, required, unknown fields, string
 * lengths, enums) the way the server will, so an obviously wrong edit is
 * caught before it is sent. The server stays the judge: its 422 details are
 * shown the same way. Fields are named like the server's ("arguments.path"),
 * and each problem carries the server's FieldCode and params (too_short
 * {min, got, unit}, invalid_type {expected, got}, enum {allowed}, required,
 * unknown_field, invalid_json), so the page words both alike.
 */
export function parseArguments(text: string, schema?: JsonSchema): { value?: Record<string, unknown>; errors: FieldError[] } {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch (e) {
    return { errors: [{ field: 'arguments', code: 'invalid_json', message: `not valid JSON: ${(e as Error).message}` }] }
  }
  if (typeOf(v) !== 'object') return { errors: [{ field: 'arguments', code: 'invalid_type', params: { expected: 'object', got: typeOf(v) }, message: 'must be a JSON object' }] }
  const errors: FieldError[] = []
  check(v, schema ?? { type: 'object' }, 'arguments', errors)
  errors.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))
  return errors.length ? { errors } : { value: v as Record<string, unknown>, errors }
}

function check(v: unknown, s: JsonSchema, field: string, out: FieldError[]) {
  const got = typeOf(v)
  if (s.type) {
    const wants = Array.isArray(s.type) ? s.type : [s.type]
    if (!wants.some((w) => typeMatches(w, got))) {
      out.push({ field, code: 'invalid_type', params: { expected: wants[0], got }, message: `got ${got}, want ${wants.join(' or ')}` })
      return
    }
  }
  if (s.enum && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
    out.push({ field, code: 'enum', params: { allowed: s.enum }, message: `must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}` })
  }
  if (typeof v === 'string') {
    const n = [...v].length
    if (s.minLength !== undefined && n < s.minLength)
      out.push({ field, code: 'too_short', params: { min: s.minLength, got: n, unit: 'characters' }, message: `minLength: got ${n}, want ${s.minLength}` })
    if (s.maxLength !== undefined && n > s.maxLength)
      out.push({ field, code: 'too_long', params: { max: s.maxLength, got: n, unit: 'characters' }, message: `maxLength: got ${n}, want ${s.maxLength}` })
  }
  if (got === 'object') {
    const o = v as Record<string, unknown>
    for (const r of s.required ?? []) if (!(r in o)) out.push({ field: `${field}.${r}`, code: 'required', message: 'required but missing' })
    for (const [k, sub] of Object.entries(o)) {
      const ps = s.properties?.[k]
      if (ps) check(sub, ps, `${field}.${k}`, out)
      else if (s.additionalProperties === false) out.push({ field: `${field}.${k}`, code: 'unknown_field', message: "unknown field: the tool's schema does not allow it" })
      else if (typeof s.additionalProperties === 'object') check(sub, s.additionalProperties, `${field}.${k}`, out)
    }
  }
  if (got === 'array' && s.items) (v as unknown[]).forEach((x, i) => check(x, s.items!, `${field}[${i}]`, out))
}

const zh = {
  approvalTitle: '需要你的批准',
  /** runTitle is the card's heading, worded here (the request's title is the server's English "Run <tool>?"). */
  runTitle: (tool: string) => `运行 ${tool}？`,
  tool: '工具',
  argumentsLabel: '参数',
  approve: '批准',
  edit: '修改参数',
  editing: '修改参数（JSON）',
  sendEdit: '用修改后的参数运行',
  closeEdit: '放弃修改',
  reject: '拒绝',
  rejectReason: '拒绝理由（可选，会告诉模型）',
  confirmReject: '确认拒绝',
  closeReject: '不拒绝了',
  remember: '本会话内总是允许此工具',
  submitting: '提交中…',
  approved: '已批准',
  edited: '已修改后批准',
  rejected: '已拒绝',
  cancelled: '已取消',
  expired: '已过期',
  remembered: '本会话内总是允许',
  ranWith: '运行参数',
  reason: '理由',
  decidedAt: '决定时间',
}
const en: typeof zh = {
  approvalTitle: 'Your approval is needed',
  runTitle: (tool: string) => `Run ${tool}?`,
  tool: 'Tool',
  argumentsLabel: 'Arguments',
  approve: 'Approve',
  edit: 'Edit arguments',
  editing: 'Edit the arguments (JSON)',
  sendEdit: 'Run with these arguments',
  closeEdit: 'Discard the edit',
  reject: 'Reject',
  rejectReason: 'Reason (optional, the model reads it)',
  confirmReject: 'Confirm reject',
  closeReject: 'Back',
  remember: 'Always allow this tool in this session',
  submitting: 'Sending…',
  approved: 'Approved',
  edited: 'Approved with edits',
  rejected: 'Rejected',
  cancelled: 'Cancelled',
  expired: 'Expired',
  remembered: 'Always allowed in this session',
  ranWith: 'Ran with',
  reason: 'Reason',
  decidedAt: 'Decided at',
}
/** approvalText holds the approval card's strings per language. */
export const approvalText = { zh, en }

/**
 * descriptionIn is a tool's description in the page language. A built-in
 * tool's description is written once for the model in both languages, the
 * English first and then the Chinese ("Writes a text file in the workspace
 * (...). 在工作区中写入文本文件。"): for that form lang picks its half. Any
 * other description (an MCP server's, a plugin's) is returned whole.
 */
export function descriptionIn(d: string, lang: 'zh' | 'en'): string {
  const m = /^([\x20-\x7E]+[.!?])\s+(\p{Script=Han}.*)$/su.exec(d)
  if (!m) return d
  return lang === 'zh' ? m[2] : m[1]
}

