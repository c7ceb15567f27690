// Package store hides luban's database behind one interface: sessions, runs,
// messages, interactions (pending questions), the per-session event log, the
// audit trail and the trace. Drivers live in sub-packages (store/sqlite, and
// later store/postgres); store/storetest is the conformance suite every driver
// runs.
//
// Rules every driver follows (docs/design.md §4; SQL lives only under store/):
//   - every state change is one conditional write that reports whether it won
//     (for example InteractionResolve updates only a row still 'pending');
//   - events appended inside InTx reach subscribers only after the commit
//     ("persist first, then emit");
//   - at most one tool result per tool call and one interaction per tool call,
//     enforced by unique indexes, so a retried step can never write twice.
package store

import (
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors. Drivers wrap them with %w.
var (
	// ErrNotFound: the row does not exist.
	ErrNotFound = errors.New("store: not found")
	// ErrRunActive: the session already has a run in running or waiting_input
	// (docs/design.md §4 "one active run per session").
	ErrRunActive = errors.New("store: session has an active run")
	// ErrDuplicate: a unique row (tool result, interaction for a tool call)
	// already exists.
	ErrDuplicate = errors.New("store: duplicate")
	// ErrLost: a conditional write that had to win (MustWin) lost; the
	// transaction it was made in rolled back.
	ErrLost = errors.New("store: a conditional write lost")
)

// RunStatus is a run's state (docs/design.md §4 state machine).
type RunStatus string

// Run states.
const (
	// RunRunning: a process drives the run (model call or tool execution).
	RunRunning RunStatus = "running"
	// RunWaitingInput: paused on a pending interaction; no goroutine holds it.
	RunWaitingInput RunStatus = "waiting_input"
	// RunCompleted: the model ended its turn without tool calls.
	RunCompleted RunStatus = "completed"
	// RunCancelled: the user cancelled; no further model call is made.
	RunCancelled RunStatus = "cancelled"
	// RunExpired: a pending question passed its expiresAt.
	RunExpired RunStatus = "expired"
	// RunFailed: the run stopped on an error (an error event says which).
	RunFailed RunStatus = "failed"
)

// Terminal reports whether s is an end state.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunCancelled || s == RunExpired || s == RunFailed
}

// Session is a conversation owned by one principal.
type Session struct {
	ID        string
	Owner     string
	Title     string
	Status    string // the latest run's status, or "idle"
	LastSeq   int64  // the last event sequence number used
	Agent     string // the agent its runs use (docs/design.md §9); "" for the default agent
	CreatedAt time.Time
	// UpdatedAt is when the session's last run started, or its status
	// was set (SessionSetStatus), or it was created: a run's pause, resume
	// and end change its Status, not UpdatedAt. GET /api/sessions orders
	// by it (docs/design.md §33); retention counts from the last run's end.
	UpdatedAt time.Time
}

// Run is one agent run inside a session.
type Run struct {
	ID            string
	SessionID     string
	Agent         string
	Status        RunStatus
	Steps         int // model calls made
	InvalidStreak int // consecutive model turns with invalid ask arguments
	Error         string
	LeaseOwner    string
	LeaseUntil    time.Time
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Message is one stored conversation message. Tool results carry ParentID
// (the assistant message) and CallIndex (position of the call in it).
type Message struct {
	Seq       int64
	ID        string
	SessionID string
	RunID     string
	Role      string
	Content   string
	ToolCalls json.RawMessage // JSON array of model.ToolCall, assistant only
	// Calls is ToolCalls decoded, once, by the driver that read or wrote
	// the row (nil when there are none or they are not a JSON array).
	Calls      []ToolCall
	ToolCallID string
	Name       string
	IsError    bool
	Metadata   json.RawMessage
	ParentID   string
	CallIndex  int
	CreatedAt  time.Time
}

// ToolCall is one tool call of an assistant message, as model.ToolCall
// encodes it (the store imports nothing of luban).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// DecodeCalls decodes a message's tool_calls column (nil for none or for
// bytes that are not a JSON array of calls): what a driver fills
// Message.Calls with.
func DecodeCalls(raw json.RawMessage) []ToolCall {
	if len(raw) == 0 {
		return nil
	}
	if calls, ok := decodeCallsFast(raw); ok {
		return calls
	}
	return decodeCallsJSON(raw)
}

// Interaction is one question put to a person (docs/design.md §A.2 pendingInteraction).
type Interaction struct {
	ID         string
	SessionID  string
	RunID      string
	ToolCallID string
	Tool       string
	Request    json.RawMessage // api.InputRequest without resumable
	Status     string          // pending | answered | cancelled | expired
	Answer     json.RawMessage // api.Answer, when resolved
	CreatedAt  time.Time
	ExpiresAt  time.Time
	ResolvedAt time.Time
	// ReceiptJWS is the signature of its receipt (api.Receipt.Signature,
	// docs/design.md §17), "" while pending or when resolved unsigned.
	ReceiptJWS string
	// Route is the settings of the route that assigned the interaction
	// (docs/design.md §16), as the agent stored them (JSON); nil when no
	// route matched: the session's owner is then its only assignee and
	// there are no Assignee rows.
	Route json.RawMessage
	// DecidedBy names who resolved it and, for a quorum, every decision
	// (the agent's JSON, InteractionResolveParams.DecidedBy); nil when
	// nobody is named.
	DecidedBy json.RawMessage
}

// Assignee is one person who may answer an interaction (docs/design.md
// §16): Via says how they came to (AssigneeRoute, AssigneeEscalation,
// AssigneeDelegate); Decision is their recorded approval decision
// ("approve" or "reject"; "" while they have not decided) of a quorum
// approval, DecidedAt when.
type Assignee struct {
	RequestID string
	Person    string
	Via       string
	Decision  string
	AddedAt   time.Time
	DecidedAt time.Time
}

// How an assignee came to answer (Assignee.Via).
const (
	AssigneeRoute      = "route"
	AssigneeEscalation = "escalation"
	AssigneeDelegate   = "delegate"
)

// Event is one entry of a session's event log; Seq is the SSE id.
type Event struct {
	SessionID string
	Seq       int64
	Name      string
	Data      json.RawMessage
	// RunID is the run the event names (EventAppendParams.RunID), "" for
	// none: readers filter a session's log by run without decoding Data
	// (docs/design.md §3).
	RunID     string
	CreatedAt time.Time
}

// AuditEntry is one line of an interaction's life (docs/design.md §5).
type AuditEntry struct {
	ID         int64
	SessionID  string
	RequestID  string
	ToolCallID string
	RunID      string
	Action     string // requested | answered | cancelled | expired | rejected
	Reason     string // duplicate | session_mismatch | expired | invalid_answer | ""
	Summary    json.RawMessage
	At         time.Time
}

// TraceEntry is one thing that happened in a run, for GET .../trace.
type TraceEntry struct {
	ID        int64
	SessionID string
	RunID     string
	Kind      string // model_call | tool_call | tool_result | interaction | tool_started
	Data      json.RawMessage
	At        time.Time
}
