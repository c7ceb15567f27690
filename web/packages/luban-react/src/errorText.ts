// The page words the server's errors itself, by their stable code (DESIGN
// §3, api.ErrorCode) and, for a rejected answer, by the field path: the
// server's message is English and only ever shown as a detail.
import type { Dict, Lang } from './i18n'
import type { FieldError } from './types'

/** CodedError is what errorText needs of an error answer. */
export type CodedError = { status?: number; code: string; message?: string }

/**
 * errorText is the sentence for an error answer in the page language: by
 * its code, else by its status (5xx: the server failed, the input is kept),
 * else the server's message as a last resort.
 */
export function errorText(t: Dict, e: CodedError): string {
  switch (e.code) {
    case 'network':
    case 'network_error':
      return t.errNetwork
    case 'stream_lost':
      return t.streamLost
    case 'run_in_progress':
      return t.runInProgress
    case 'interaction_pending':
      return t.interactionPending
    case 'payload_too_large':
      return t.payloadTooLarge
    case 'session_not_found':
      return t.sessionGone
    case 'interaction_not_found':
      return t.interactionGone
    case 'not_resumable':
      return t.notResumable
    case 'interaction_expired':
      return t.receiptExpired
    case 'request_timeout':
      return t.errTimeout
    case 'invalid_request':
      return t.errInvalidRequest
    case 'forbidden_origin':
    case 'unauthorized':
      return t.errUnauthorized
    case 'internal_error':
      return t.errServer
  }
  if (e.status !== undefined && e.status >= 500) return t.errServer
  return e.message || e.code
}

/** retryable reports whether sending the same thing again may succeed. */
export function retryable(e: CodedError): boolean {
  return e.code === 'network' || e.code === 'network_error' || e.code === 'stream_lost' || e.code === 'request_timeout' || (e.status !== undefined && e.status >= 500)
}

/**
 * CodedFieldError is one 422 detail as the server sends it: the field path,
 * the stable code and its params (the numbers and names the wording
 * needs), and the English message for clients that do not know the code.
 */
export type CodedFieldError = FieldError & { code?: string; params?: Record<string, unknown> }

type Params = Record<string, unknown>
type Words = (p: Params) => string

const num = (p: Params, k: string): string | undefined => (typeof p[k] === 'number' || typeof p[k] === 'string' ? String(p[k]) : undefined)
const list = (v: unknown, sep: string): string | undefined => (Array.isArray(v) && v.length ? v.map(String).join(sep) : undefined)

const zhFormats: Record<string, string> = { date: '日期（YYYY-MM-DD）', 'date-time': '日期时间', email: '邮箱地址', uri: '网址', url: '网址', number: '数字', integer: '整数' }
const enFormats: Record<string, string> = { date: 'a date (YYYY-MM-DD)', 'date-time': 'a date and time', email: 'an email address', uri: 'a URL', url: 'a URL', number: 'a number', integer: 'a whole number' }
const zhTypes: Record<string, string> = { string: '文字', number: '数字', integer: '整数', boolean: '是/否', array: '列表', object: '对象', null: '空值' }
const enTypes: Record<string, string> = { string: 'text', number: 'a number', integer: 'a whole number', boolean: 'yes/no', array: 'a list', object: 'an object', null: 'null' }

/**
 * fieldCodeText words each 422 detail code (api's FieldError codes) in
 * Chinese and English from its params; a code missing here is shown by
 * the server's message.
 */
export const fieldCodeText: Record<Lang, Record<string, Words>> = {
  zh: {
    required: () => '此项必填',
    unknown_field: () => '这个问题没有这一项',
    invalid_type: (p) => (zhTypes[String(p.expected ?? p.type)] ? `类型不对，应为${zhTypes[String(p.expected ?? p.type)]}` : '类型不对'),
    too_few: (p) => (num(p, 'min') ? `至少选 ${num(p, 'min')} 项` : '选得太少'),
    too_many: (p) => (num(p, 'max') ? `最多选 ${num(p, 'max')} 项` : '选得太多'),
    unknown_option: (p) => (num(p, 'option') ? `没有“${num(p, 'option')}”这个选项` : '没有这个选项'),
    duplicate: (p) => (num(p, 'option') ? `“${num(p, 'option')}”选了两次` : '有重复的选择'),
    too_long: (p) => (num(p, 'max') ?? num(p, 'limit') ? `太长了，最多 ${num(p, 'max') ?? num(p, 'limit')} 个字` : '太长了'),
    too_short: (p) => (num(p, 'min') ? `太短了，至少 ${num(p, 'min')} 个字` : '太短了'),
    out_of_range: (p) => {
      const lo = num(p, 'min')
      const hi = num(p, 'max')
      return lo && hi ? `应在 ${lo} 到 ${hi} 之间` : lo ? `不能小于 ${lo}` : hi ? `不能大于 ${hi}` : '超出允许的范围'
    },
    pattern: (p) => (num(p, 'pattern') ? `格式不对，须符合 ${num(p, 'pattern')}` : '格式不对'),
    format: (p) => (zhFormats[String(p.format)] ? `请填写${zhFormats[String(p.format)]}` : '格式不对'),
    enum: (p) => (list(p.allowed ?? p.options, '、') ? `只能是 ${list(p.allowed ?? p.options, '、')} 之一` : '不是允许的值'),
    not_allowed: () => '这里不能这样回答',
    outside_workspace: () => '路径必须在工作区内：填写相对路径，不能用 .. 跳出',
    invalid_json: () => '不是有效的 JSON',
    no_question: (p) => (num(p, 'question') ? `没有“${num(p, 'question')}”这个问题` : '没有这个问题'),
    conflict_with_answer_kind: () => '这种回答与问题的类型不符',
  },
  en: {
    required: () => 'Required',
    unknown_field: () => 'This question has no such field',
    invalid_type: (p) => (enTypes[String(p.expected ?? p.type)] ? `Wrong type: expected ${enTypes[String(p.expected ?? p.type)]}` : 'Wrong type'),
    too_few: (p) => (num(p, 'min') ? `Choose at least ${num(p, 'min')}` : 'Too few chosen'),
    too_many: (p) => (num(p, 'max') ? `Choose at most ${num(p, 'max')}` : 'Too many chosen'),
    unknown_option: (p) => (num(p, 'option') ? `There is no option "${num(p, 'option')}"` : 'There is no such option'),
    duplicate: (p) => (num(p, 'option') ? `"${num(p, 'option')}" is chosen twice` : 'A choice is repeated'),
    too_long: (p) => (num(p, 'max') ?? num(p, 'limit') ? `Too long: at most ${num(p, 'max') ?? num(p, 'limit')} characters` : 'Too long'),
    too_short: (p) => (num(p, 'min') ? `Too short: at least ${num(p, 'min')} characters` : 'Too short'),
    out_of_range: (p) => {
      const lo = num(p, 'min')
      const hi = num(p, 'max')
      return lo && hi ? `Must be between ${lo} and ${hi}` : lo ? `Must be at least ${lo}` : hi ? `Must be at most ${hi}` : 'Out of range'
    },
    pattern: (p) => (num(p, 'pattern') ? `Wrong format: must match ${num(p, 'pattern')}` : 'Wrong format'),
    format: (p) => (enFormats[String(p.format)] ? `Enter ${enFormats[String(p.format)]}` : 'Wrong format'),
    enum: (p) => (list(p.allowed ?? p.options, ', ') ? `Must be one of ${list(p.allowed ?? p.options, ', ')}` : 'Not an allowed value'),
    not_allowed: () => 'This answer is not allowed here',
    outside_workspace: () => 'The path must be inside the workspace: a relative path that does not leave it with ..',
    invalid_json: () => 'Not valid JSON',
    no_question: (p) => (num(p, 'question') ? `There is no question "${num(p, 'question')}"` : 'There is no such question'),
    conflict_with_answer_kind: () => 'This kind of answer does not fit the question',
  },
}

/**
 * fieldErrorText is a 422 detail in the page language: its code worded
 * with its params, else the server's message (English), else the code.
 */
export function fieldErrorText(lang: Lang, e: CodedFieldError): string {
  const words = e.code ? fieldCodeText[lang][e.code] : undefined
  if (words) return words(e.params && typeof e.params === 'object' ? e.params : {})
  return e.message || e.code || ''
}
