package api

import "time"

// InboxItem is one entry of GET /api/interactions (docs/design.md §12): the request
// as it was asked (the embedded InputRequest, flattened), its Status, its
// Receipt once resolved (null while pending), the title of its session and
// the agent of its run ("" when unknown).
type InboxItem struct {
	InputRequest
	Status       Status   `json:"status"`
	Receipt      *Receipt `json:"receipt"`
	SessionTitle string   `json:"sessionTitle"`
	Agent        string   `json:"agent"`
}

// InteractionList is GET /api/interactions: the caller's interactions across
// all its sessions. With status=pending they are the open requests, oldest
// first; with status=resolved the receipts, most recently resolved first.
// Next is the cursor of the following page (pass it as after= for pending,
// before= for resolved), omitted on the last page.
type InteractionList struct {
	Interactions []InboxItem `json:"interactions"`
	Next         string      `json:"next,omitempty"`
}

// InboxStatus is the status= parameter of GET /api/interactions.
type InboxStatus string

// Inbox statuses: pending requests or resolved ones (answered, cancelled,
// expired, not_resumable).
const (
	InboxPending  InboxStatus = "pending"
	InboxResolved InboxStatus = "resolved"
)

// MaxPageLimit bounds limit= of the paged lists (GET /api/interactions,
// GET /api/sessions); DefaultPageLimit is used when limit= is absent.
const (
	MaxPageLimit     = 500
	DefaultPageLimit = 100
)

// PrincipalEvents are the events of GET /api/events, the caller's own
// stream across its sessions (docs/design.md §12): each is the session event of the
// same name with the same payload, plus "sessionId" when the payload has
// none (InputRequest has it already), and with the caller's feed sequence
// number as its SSE id (resume with Last-Event-ID).
var PrincipalEvents = []string{EventUserInputRequired, EventUserInputResolved, EventUserInputReminder, EventDone}

// InputReminder is the payload of "user_input_reminder" (docs/design.md
// §16 "Deadlines"): pending request RequestID still waits for an answer and
// Notify are the people (person ids, or token principals without people:)
// to tell now, by the channels they have (feed, webhook, mail, Slack).
// Reason says why: ReminderReminder, a route's remind: came due (Notify:
// the assignees); ReminderEscalation, its escalate: came due (Notify: the
// escalation targets, who may answer from now on); ReminderDelegation, an
// assignee (From) handed the question to Notify with Message. ExpiresAt is
// when the question times out. The question itself is the request's
// user_input_required event (or GET /api/interactions).
type InputReminder struct {
	RequestID string    `json:"requestId"`
	SessionID string    `json:"sessionId"`
	RunID     string    `json:"runId"`
	Reason    string    `json:"reason"`
	Notify    []string  `json:"notify"`
	From      string    `json:"from,omitempty"`
	Message   string    `json:"message,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Decisions of a timeout (docs/design.md §16 "Deadlines"): a receipt with
// status expired names in Decision the action its route's onTimeout took,
// DecisionApprove or DecisionReject for an approval, DecisionDecline for an
// elicitation, DecisionDefault for a question answered with its
// recommended options, DecisionReject for one that got none, DecisionCancel
// when the run was ended. A question no route takes expires with no
// decision (its run ends).
const (
	DecisionDefault Decision = "default"
	DecisionCancel  Decision = "cancel"
)

// DelegateRequest is the body of POST /api/interactions/{id}/delegate
// (docs/design.md §16): To is the person (an id of people:) the question is
// handed to; Message, at most 2,000 characters, is for them.
type DelegateRequest struct {
	To      string `json:"to"`
	Message string `json:"message,omitempty"`
}

// DelegateResult is the answer of a delegate: who handed request RequestID
// to whom, and who may answer it now.
type DelegateResult struct {
	RequestID string  `json:"requestId"`
	From      Actor   `json:"from"`
	To        Actor   `json:"to"`
	Assignees []Actor `json:"assignees"`
}

// MaxDelegateMessage bounds DelegateRequest.Message, in characters.
const MaxDelegateMessage = 2000

// InputReminder reasons.
const (
	ReminderReminder   = "reminder"
	ReminderEscalation = "escalation"
	ReminderDelegation = "delegation"
)

// Webhook event types (docs/design.md §12). They are a contract: never rename them.
const (
	WebhookInteractionRequested = "interaction.requested"
	WebhookInteractionResolved  = "interaction.resolved"
	WebhookRunFinished          = "run.finished"
	WebhookInteractionReminder  = "interaction.reminder"
)

// WebhookReminder is the data of interaction.reminder: a user_input_reminder
// (Reason, Notify, From, Message) with the request as asked, like
// interaction.requested's.
type WebhookReminder struct {
	SessionID    string       `json:"sessionId"`
	SessionTitle string       `json:"sessionTitle"`
	Reason       string       `json:"reason"`
	Notify       []string     `json:"notify"`
	From         string       `json:"from,omitempty"`
	Message      string       `json:"message,omitempty"`
	Request      InputRequest `json:"request"`
}

// WebhookMessage is the body of every webhook request (Standard Webhooks):
// Type is one of the Webhook* types, Timestamp when the event happened and
// Data one of WebhookRequested, WebhookResolved, WebhookFinished.
type WebhookMessage struct {
	Type      string    `json:"type"`
	Timestamp time.Time `json:"timestamp"`
	Data      any       `json:"data"`
}

// WebhookRequested is the data of interaction.requested: the request as
// asked (questions are sent; they are the model's text) and its session.
type WebhookRequested struct {
	SessionID    string       `json:"sessionId"`
	SessionTitle string       `json:"sessionTitle"`
	Request      InputRequest `json:"request"`
}

// WebhookResolved is the data of interaction.resolved: how request
// RequestID ended, with the free text of the answer replaced by its length
// (docs/design.md §12: answers' free text is never sent).
type WebhookResolved struct {
	SessionID string         `json:"sessionId"`
	Receipt   WebhookReceipt `json:"receipt"`
}

// WebhookReceipt is a Receipt without free text: Selections are option ids
// (not free text); CustomInputLength is the length of customInput in
// characters (Unicode code points); each AskUser answer keeps its question
// and selected labels and gives the length of its "other" text.
type WebhookReceipt struct {
	RequestID         string          `json:"requestId"`
	ToolCallID        string          `json:"toolCallId"`
	Status            Status          `json:"status"`
	Selections        []string        `json:"selections"`
	CustomInputLength int             `json:"customInputLength"`
	Answers           []WebhookAnswer `json:"answers,omitempty"`
	ResolvedAt        time.Time       `json:"resolvedAt"`
	// Signature is the receipt's signature (Receipt.Signature): its
	// ReceiptClaims hold no free text either.
	Signature string `json:"signature,omitempty"`
}

// WebhookAnswer is one AskUser answer without its free text.
type WebhookAnswer struct {
	Question    string   `json:"question"`
	Selected    []string `json:"selected"`
	OtherLength int      `json:"otherLength"`
}

// WebhookFinished is the data of run.finished: run RunID of session
// SessionID ended with Status (completed, cancelled, expired or failed).
type WebhookFinished struct {
	SessionID string    `json:"sessionId"`
	RunID     string    `json:"runId"`
	Status    RunStatus `json:"status"`
}
