// Wire types of the luban HTTP/SSE contract (docs/design.md §3, §A.2–§A.3,
// AgentScope AskUser). They are generated from the Go package api into
// types.gen.ts (`go generate ./api`; a Go test fails when that file is
// stale), so the page and the server cannot drift. This file only re-exports
// them, under the names the page has always used where those differ.
export type * from './types.gen'
export { eventNames } from './types.gen'
import type { InteractionView, MessageView, Option, PendingResponse, SessionView, Status } from './types.gen'

/** One choice of an ask_user form; `id` is the stable submitted value. */
export type InputOption = Option

/** One row of GET /api/sessions. */
export type SessionSummary = SessionView

/** One transcript message of GET /api/sessions/{id}. */
export type Message = MessageView

/** One interaction of a transcript. */
export type Interaction = InteractionView

/** GET /api/interactions/pending. */
export type Pending = PendingResponse

/** How a resolved request ended: a Receipt's status is never pending. */
export type ReceiptStatus = Exclude<Status, 'pending'>
