// Wire types of the luban HTTP/SSE contract (DESIGN §3, seed 000 §2–§3,
// AgentScope AskUser). They mirror askuser/types.go; do not rename fields.

/** The modes of ask_user (seed 000 §1) plus "questions" for AskUser. */
export type Mode =
  | 'single'
  | 'multiple'
  | 'text'
  | 'number'
  | 'date'
  | 'directory'
  | 'toggle'
  | 'questions'

/** One choice of an ask_user form; `id` is the stable submitted value. */
export type InputOption = {
  id: string
  label: string
  description?: string
  recommended?: boolean
}

/** One choice of an AskUser question; `preview` only on single-select. */
export type QuestionOption = {
  label: string
  description: string
  preview?: string
}

/** One AskUser question (1–4 per request). */
export type Question = {
  question: string
  header: string
  context?: string
  options: QuestionOption[]
  multi_select: boolean
}

/** Payload of `user_input_required` and of pending.pending. */
export type InputRequest = {
  id: string
  toolCallId: string
  sessionId?: string
  runId?: string
  tool?: 'ask_user' | 'AskUser'
  title: string
  description?: string
  mode: Mode
  options?: InputOption[]
  allowCustom?: boolean
  submitLabel?: string
  questions?: Question[]
  createdAt?: string
  expiresAt?: string
  resumable?: boolean
}

/** The answer to one AskUser question: chosen labels plus "Other" text. */
export type QuestionAnswer = {
  question: string
  selected: string[]
  other: string
}

/** How a request was resolved. */
export type ReceiptStatus = 'answered' | 'cancelled' | 'expired'

/** Read-only record of a resolved request (`user_input_resolved`). */
export type Receipt = {
  requestId: string
  toolCallId: string
  status: ReceiptStatus
  selections: string[]
  customInput: string
  answers?: QuestionAnswer[]
  resolvedAt: string
}

/** Body of POST /api/chat/continue less sessionId and requestId. */
export type Answer = {
  selections: string[]
  customInput: string
  cancelled: boolean
  answers?: QuestionAnswer[]
}

/** One field message of a 422 `invalid_answer`. */
export type FieldError = { field: string; message: string }

/** GET /api/info. */
export type Info = { model: string; askTools: string[] }

/** One row of GET /api/sessions. */
export type SessionSummary = {
  id: string
  title: string
  status: string
  updatedAt: string
}

/** A tool call inside an assistant message. */
export type ToolCall = { id: string; name: string; arguments: unknown }

/** One transcript message of GET /api/sessions/{id}. */
export type Message = {
  id: string
  runId: string
  role: 'user' | 'assistant' | 'tool'
  content: string
  toolCalls?: ToolCall[]
  toolCallId?: string
  name?: string
  isError?: boolean
  createdAt: string
}

/** One interaction of a transcript. */
export type Interaction = {
  request: InputRequest
  status: 'pending' | 'answered' | 'cancelled' | 'expired'
  receipt: Receipt | null
}

/** GET /api/sessions/{id}. */
export type Transcript = {
  session: SessionSummary & { createdAt: string }
  /**
   * lastEventId is the session's last event id when the transcript was read;
   * a follow resumes the event stream after it (Last-Event-ID). Older
   * servers leave it out, and the page then replays from the first event.
   */
  lastEventId?: number
  messages: Message[]
  interactions: Interaction[]
}

/** GET /api/interactions/pending. */
export type Pending = { pending: InputRequest | null; last: Receipt | null }

/** Final run statuses carried by `done`. */
export type RunStatus = 'completed' | 'cancelled' | 'expired' | 'failed'
