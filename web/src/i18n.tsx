// Every string the page shows, in one place: Chinese by default, English by
// the header switch (issue 4 "Safety and access"). Strings that came from a
// model are never here; they are rendered as text where they are used.
import { useContext } from 'react'
import { cardDicts, LangContext, type Lang } from 'luban-react'

export { formatTime, LangContext, RelativeTime, relativeTime, useLang, useNow, type Lang } from 'luban-react'

const zh = {
  ...cardDicts.zh,
  themeSystem: '主题：跟随系统',
  themeLight: '主题：浅色',
  themeDark: '主题：深色',
  themeNext: (next: string) => `点击切换为${next}`,
  themeNameSystem: '跟随系统',
  themeNameLight: '浅色',
  themeNameDark: '深色',
  searchSessions: '搜索会话标题',
  noMatch: '没有匹配的会话',
  rename: '重命名',
  renameLabel: '新标题',
  save: '保存',
  delete: '删除',
  deleteConfirm: '删除这个会话及其全部记录？',
  deleteRunning: '任务仍在运行：停止任务并删除？',
  deleteWaiting: '有问题在等待回答：取消这个问题并删除会话及其全部记录？',
  deleteWaitingAction: '取消问题并删除',
  stopAndDelete: '停止并删除',
  copy: '复制',
  copied: '已复制',
  copyFailed: '复制失败',
  table: '表格',
  taskDone: '已完成',
  taskOpen: '未完成',
  appTitle: 'luban',
  model: '模型',
  newSession: '新会话',
  sessions: '会话',
  noSessions: '还没有会话',
  language: 'English',
  languageLabel: '切换语言',
  messagePlaceholder: '输入消息，Enter 发送，Shift+Enter 换行',
  messageLabel: '消息',
  send: '发送',
  stop: '停止',
  running: '运行中…',
  unauthorized: '未登录：请打开服务器启动时打印的网址（带 token 的链接）。',
  signInTitle: '请登录',
  tokenRejectedTitle: '令牌无效',
  tokenRejected: '服务器不接受这个链接里的令牌：它可能输错了、已过期，或来自另一台服务器。',
  signInHow: '请打开 luban serve 启动时在终端里打印的网址（形如 http://127.0.0.1:8080/?token=…），或向运行服务器的人要一个新链接。',
  untitledSession: '未命名会话',
  loadingTitle: '正在加载会话…',
  loadFailed: '加载失败',
  questionHeading: '需要你回答的问题',
  questionNotFound: '找不到这个问题：它不存在，或属于另一个账号',
  askedBy: (client: string) => `由 ${client} 通过 MCP 提问`,
  openSession: '打开整个会话',
  toolCall: '工具调用',
  toolResult: '结果',
  toolError: '错误',
  toolRejected: '已拒绝',
  toolWaitingApproval: '等待批准',
  arguments: '参数',
  errorPrefix: '出错了',
  reconnecting: '连接中断，正在重新连接…',
  you: '你',
  assistant: '助手',
  reasoning: '思考过程',
  reasoningChars: (n: number) => `${n} 字`,
  statusWaitingInput: '等待回答',
  statusRunning: '运行中',
  statusCompleted: '已完成',
  statusCancelled: '已取消',
  statusExpired: '已超时',
  statusFailed: '失败',
  statusIdle: '空闲',
  agentPick: '智能体',
  agentLabel: '智能体',
  agentDefault: '默认',
  agentTools: '工具',
  composerWaiting: '请先回答上面的问题',
  composerWaitingApproval: '请先批准或拒绝上面的工具调用',
  composerWaitingApprovals: '请先批准或拒绝上面的这些工具调用',
  /** approveAllTitle heads the "Approve all" bar: n tool calls wait for approval. */
  approveAllTitle: (n: number) => `${n} 个工具调用在等待批准`,
  approveAll: (n: number) => `全部批准（${n} 个）`,
  composerGone: '这个会话不存在，无法发送；请新建会话',
  composerTooLong: (max?: number) => (max ? `消息太长了，最多 ${max.toLocaleString('zh-CN')} 个字；请删减后再发送` : '消息太长了；请删减后再发送'),
  stoppedReply: '（已停止）',
  runErrorModel: '模型调用失败',
  runErrorInternal: '服务器内部错误，任务已停止',
  runErrorInvalidCalls: '模型多次给出无效的提问参数，任务已停止',
  runErrorAgentGone: '这个会话的智能体已不存在',
  runErrorMaxSteps: '任务达到了模型调用次数上限',
  welcomeTitle: '欢迎使用 luban',
  welcomeBody:
    'luban 是一个智能体服务：它替你执行任务，遇到需要你决定的地方会停下来，用一张问题卡片问你；你回答一次，它就带着你的答案继续。需要批准的工具（例如写文件）在运行前会先请你批准、修改参数或拒绝。刷新页面或服务重启后，未回答的问题仍在这里等你。',
  welcomeStart: '在下方输入消息开始。',
  /** welcomeWaiting: the Welcome screen's line when questions wait in other sessions. */
  welcomeWaiting: (n: number) => (n === 1 ? '有 1 个问题在等你回答' : `有 ${n} 个问题在等你回答`),
  welcomeWaitingOpen: '打开',
  welcomeDemo: '当前模型是脚本演示（{model}），它会依次展示每一种问题卡片：单选、多选、开关、文本、数字、日期、目录和批量提问，再转来一个 MCP 服务器的表单（luban 为演示启动的 demo 服务器），最后在同一条回复里请你批准两次写文件（luban-demo/deploy-plan.md 和 luban-demo/checklist.md），可以用“全部批准”一次批准。发送任意消息开始演示。',
}

/** Dict is the set of message keys; every language must define all of them. */
export type Dict = typeof zh

const en: Dict = {
  ...cardDicts.en,
  themeSystem: 'Theme: system',
  themeLight: 'Theme: light',
  themeDark: 'Theme: dark',
  themeNext: (next: string) => `Click for ${next}`,
  themeNameSystem: 'system',
  themeNameLight: 'light',
  themeNameDark: 'dark',
  searchSessions: 'Search session titles',
  noMatch: 'No session matches',
  rename: 'Rename',
  renameLabel: 'New title',
  save: 'Save',
  delete: 'Delete',
  deleteConfirm: 'Delete this session and all of its history?',
  deleteRunning: 'Its task is still running: stop it and delete?',
  deleteWaiting: 'A question waits for an answer: cancel it and delete the session and all of its history?',
  deleteWaitingAction: 'Cancel the question and delete',
  stopAndDelete: 'Stop and delete',
  copy: 'Copy',
  copied: 'Copied',
  copyFailed: 'Copy failed',
  table: 'Table',
  taskDone: 'Done',
  taskOpen: 'Not done',
  appTitle: 'luban',
  model: 'Model',
  newSession: 'New session',
  sessions: 'Sessions',
  noSessions: 'No sessions yet',
  language: '中文',
  languageLabel: 'Switch language',
  messagePlaceholder: 'Type a message; Enter sends, Shift+Enter adds a line',
  messageLabel: 'Message',
  send: 'Send',
  stop: 'Stop',
  running: 'Running…',
  unauthorized: 'Not signed in: open the URL printed by the server (the link with the token).',
  signInTitle: 'Please sign in',
  tokenRejectedTitle: 'Token rejected',
  tokenRejected: 'The server does not accept the token in this link: it may be mistyped, out of date, or from another server.',
  signInHow: 'Open the URL that luban serve printed in its terminal when it started (like http://127.0.0.1:8080/?token=…), or ask whoever runs the server for a new link.',
  untitledSession: 'Untitled session',
  loadingTitle: 'Loading the session…',
  loadFailed: 'Failed to load',
  questionHeading: 'A question for you',
  questionNotFound: 'This question is not found: it does not exist, or it belongs to another account',
  askedBy: (client: string) => `Asked by ${client} over MCP`,
  openSession: 'Open the whole session',
  toolCall: 'Tool call',
  toolResult: 'Result',
  toolError: 'Error',
  toolRejected: 'Rejected',
  toolWaitingApproval: 'Waiting for approval',
  arguments: 'Arguments',
  errorPrefix: 'Error',
  reconnecting: 'Connection lost; reconnecting…',
  you: 'You',
  assistant: 'Assistant',
  reasoning: 'Thinking',
  reasoningChars: (n: number) => `${n} characters`,
  statusWaitingInput: 'Waiting for answer',
  statusRunning: 'Running',
  statusCompleted: 'Completed',
  statusCancelled: 'Cancelled',
  statusExpired: 'Timed out',
  statusFailed: 'Failed',
  statusIdle: 'Idle',
  agentPick: 'Agent',
  agentLabel: 'Agent',
  agentDefault: 'default',
  agentTools: 'tools',
  composerWaiting: 'Answer the question above first',
  composerWaitingApproval: 'Approve or reject the tool call above first',
  composerWaitingApprovals: 'Approve or reject the tool calls above first',
  approveAllTitle: (n: number) => `${n} tool calls wait for your approval`,
  approveAll: (n: number) => `Approve all ${n}`,
  composerGone: 'This session does not exist, so nothing can be sent; start a new session',
  composerTooLong: (max?: number) => (max ? `The message is too long: at most ${max.toLocaleString('en-US')} characters; shorten it and send again` : 'The message is too long; shorten it and send again'),
  stoppedReply: '(stopped)',
  runErrorModel: 'The model call failed',
  runErrorInternal: 'Internal server error; the task stopped',
  runErrorInvalidCalls: 'The model sent invalid question arguments too often; the task stopped',
  runErrorAgentGone: "This session's agent no longer exists",
  runErrorMaxSteps: 'The task reached its limit of model calls',
  welcomeTitle: 'Welcome to luban',
  welcomeBody:
    'luban is an agent server: it works on your task and, where it needs your decision, pauses and asks you with a question card. You answer once and it continues with your answer. A tool that needs approval (writing a file, say) waits for you to approve, edit its arguments or reject it before it runs. A question still waits here after a page reload or a server restart.',
  welcomeStart: 'Type a message below to start.',
  welcomeWaiting: (n: number) => (n === 1 ? '1 question is waiting for your answer' : `${n} questions are waiting for your answer`),
  welcomeWaitingOpen: 'Open',
  welcomeDemo: 'The model is a scripted demo ({model}): it walks through every kind of question card: single and multiple choice, switches, text, number, date, directory and a batch of questions, then passes on the form of an MCP server (the demo server luban starts for it), and last it asks you to approve writing two files in one reply (luban-demo/deploy-plan.md and luban-demo/checklist.md), both at once with Approve all. Send any message to start the demo.',
}

/** dicts maps each language to its strings. */
export const dicts: Record<Lang, Dict> = { zh, en }

/** useT returns the strings of the current language. */
/** hostLabel names the MCP host that asked: its clientInfo name (or "MCP"
 * when it sent none) and version, as display text (docs/design.md §11). */
export function hostLabel(source: { client: string; clientVersion?: string }): string {
  const name = source.client || 'MCP'
  return source.clientVersion ? `${name} ${source.clientVersion}` : name
}

export function useT(): Dict {
  return dicts[useContext(LangContext)]
}

/**
 * statusText names a session status (docs/design.md §3 session statuses:
 * waiting_input, running, completed, cancelled, expired, failed, idle) in
 * the page language; an unknown status is shown as sent.
 */
export function statusText(t: Dict, status: string): string {
  switch (status) {
    case 'waiting_input':
      return t.statusWaitingInput
    case 'running':
      return t.statusRunning
    case 'completed':
      return t.statusCompleted
    case 'cancelled':
      return t.statusCancelled
    case 'expired':
      return t.statusExpired
    case 'failed':
      return t.statusFailed
    case 'idle':
      return t.statusIdle
    default:
      return status
  }
}
