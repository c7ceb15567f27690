// luban-react: render luban's questions in any React app. The wire types
// generated from the Go package api, the HTTP/SSE client, the question,
// approval and receipt cards, and useLubanSession (README.md).
export type * from './types'
export { eventNames } from './types'
export { Api, ApiError, StreamLostError, type ApiOptions, type ChatBody, type ContinueBody, type StreamHandlers } from './api'
export { Deduper, isInputRequest, isTerminal, readSSE, SSEParser, type SSEEvent } from './sse'
export { BIDI_CONTROLS, visible } from './visible'
export { cardDicts, formatTime, LangContext, useLang, useT, type Dict as CardDict, type Lang } from './i18n'
export { expiredReceipt, failCard, newCard, resolvedCard, type CardItem, type CardPhase } from './card'
export { UserInputCard, type CardProps } from './components/UserInputCard'
export { AskUserForm } from './components/AskUserForm'
export { ApprovalForm, ApprovalReceiptView } from './components/ApprovalCard'
export { ReceiptView, runText } from './components/Receipt'
export { JsonView } from './components/JsonView'
export { approvalText, isApproval, parseArguments, type ApprovalAnswer, type ApprovalReceipt, type ApprovalRequest, type JsonSchema } from './components/approval'
export { useLubanSession, type Connection, type LubanSession, type LubanSessionOptions } from './useLubanSession'
