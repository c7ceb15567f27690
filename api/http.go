package api

import (
	"encoding/json"
	"time"
)

// ChatRequest is the body of POST /api/chat: Message starts a run in
// session SessionID, or in a new session when SessionID is empty (docs/design.md
// §3). The answer is the run's SSE stream until it pauses or ends.
type ChatRequest struct {
	SessionID string `json:"sessionId,omitempty"`
	Message   string `json:"message"`
	// Agent names the agent of a new session (GET /api/agents; docs/design.md §9);
	// empty means the default agent. A session keeps its agent.
	Agent string `json:"agent,omitempty"`
}

// ContinueRequest is the body of POST /api/chat/continue (docs/design.md §A.2):
// the answer to request RequestID of session SessionID, plus Answers for
// AskUser. Cancelled true declines and nothing else counts (a cancel is
// never validated against the form). Only SessionID and RequestID are
// required; every other field may be absent (an answer sends what its form
// needs).
type ContinueRequest struct {
	SessionID   string           `json:"sessionId"`
	RequestID   string           `json:"requestId"`
	Selections  []string         `json:"selections,omitempty"`
	CustomInput string           `json:"customInput,omitempty"`
	Cancelled   bool             `json:"cancelled,omitempty"`
	Answers     []QuestionAnswer `json:"answers,omitempty"`
	// Decision, Arguments, Message and Remember answer an approval
	// (docs/design.md §10) instead of the ask fields: approve, edit (Arguments, a
	// JSON object, replaces the model's) or reject (with an optional
	// Message); Remember "session" approves later calls of the same tool in
	// the session. Cancelled true still cancels.
	Decision  Decision        `json:"decision,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Message   string          `json:"message,omitempty"`
	Remember  string          `json:"remember,omitempty"`
	// Content is the values of a form elicitation answered with Decision
	// accept (docs/design.md §11): a JSON object keyed by field name, validated
	// against the request's requestedSchema (422 invalid_answer with one
	// FieldError per field, Field "content.<name>", otherwise). A url
	// elicitation's accept and any decline carry none.
	Content json.RawMessage `json:"content,omitempty"`
}

// ContinueEntry is one answer of the batch form of POST
// /api/chat/continue (ContinueBatchRequest, docs/design.md §32): the
// request it answers and the fields of a single continue for that request,
// with the same meaning (ContinueRequest).
type ContinueEntry struct {
	RequestID   string           `json:"requestId"`
	Selections  []string         `json:"selections,omitempty"`
	CustomInput string           `json:"customInput,omitempty"`
	Cancelled   bool             `json:"cancelled,omitempty"`
	Answers     []QuestionAnswer `json:"answers,omitempty"`
	Decision    Decision         `json:"decision,omitempty"`
	Arguments   json.RawMessage  `json:"arguments,omitempty"`
	Message     string           `json:"message,omitempty"`
	Remember    string           `json:"remember,omitempty"`
	Content     json.RawMessage  `json:"content,omitempty"`
}

// Continue is the entry as the body of a single continue for its request.
func (e ContinueEntry) Continue(sessionID string) ContinueRequest {
	return ContinueRequest{SessionID: sessionID, RequestID: e.RequestID, Selections: e.Selections, CustomInput: e.CustomInput, Cancelled: e.Cancelled,
		Answers: e.Answers, Decision: e.Decision, Arguments: e.Arguments, Message: e.Message, Remember: e.Remember, Content: e.Content}
}

// ContinueBatchRequest is the batch form of POST /api/chat/continue
// (docs/design.md §32): several pending requests of the session answered
// at once, all or none. It has no top-level requestId; a body whose
// answers entries carry requestId is this form (ContinueRequest's answers
// are AskUser's, which never do). Every entry is validated as a single
// answer would be: one invalid entry is 422 invalid_answer whose details
// name it (answers[1].selections) and nothing changes; a request twice, or
// of another session, is 422; one no longer pending is 409 (410 expired)
// as for a single answer, and nothing changes.
type ContinueBatchRequest struct {
	SessionID string          `json:"sessionId"`
	Answers   []ContinueEntry `json:"answers"`
}

// ContinueAccepted is the 202 body of POST /api/chat/continue sent with
// Accept: application/json (and to an assignee who does not own the
// session, docs/design.md §16): the receipt at once, while the run
// continues without the caller. An approval recorded towards a quorum
// resolves nothing yet: Receipt is null and Pending is the request with
// its new waitingFor. Receipts are the receipts of every request the call
// resolved, in the order of its entries (docs/design.md §32: the batch
// form); Receipt is the first of them, for clients of the single form.
type ContinueAccepted struct {
	Receipt  *Receipt      `json:"receipt"`
	Receipts []*Receipt    `json:"receipts,omitempty"`
	Pending  *InputRequest `json:"pending,omitempty"`
}

// PendingResponse is GET /api/interactions/pending?sessionId=: what a
// refreshed page needs to restore its cards. Requests are every request of
// the session waiting for an answer, in call order (several when one model
// message asked several at once, docs/design.md §32; [] when none);
// Pending is the first of them and Last the latest receipt, each null when
// there is none.
type PendingResponse struct {
	Pending  *InputRequest   `json:"pending"`
	Requests []*InputRequest `json:"requests"`
	Last     *Receipt        `json:"last"`
}

// MarshalJSON spells nil Requests as [] (no request pending).
func (p PendingResponse) MarshalJSON() ([]byte, error) {
	type plain PendingResponse
	if p.Requests == nil {
		p.Requests = []*InputRequest{}
	}
	return json.Marshal(plain(p))
}

// SessionView is a session in GET /api/sessions and GET /api/sessions/{id}.
// Status is its latest run's RunStatus, or "idle" before the first run.
type SessionView struct {
	ID        string    `json:"id"`
	Title     string    `json:"title"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when the session's last run started (or the session was
	// made, before its first run); a pause, a resume and the run's end
	// leave it (docs/design.md §33).
	UpdatedAt time.Time `json:"updatedAt"`
	// Agent is the name of the agent the session keeps (docs/design.md §9).
	Agent string `json:"agent"`
}

// SessionList is GET /api/sessions: the caller's sessions, most recently
// updated first. Next is the cursor of the following page (pass it as
// before=), omitted on the last page.
type SessionList struct {
	Sessions []SessionView `json:"sessions"`
	Next     string        `json:"next,omitempty"`
}

// ToolCall is one tool call inside an assistant message. Arguments is the
// JSON text exactly as the model sent it.
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// MessageView is one message of a transcript. An assistant message may carry
// ToolCalls; a tool message is the ToolResult of ToolCallID (tool Name),
// with IsError and, for AskUser, Metadata ({"answers": [...]}).
type MessageView struct {
	ID         string          `json:"id"`
	RunID      string          `json:"runId"`
	Role       Role            `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  []ToolCall      `json:"toolCalls,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
	Name       string          `json:"name,omitempty"`
	IsError    bool            `json:"isError,omitempty"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
	// Reasoning is the readable reasoning of an assistant message, as in
	// MessageEvent; never part of Content. The provider's own data
	// (signatures) stays on the server.
	Reasoning string `json:"reasoning,omitempty"`
	// Stopped marks an assistant reply the user's cancel cut short, as in
	// MessageEvent.
	Stopped   bool      `json:"stopped,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// InteractionView is one interaction of a transcript: the request as it was
// asked, its Status, and its Receipt once resolved (null while pending).
type InteractionView struct {
	Request InputRequest `json:"request"`
	Status  Status       `json:"status"`
	Receipt *Receipt     `json:"receipt"`
}

// Transcript is GET /api/sessions/{id}: the session, its messages (tool
// calls and results included) and its interactions with their receipts.
type Transcript struct {
	Session SessionView `json:"session"`
	// LastEventID is the session's last event id when the transcript was
	// read: a client resumes the event stream after it (duplicates between
	// the two are the same message ids, so a client can drop them).
	LastEventID  int64             `json:"lastEventId"`
	Messages     []MessageView     `json:"messages"`
	Interactions []InteractionView `json:"interactions"`
	// Errors are the failed runs of the session, oldest first: what the
	// `error` event said live, kept so a reload shows it where it happened
	// (after the run's last message). Empty when no run failed.
	Errors []RunErrorView `json:"errors"`
}

// RunErrorView is why one run failed: the stable Code and the Message of its
// `error` event (ErrorEvent), the RunID it ended and when (At). A client
// words the error by Code (model_error, internal_error, …) and may show
// Message as the detail; the run's first user message is the one to send
// again for a retry (docs/design.md "Errors in the transcript").
type RunErrorView struct {
	RunID   string    `json:"runId"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// CancelResponse is POST /api/sessions/{id}/cancel: the session's resulting
// status, "cancelled", or the status it already had when nothing was active.
type CancelResponse struct {
	Status string `json:"status"`
}

// TraceView is GET /api/sessions/{id}/trace: what happened, oldest first:
// model calls (provider, tool names sent, message count, latency, retries,
// finish reason), tool calls, ToolResults and the interaction lifecycle,
// plus the audit entries (docs/design.md §5).
type TraceView struct {
	Trace []TraceItem `json:"trace"`
	Audit []AuditItem `json:"audit"`
}

// TraceItem is one trace entry: Kind names it (model_call, tool_started,
// tool_call, tool_result, interaction) and Data is its kind's JSON object.
type TraceItem struct {
	Kind  string          `json:"kind"`
	RunID string          `json:"runId"`
	At    time.Time       `json:"at"`
	Data  json.RawMessage `json:"data"`
}

// AuditItem is one audit entry (docs/design.md §5): Action is requested, answered,
// cancelled, expired or rejected, Reason says why a rejection happened
// (duplicate, session_mismatch, expired, invalid_answer). Free text appears
// only as its length and hash inside Summary.
type AuditItem struct {
	RequestID  string          `json:"requestId"`
	ToolCallID string          `json:"toolCallId"`
	RunID      string          `json:"runId"`
	Action     string          `json:"action"`
	Reason     string          `json:"reason,omitempty"`
	Summary    json.RawMessage `json:"summary,omitempty"`
	At         time.Time       `json:"at"`
}

// Info is GET /api/info: the model's name as people should see it (a
// scripted model says so) and the ask tools the default agent offers.
type Info struct {
	Model    string   `json:"model"`
	AskTools []string `json:"askTools"`
}

// AgentView is one agent of GET /api/agents (docs/design.md §9): its name (the
// agent of POST /api/chat), its model as people should see it, the tools it
// offers the model (allowlist order, ask tools included) and its ask tools.
type AgentView struct {
	Name     string   `json:"name"`
	Model    string   `json:"model"`
	Tools    []string `json:"tools"`
	AskTools []string `json:"askTools"`
}

// MCPAuthorization is an MCP server that waits for a person to authorize
// luban at its OAuth authorization server (docs/design.md §11, "OAuth"):
// Server is its name in mcp.servers, Since when it started waiting,
// ExpiresAt when this round's authorization URL expires (a new round
// starts on the next connection attempt), and ConnectURL the page's link
// (GET, same origin) that sends the caller's browser to the authorization
// server.
type MCPAuthorization struct {
	Server     string    `json:"server"`
	Since      time.Time `json:"since"`
	ExpiresAt  time.Time `json:"expiresAt"`
	ConnectURL string    `json:"connectUrl"`
}

// MCPAuthorizationList is GET /api/mcp/authorizations: the MCP servers
// waiting for authorization that the caller may authorize, in config order.
type MCPAuthorizationList struct {
	Authorizations []MCPAuthorization `json:"authorizations"`
}

// AgentList is GET /api/agents: the configured agents, the default first.
type AgentList struct {
	Agents []AgentView `json:"agents"`
}
