// The page words the server's errors itself, by their stable code (docs/design.md
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
    case 'not_assignee':
      return t.notAssignee
    case 'already_decided':
      return t.alreadyDecided
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
 * the stable code (FieldCode) and its params (the numbers and names the
 * wording needs), and the English message for clients that do not know the
 * code.
 */
export type CodedFieldError = FieldError

type Params = Record<string, unknown>
type Words = (p: Params) => string

/** str is a param as display text (numbers and strings only; anything else is left out). */
const str = (p: Params, k: string): string | undefined => (typeof p[k] === 'number' || typeof p[k] === 'string' ? String(p[k]) : undefined)
const list = (v: unknown, sep: string): string | undefined =>
  Array.isArray(v) && v.length ? v.filter((x) => typeof x === 'string' || typeof x === 'number').map(String).join(sep) || undefined : undefined

const zhFormats: Record<string, string> = { date: '日期（YYYY-MM-DD）', 'date-time': '日期时间', email: '邮箱地址', uri: '网址', url: '网址', number: '数字', integer: '整数' }
const enFormats: Record<string, string> = { date: 'a date (YYYY-MM-DD)', 'date-time': 'a date and time', email: 'an email address', uri: 'a URL', url: 'a URL', number: 'a number', integer: 'a whole number' }
const zhTypes: Record<string, string> = { string: '文字', number: '数字', integer: '整数', boolean: '是/否', array: '列表', object: '对象', null: '空值' }
const enTypes: Record<string, string> = { string: 'text', number: 'a number', integer: 'a whole number', boolean: 'yes/no', array: 'a list', object: 'an object', null: 'null' }
/** Units of min/max/got (FieldCode "unit"); none counts options. */
const zhUnits: Record<string, string> = { characters: '个字', bytes: '字节', items: '项', properties: '个属性' }
const enUnits: Record<string, [string, string]> = { characters: ['character', 'characters'], bytes: ['byte', 'bytes'], items: ['item', 'items'], properties: ['property', 'properties'] }
const zhUnit = (p: Params, dflt: string) => zhUnits[String(p.unit)] ?? dflt
const enUnit = (p: Params, n: string | undefined, dflt: [string, string]) => (enUnits[String(p.unit)] ?? dflt)[n === '1' ? 0 : 1]

/**
 * fieldCodeText words each 422 detail code (api FieldCode, docs/design.md §25) in
 * Chinese and English from its params; `invalid` (a rule without a code
 * of its own) and a code missing here fall back to the server's message.
 */
export const fieldCodeText: Record<Lang, Record<string, Words>> = {
  zh: {
    required: (p) => (str(p, 'question') ? `请回答“${str(p, 'question')}”` : list(p.allowed, '、') ? `请选择：${list(p.allowed, '、')}` : '此项必填'),
    unknown_field: () => '这个问题没有这一项',
    invalid_type: (p) => (zhTypes[String(p.expected)] ? `类型不对，应为${zhTypes[String(p.expected)]}` : '类型不对'),
    invalid_json: (p) => (str(p, 'offset') ? `不是有效的 JSON（第 ${str(p, 'offset')} 个字节附近）` : '不是有效的 JSON'),
    too_few: (p) => (str(p, 'min') ? `至少 ${str(p, 'min')} ${zhUnit(p, '项')}` : '太少了'),
    too_many: (p) => (str(p, 'max') ? `最多 ${str(p, 'max')} ${zhUnit(p, '项')}` : '太多了'),
    unknown_option: (p) => (str(p, 'option') ? `没有“${str(p, 'option')}”这个选项` : '没有这个选项'),
    unknown_question: (p) => (str(p, 'question') ? `没有问过“${str(p, 'question')}”这个问题` : '没有问过这个问题'),
    duplicate: (p) =>
      str(p, 'option') ? `“${str(p, 'option')}”重复了` : str(p, 'question') ? `“${str(p, 'question')}”回答了两次` : '有重复的内容',
    too_long: (p) => (str(p, 'max') ? `太长了，最多 ${str(p, 'max')} ${zhUnit(p, '个字')}` : '太长了'),
    too_short: (p) => (str(p, 'min') ? `太短了，至少 ${str(p, 'min')} ${zhUnit(p, '个字')}` : '太短了'),
    out_of_range: (p) => {
      const lo = str(p, 'min')
      const hi = str(p, 'max')
      const xlo = str(p, 'exclusiveMin')
      const xhi = str(p, 'exclusiveMax')
      if (lo && hi) return `应在 ${lo} 到 ${hi} 之间`
      const parts = [lo && `不能小于 ${lo}`, xlo && `须大于 ${xlo}`, hi && `不能大于 ${hi}`, xhi && `须小于 ${xhi}`].filter(Boolean)
      return parts.length ? parts.join('，') : '超出允许的范围'
    },
    not_multiple: (p) => (str(p, 'multipleOf') ? `须是 ${str(p, 'multipleOf')} 的倍数` : '不是允许的倍数'),
    pattern: (p) => (str(p, 'pattern') ? `格式不对，须符合 ${str(p, 'pattern')}` : '格式不对'),
    format: (p) => (zhFormats[String(p.format)] ? `请填写${zhFormats[String(p.format)]}` : '格式不对'),
    enum: (p) => (list(p.allowed, '、') ? `只能是 ${list(p.allowed, '、')} 之一` : '不是允许的值'),
    not_allowed: () => '这里不接受这一项',
    conflict_with_answer_kind: () => '这种回答与问题的类型不符',
    no_question: () => '没有等待回答的问题',
    outside_workspace: (p) => (str(p, 'path') ? `“${str(p, 'path')}”不在工作区内：请填写工作区内的相对路径` : '路径必须在工作区内：请填写相对路径，不能用 .. 跳出'),
    no_workspace: () => '服务器没有可用的工作区，不能回答路径',
    not_directory: (p) => (str(p, 'path') ? `“${str(p, 'path')}”不是目录` : '这不是目录'),
    is_directory: (p) => (str(p, 'path') ? `“${str(p, 'path')}”是目录，需要文件` : '这是目录，需要文件'),
    invalid_path: (p) => (str(p, 'path') ? `路径“${str(p, 'path')}”无法使用` : '路径无法使用'),
  },
  en: {
    required: (p) => (str(p, 'question') ? `Answer "${str(p, 'question')}"` : list(p.allowed, ', ') ? `Choose one of ${list(p.allowed, ', ')}` : 'Required'),
    unknown_field: () => 'This question has no such field',
    invalid_type: (p) => (enTypes[String(p.expected)] ? `Wrong type: expected ${enTypes[String(p.expected)]}` : 'Wrong type'),
    invalid_json: (p) => (str(p, 'offset') ? `Not valid JSON (near byte ${str(p, 'offset')})` : 'Not valid JSON'),
    too_few: (p) => (str(p, 'min') ? `At least ${str(p, 'min')} ${enUnit(p, str(p, 'min'), ['item', 'items'])}` : 'Too few'),
    too_many: (p) => (str(p, 'max') ? `At most ${str(p, 'max')} ${enUnit(p, str(p, 'max'), ['item', 'items'])}` : 'Too many'),
    unknown_option: (p) => (str(p, 'option') ? `There is no option "${str(p, 'option')}"` : 'There is no such option'),
    unknown_question: (p) => (str(p, 'question') ? `"${str(p, 'question')}" was not asked` : 'That question was not asked'),
    duplicate: (p) =>
      str(p, 'option') ? `"${str(p, 'option')}" is repeated` : str(p, 'question') ? `"${str(p, 'question')}" is answered twice` : 'Something is repeated',
    too_long: (p) => (str(p, 'max') ? `Too long: at most ${str(p, 'max')} ${enUnit(p, str(p, 'max'), ['character', 'characters'])}` : 'Too long'),
    too_short: (p) => (str(p, 'min') ? `Too short: at least ${str(p, 'min')} ${enUnit(p, str(p, 'min'), ['character', 'characters'])}` : 'Too short'),
    out_of_range: (p) => {
      const lo = str(p, 'min')
      const hi = str(p, 'max')
      const xlo = str(p, 'exclusiveMin')
      const xhi = str(p, 'exclusiveMax')
      if (lo && hi) return `Must be between ${lo} and ${hi}`
      const parts = [lo && `at least ${lo}`, xlo && `more than ${xlo}`, hi && `at most ${hi}`, xhi && `less than ${xhi}`].filter(Boolean)
      return parts.length ? `Must be ${parts.join(' and ')}` : 'Out of range'
    },
    not_multiple: (p) => (str(p, 'multipleOf') ? `Must be a multiple of ${str(p, 'multipleOf')}` : 'Not an allowed multiple'),
    pattern: (p) => (str(p, 'pattern') ? `Wrong format: must match ${str(p, 'pattern')}` : 'Wrong format'),
    format: (p) => (enFormats[String(p.format)] ? `Enter ${enFormats[String(p.format)]}` : 'Wrong format'),
    enum: (p) => (list(p.allowed, ', ') ? `Must be one of ${list(p.allowed, ', ')}` : 'Not an allowed value'),
    not_allowed: () => 'This is not accepted here',
    conflict_with_answer_kind: () => 'This kind of answer does not fit the question',
    no_question: () => 'There is no question waiting for an answer',
    outside_workspace: (p) =>
      str(p, 'path') ? `"${str(p, 'path')}" is outside the workspace: enter a path relative to it` : 'The path must be inside the workspace: a relative path that does not leave it with ..',
    no_workspace: () => 'The server has no usable workspace, so a path cannot be answered',
    not_directory: (p) => (str(p, 'path') ? `"${str(p, 'path')}" is not a directory` : 'This is not a directory'),
    is_directory: (p) => (str(p, 'path') ? `"${str(p, 'path')}" is a directory; a file is needed` : 'This is a directory; a file is needed'),
    invalid_path: (p) => (str(p, 'path') ? `The path "${str(p, 'path')}" cannot be used` : 'The path cannot be used'),
  },
}

/**
 * fieldErrorText is a 422 detail in the page language: its code worded
 * with its params, else the server's message (English), else the code.
 */
export function fieldErrorText(lang: Lang, e: CodedFieldError): string {
  if (e.code === 'unknown_field') {
    // Said by what holds the field: a tool's arguments, a form, the answer.
    if (e.field.startsWith('arguments')) return lang === 'zh' ? '工具的参数里没有这一项' : 'The tool takes no such argument'
    if (e.field.startsWith('content')) return lang === 'zh' ? '表单里没有这一项' : 'The form has no such field'
  }
  const words = e.code ? fieldCodeText[lang][e.code] : undefined
  if (words) return words(e.params && typeof e.params === 'object' ? e.params : {})
  return e.message || e.code || ''
}
