// The strings and the value logic of the MCP elicitation cards (docs/design.md §11):
// form (fields derived from the server's requestedSchema) and url.
import type { Lang } from '../i18n'
import type { FieldError, FormField } from '../types'

/** elicitationText holds every string of the form and url cards. */
export const elicitationText = {
  zh: {
    fromServer: (s: string) => `来自 MCP 服务 ${s}`,
    required: '必填',
    requiredMissing: '必填项',
    accept: '提交',
    decline: '拒绝',
    cancel: '取消',
    yes: '是',
    notANumber: '请填写数字',
    notAnInteger: '请填写整数',
    atLeast: (n: number) => `不能小于 ${n}`,
    atMost: (n: number) => `不能大于 ${n}`,
    minLength: (n: number) => `至少 ${n} 个字`,
    maxLength: (n: number) => `最多 ${n} 个字`,
    minItems: (n: number) => `至少选 ${n} 项`,
    maxItems: (n: number) => `最多选 ${n} 项`,
    badDate: '请填写日期（YYYY-MM-DD）',
    badEmail: '请填写邮箱地址',
    badUri: '请填写网址',
    fixFields: '请先修正标出的内容',
    charsRange: (r: string) => `${r} 个字`,
    itemsRange: (r: string) => `选 ${r} 项`,
    urlIntro: '这个服务请你打开下面的网址完成操作：',
    urlHost: '网站',
    open: '在新标签页打开',
    notOpenable: '这个网址不是 http(s) 网址，不能从这里打开',
    done: '我已完成',
    receiptAccepted: '已接受',
    receiptDeclined: '已拒绝',
    receiptUrlDone: '已完成网址操作',
    notResumableWhy: 'luban 重启了，提出这个问题的 MCP 服务器会话已经不在：这个问题不能再回答，回答也不会送到服务器。如有需要，请重新发起任务。',
  },
  en: {
    fromServer: (s: string) => `From MCP server ${s}`,
    required: 'required',
    requiredMissing: 'Required',
    accept: 'Submit',
    decline: 'Decline',
    cancel: 'Cancel',
    yes: 'Yes',
    notANumber: 'Enter a number',
    notAnInteger: 'Enter a whole number',
    atLeast: (n: number) => `At least ${n}`,
    atMost: (n: number) => `At most ${n}`,
    minLength: (n: number) => `At least ${n} characters`,
    maxLength: (n: number) => `At most ${n} characters`,
    minItems: (n: number) => `Choose at least ${n}`,
    maxItems: (n: number) => `Choose at most ${n}`,
    badDate: 'Enter a date (YYYY-MM-DD)',
    badEmail: 'Enter an email address',
    badUri: 'Enter a URL',
    fixFields: 'Fix the marked fields first',
    charsRange: (r: string) => `${r} characters`,
    itemsRange: (r: string) => `choose ${r}`,
    urlIntro: 'This server asks you to open the address below and finish there:',
    urlHost: 'Site',
    open: 'Open in a new tab',
    notOpenable: 'This is not an http(s) address; it cannot be opened from here',
    done: "I'm done",
    receiptAccepted: 'Accepted',
    receiptDeclined: 'Declined',
    receiptUrlDone: 'Done at the address',
    notResumableWhy: "luban restarted and the MCP server's session that asked this question is gone: it cannot be answered any more, and no answer reaches the server. Start the task again if you still need it.",
  },
} satisfies Record<Lang, Record<string, unknown>>

/** ElicitationText is one language's strings of the elicitation cards. */
export type ElicitationText = (typeof elicitationText)['zh']

/** FormValue is one field's value as the form holds it. */
export type FormValue = string | boolean | string[]

/** initialValue is a field's starting value: its schema default, else empty. */
export function initialValue(f: FormField): FormValue {
  const d = f.default as unknown
  switch (f.type) {
    case 'boolean':
      return d === true
    case 'multi':
      return Array.isArray(d) ? d.map(String) : []
    case 'number':
    case 'integer':
      return typeof d === 'number' ? String(d) : ''
    default:
      return typeof d === 'string' ? d : ''
  }
}

const DATE = /^\d{4}-\d{2}-\d{2}$/
const EMAIL = /^[^\s@]+@[^\s@]+$/

/**
 * checkForm validates the values against the fields' types, required marks
 * and bounds, as the server will against requestedSchema, and returns the
 * content to send (a JSON object keyed by field name; an empty optional
 * field is left out) with the problems, each with field "content.<name>"
 * like the server's 422 details.
 */
export function checkForm(fields: FormField[], values: Record<string, FormValue>, s: ElicitationText): { content: Record<string, unknown>; errors: FieldError[] } {
  const content: Record<string, unknown> = {}
  const errors: FieldError[] = []
  const bad = (f: FormField, message: string) => errors.push({ field: `content.${f.name}`, message })
  for (const f of fields) {
    const v = values[f.name] ?? initialValue(f)
    if (f.type === 'boolean') {
      content[f.name] = v === true
      continue
    }
    if (f.type === 'multi') {
      const arr = Array.isArray(v) ? v : []
      if (f.required && arr.length === 0) bad(f, s.requiredMissing)
      else if (f.minItems != null && arr.length < f.minItems && (arr.length > 0 || f.required)) bad(f, s.minItems(f.minItems))
      else if (f.maxItems != null && arr.length > f.maxItems) bad(f, s.maxItems(f.maxItems))
      if (arr.length > 0 || f.required) content[f.name] = arr
      continue
    }
    const str = typeof v === 'string' ? v : ''
    if (str.trim() === '') {
      if (f.required) bad(f, s.requiredMissing)
      continue
    }
    switch (f.type) {
      case 'number':
      case 'integer': {
        const n = Number(str)
        if (!Number.isFinite(n)) {
          bad(f, s.notANumber)
          break
        }
        if (f.type === 'integer' && !Number.isInteger(n)) {
          bad(f, s.notAnInteger)
          break
        }
        if (f.minimum != null && n < f.minimum) bad(f, s.atLeast(f.minimum))
        else if (f.maximum != null && n > f.maximum) bad(f, s.atMost(f.maximum))
        content[f.name] = n
        break
      }
      case 'date':
        if (!DATE.test(str)) bad(f, s.badDate)
        content[f.name] = str
        break
      case 'enum':
        content[f.name] = str
        break
      default: {
        const len = [...str].length
        if (f.minLength != null && len < f.minLength) bad(f, s.minLength(f.minLength))
        else if (f.maxLength != null && len > f.maxLength) bad(f, s.maxLength(f.maxLength))
        else if (f.format === 'email' && !EMAIL.test(str)) bad(f, s.badEmail)
        else if (f.format === 'uri' && !isURL(str)) bad(f, s.badUri)
        content[f.name] = str
      }
    }
  }
  return { content, errors }
}

function isURL(s: string): boolean {
  try {
    new URL(s)
    return true
  } catch {
    return false
  }
}

/**
 * splitURL parses an elicitation's URL for display: the scheme and the
 * host as the browser will use them (an international host in its
 * punycode form, so look-alike letters cannot pass for another site), and
 * the rest. openable is true for http and https only; a URL that does not
 * parse is shown as text, never linked.
 */
export function splitURL(raw: string): { ok: boolean; openable: boolean; href: string; before: string; host: string; after: string } {
  try {
    const u = new URL(raw)
    const before = `${u.protocol}//${u.username ? u.username + (u.password ? ':' + u.password : '') + '@' : ''}`
    const after = u.href.slice(before.length + u.host.length)
    return { ok: true, openable: u.protocol === 'http:' || u.protocol === 'https:', href: u.href, before, host: u.host, after }
  } catch {
    return { ok: false, openable: false, href: raw, before: '', host: '', after: raw }
  }
}
