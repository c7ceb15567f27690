// Every string the cards show, Chinese (default) and English. Strings that
// came from a model are never here; the cards render them as text. An app
// that has its own strings spreads cardDicts[lang] into its dictionary and
// provides the language through LangContext.
import { createContext, useContext, useEffect, useState } from 'react'

const zh = {
  recommended: '推荐',
  customInput: '其他说明',
  textInput: '回答',
  numberInput: '数字',
  dateInput: '日期',
  directoryInput: '目录',
  directoryHint: '填写工作区内的相对路径，例如 src/app',
  /** numberHint states a number question's bounds (ask_user minimum, maximum, integer); '' when it has none. */
  numberHint: (lo: number | undefined, hi: number | undefined, integer: boolean) => {
    const what = integer ? '整数' : '数字'
    if (lo !== undefined && hi !== undefined) return `${lo} 到 ${hi} 之间的${what}`
    if (lo !== undefined) return `不小于 ${lo} 的${what}`
    if (hi !== undefined) return `不大于 ${hi} 的${what}`
    return integer ? '整数' : ''
  },
  submit: '提交',
  submitting: '提交中…',
  cancel: '取消',
  /** cancelTask is the cards' action that ends the run (ask_user, AskUser, approval), the same words on each. */
  cancelTask: '取消任务',
  cancelTaskConfirm: '取消任务？助手会停下，这个问题不再等你回答。',
  keepAnswering: '继续回答',
  /** unanswered names the batch's questions still without an answer (1-based numbers). */
  unanswered: (ns: number[]) => `还有 ${ns.length} 题未答：第 ${ns.join('、')} 题`,
  other: '其他',
  /** batchTitle heads an AskUser card: its questions follow, each with its own text. */
  batchTitle: (n: number) => (n === 1 ? '请回答这个问题' : `请回答以下 ${n} 个问题`),
  otherPlaceholder: '填写其他答案',
  preview: '预览',
  noPreview: '此选项没有预览',
  expiresAt: '有效期至',
  toggleNeedsOne: '至少打开一项才能提交',
  singleNeedsOne: '请选择一项',
  valueRequired: '请填写内容',
  questionNeedsAnswer: '请回答这个问题',
  receipt: '回执',
  receiptAnswered: '已提交',
  receiptCancelled: '已取消',
  receiptExpired: '已超时',
  signed: '已签名',
  signedHint: '这份回执带有 Ed25519 签名，可以用服务器的公钥（/.well-known/luban/keys）或 luban verify 离线验证',
  signature: '签名',
  copySignature: '复制签名',
  copied: '已复制',
  downloadReceipt: '下载回执',
  answeredElsewhere: '已在另一个窗口回答',
  cancelledElsewhere: '已在另一个窗口取消',
  draftDiscarded: '；你在这里未发送的草稿已丢弃',
  unsentDraft: '你未发送的草稿',
  answerNotTaken: '；你的回答没有被采用',
  /** waitingFor says whom a routed request waits for (docs/design.md §16). */
  waitingFor: (names: string[], approvals: number, quorum: number) =>
    `等待 ${names.join('、')}${quorum > 1 ? `（已批准 ${approvals}/${quorum}）` : ''}`,
  yourAnswer: '你的回答',
  submittedAt: '提交时间',
  cancelledAt: '取消时间',
  expiredAt: '超时时间',
  selected: '选择',
  nothingSelected: '（无）',
  continuing: '继续执行中',
  runCompleted: '任务已完成',
  runCancelled: '任务已取消',
  runExpired: '任务已超时停止',
  runFailed: '任务失败',
  notResumable: '服务已重启，请重新发起任务',
  payloadTooLarge: '内容太长，请缩短后再提交',
  retry: '重试',
  errNetwork: '连不上服务器，你的输入还在，可以重试',
  errServer: '服务器出错了，你的输入还在，可以重试',
  errTimeout: '请求超时，你的输入还在，可以重试',
  errInvalidRequest: '请求格式不对（客户端与服务器版本不一致？）',
  errUnauthorized: '未登录或登录已失效，请重新打开带 token 的链接',
  interactionGone: '这个问题已不存在（可能已被删除），无法再回答',
  notAssignee: '这个问题不是交给你的：只有它等待的人可以回答',
  alreadyDecided: '你已经对这个审批做过决定了',
  sessionGone: '这个会话不存在或已被删除',
  runInProgress: '当前任务仍在运行，请稍候',
  interactionPending: '有一个问题等待回答，请先回答',
  streamLost: '连接中断，无法恢复；请刷新页面',
}

/** Dict is the set of card message keys; every language defines all of them. */
export type Dict = typeof zh

const en: Dict = {
  recommended: 'Recommended',
  customInput: 'Other details',
  textInput: 'Answer',
  numberInput: 'Number',
  dateInput: 'Date',
  directoryInput: 'Directory',
  directoryHint: 'A path relative to the workspace, e.g. src/app',
  numberHint: (lo, hi, integer) => {
    const what = integer ? 'A whole number' : 'A number'
    if (lo !== undefined && hi !== undefined) return `${what} from ${lo} to ${hi}`
    if (lo !== undefined) return `${what}, at least ${lo}`
    if (hi !== undefined) return `${what}, at most ${hi}`
    return integer ? 'A whole number' : ''
  },
  submit: 'Submit',
  submitting: 'Submitting…',
  cancel: 'Cancel',
  cancelTask: 'Cancel the task',
  cancelTaskConfirm: 'Cancel the task? The assistant stops and this question is no longer asked.',
  keepAnswering: 'Keep answering',
  unanswered: (ns: number[]) =>
    ns.length === 1 ? `1 unanswered: question ${ns[0]}` : `${ns.length} unanswered: questions ${ns.slice(0, -1).join(', ')} and ${ns[ns.length - 1]}`,
  other: 'Other',
  batchTitle: (n: number) => (n === 1 ? 'One question for you' : `${n} questions for you`),
  otherPlaceholder: 'Type another answer',
  preview: 'Preview',
  noPreview: 'This option has no preview',
  expiresAt: 'Expires at',
  toggleNeedsOne: 'Turn on at least one to submit',
  singleNeedsOne: 'Choose one',
  valueRequired: 'Please fill this in',
  questionNeedsAnswer: 'Please answer this question',
  receipt: 'Receipt',
  receiptAnswered: 'Submitted',
  receiptCancelled: 'Cancelled',
  receiptExpired: 'Expired',
  signed: 'Signed',
  signedHint: 'This receipt carries an Ed25519 signature: verify it with the server\'s public keys (/.well-known/luban/keys) or offline with luban verify',
  signature: 'Signature',
  copySignature: 'Copy signature',
  copied: 'Copied',
  downloadReceipt: 'Download receipt',
  answeredElsewhere: 'Answered in another window',
  cancelledElsewhere: 'Cancelled in another window',
  draftDiscarded: '; your unsent draft here was discarded',
  unsentDraft: 'Your unsent draft',
  answerNotTaken: '; your answer was not taken',
  waitingFor: (names: string[], approvals: number, quorum: number) =>
    `waiting for ${names.join(', ')}${quorum > 1 ? ` (${approvals} of ${quorum} approved)` : ''}`,
  yourAnswer: 'Your answer',
  submittedAt: 'Submitted at',
  cancelledAt: 'Cancelled at',
  expiredAt: 'Expired at',
  selected: 'Chosen',
  nothingSelected: '(none)',
  continuing: 'Continuing…',
  runCompleted: 'Task completed',
  runCancelled: 'Task cancelled',
  runExpired: 'Task stopped: timed out',
  runFailed: 'Task failed',
  notResumable: 'The server restarted; please start the task again',
  payloadTooLarge: 'Too long; shorten it and submit again',
  retry: 'Retry',
  errNetwork: 'Cannot reach the server; your input is kept, you can retry',
  errServer: 'The server failed; your input is kept, you can retry',
  errTimeout: 'The request timed out; your input is kept, you can retry',
  errInvalidRequest: 'The request was malformed (page and server versions differ?)',
  errUnauthorized: 'Not signed in or the sign-in expired; open the link with the token again',
  interactionGone: 'This question no longer exists (it may have been deleted); it cannot be answered',
  notAssignee: 'This question is not assigned to you: only the people it waits for can answer it',
  alreadyDecided: 'You already decided on this approval',
  sessionGone: 'This session does not exist or was deleted',
  runInProgress: 'A task is still running; please wait',
  interactionPending: 'A question is waiting for your answer; answer it first',
  streamLost: 'Connection lost and could not be restored; reload the page',
}

/** Lang is a supported language: Chinese or English. */
export type Lang = 'zh' | 'en'

/** cardDicts maps each language to the cards' strings. */
export const cardDicts: Record<Lang, Dict> = { zh, en }

/** LangContext carries the current language; the default is Chinese. */
export const LangContext = createContext<Lang>('zh')

/** useT returns the cards' strings in the current language. */
export function useT(): Dict {
  return cardDicts[useContext(LangContext)]
}

/** useLang returns the current language (for date formatting). */
export function useLang(): Lang {
  return useContext(LangContext)
}

/** formatTime renders an RFC 3339 time in the given language; '' stays ''. */
export function formatTime(iso: string | undefined, lang: Lang): string {
  if (!iso) return ''
  const d = new Date(iso)
  if (Number.isNaN(d.getTime())) return iso
  return d.toLocaleString(lang === 'zh' ? 'zh-CN' : 'en-US', { hour12: false })
}

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR

/**
 * relativeTime words how long ago an RFC 3339 time was, the same in every
 * list of the page (sessions, inbox) and in `luban chat` (docs/design.md
 * §24 "Times"): under a minute (or in the future) 刚刚 / just now; then
 * whole minutes, hours, days by Intl.RelativeTimeFormat with numeric
 * "always" (3分钟前 / 3 minutes ago, 1小时前 / 1 hour ago, 6天前 / 6 days
 * ago); from 7 days on the local date as YYYY-MM-DD. '' stays ''; a time
 * that does not parse is shown as sent.
 */
export function relativeTime(iso: string | undefined, lang: Lang, now = Date.now()): string {
  if (!iso) return ''
  const t = new Date(iso).getTime()
  if (Number.isNaN(t)) return iso
  const ago = now - t
  if (ago < MINUTE) return lang === 'zh' ? '刚刚' : 'just now'
  const rtf = new Intl.RelativeTimeFormat(lang === 'zh' ? 'zh-CN' : 'en-US', { numeric: 'always' })
  if (ago < HOUR) return rtf.format(-Math.floor(ago / MINUTE), 'minute')
  if (ago < DAY) return rtf.format(-Math.floor(ago / HOUR), 'hour')
  if (ago < 7 * DAY) return rtf.format(-Math.floor(ago / DAY), 'day')
  const d = new Date(t)
  return `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`
}

/** useNow is the current time in ms, renewed every everyMs (a minute by default) while mounted. */
export function useNow(everyMs = MINUTE): number {
  const [now, setNow] = useState(() => Date.now())
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), everyMs)
    return () => clearInterval(id)
  }, [everyMs])
  return now
}

/**
 * RelativeTime is a <time> worded by relativeTime, its exact local time
 * (formatTime) as the tooltip.
 */
export function RelativeTime({ iso, lang, now, testId }: { iso: string | undefined; lang: Lang; now: number; testId?: string }) {
  if (!iso) return null
  return (
    <time dateTime={iso} title={formatTime(iso, lang)} data-testid={testId}>
      {relativeTime(iso, lang, now)}
    </time>
  )
}
