package api

import (
	"encoding/json"
	"reflect"
)

// SSE event names (docs/design.md §3). Every event of a session's log is sent as
// "id: <seq>\nevent: <name>\ndata: <payload JSON>\n\n", where seq is the
// per-session sequence number a client resumes after with Last-Event-ID.
// They are a contract: never rename them.
const (
	EventSession           = "session"             // SessionEvent
	EventMessageDelta      = "message_delta"       // MessageDeltaEvent
	EventReasoningDelta    = "reasoning_delta"     // ReasoningDeltaEvent
	EventMessage           = "message"             // MessageEvent
	EventToolCall          = "tool_call"           // ToolCallEvent
	EventToolResult        = "tool_result"         // ToolResultEvent
	EventUserInputRequired = "user_input_required" // InputRequest
	EventUserInputResolved = "user_input_resolved" // Receipt
	EventUserInputReminder = "user_input_reminder" // InputReminder
	EventDone              = "done"                // DoneEvent
	EventError             = "error"               // ErrorEvent
)

// Events lists every SSE event name with a zero value of its payload type,
// in the order of docs/design.md §3. The TypeScript and OpenAPI generators read it,
// so an event added here is typed everywhere.
var Events = []struct {
	Name    string
	Payload any
}{
	{EventSession, SessionEvent{}},
	{EventMessageDelta, MessageDeltaEvent{}},
	{EventReasoningDelta, ReasoningDeltaEvent{}},
	{EventMessage, MessageEvent{}},
	{EventToolCall, ToolCallEvent{}},
	{EventToolResult, ToolResultEvent{}},
	{EventUserInputRequired, InputRequest{}},
	{EventUserInputResolved, Receipt{}},
	{EventUserInputReminder, InputReminder{}},
	{EventDone, DoneEvent{}},
	{EventError, ErrorEvent{}},
}

// NewEventPayload returns a pointer to a new zero payload of the event
// called name, ready for json.Unmarshal (*SessionEvent for "session",
// *InputRequest for "user_input_required", ...), as Events lists them, or
// nil for a name this package does not know (a newer server may add events;
// skipping them is safe).
func NewEventPayload(name string) any {
	for _, e := range Events {
		if e.Name == name {
			return reflect.New(reflect.TypeOf(e.Payload)).Interface()
		}
	}
	return nil
}

// SessionEvent is the payload of "session", the first event of a POST
// /api/chat stream: the session (new or named) and the run just started.
type SessionEvent struct {
	SessionID string `json:"sessionId"`
	RunID     string `json:"runId"`
}

// MessageDeltaEvent is the payload of "message_delta": the next piece of the
// streaming assistant message MessageID. Deltas are persisted like every
// event, so a reconnect replays them; the "message" event with the same
// MessageID carries the whole text.
type MessageDeltaEvent struct {
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// ReasoningDeltaEvent is the payload of "reasoning_delta": the next piece of
// the reasoning ("thinking") a reasoning model streams before or beside the
// text of assistant message MessageID. It is never answer text: a client
// shows it apart (folded) or not at all, and the "message" event with the
// same MessageID carries the whole reasoning in its Reasoning field, which
// has the last word: the deltas of a message join to it, except that a
// model call retried after a failure streams its reasoning again from the
// start (as message_delta text). All come before that "message" event. A
// client that does not know this event skips it.
type ReasoningDeltaEvent struct {
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// Role is who wrote a message.
type Role string

// Message roles. RoleTool messages carry a ToolResult.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// MessageEvent is the payload of "message": a whole message, the user's own
// echoed at the start of a run or the assistant's once it is complete.
// Reasoning is the readable reasoning ("thinking") a reasoning model sent
// with an assistant message, omitted when there is none; it is never part
// of Content nor of any message_delta (docs/models.md "Reasoning models").
type MessageEvent struct {
	MessageID string `json:"messageId"`
	Role      Role   `json:"role"`
	Content   string `json:"content"`
	Reasoning string `json:"reasoning,omitempty"`
	// Stopped marks an assistant reply the user's cancel cut short: Content
	// is the text streamed until then, and the model saw no more of it.
	Stopped bool `json:"stopped,omitempty"`
}

// ToolCallEvent is the payload of "tool_call": the model called tool Name
// with Arguments, the JSON text exactly as the model sent it (it may be
// invalid JSON; the ToolResult then says so).
type ToolCallEvent struct {
	ToolCallID string `json:"toolCallId"`
	Name       string `json:"name"`
	Arguments  string `json:"arguments"`
}

// ToolResult is what a tool call gives back to the model (docs/design.md
// §3 "What the model gets back"): the one result type of every tool, ask,
// approval and elicitation. Content is the text the model reads (for
// ask_user the JSON {"selections", "customInput", "cancelled"}; for AskUser a
// readable output); IsError marks a result the model must treat as a
// failure; Metadata, when not nil, is a JSON object stored with the result
// and sent in its tool_result event (AskUser's {"answers": [...]}, an MCP
// tool's structuredContent).
type ToolResult struct {
	Content  string          `json:"content"`
	IsError  bool            `json:"isError"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}

// ToolResultEvent is the payload of "tool_result": the ToolResult the model
// gets for call ToolCallID (docs/design.md §3 "What the model gets back"). Content
// is the text the model reads; IsError marks a failure; Metadata is the
// machine-readable answer of AskUser ({"answers": [...]}), absent otherwise.
type ToolResultEvent struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Content    string          `json:"content"`
	IsError    bool            `json:"isError"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// RunStatus is a run's state (docs/design.md §4). A session's status is its latest
// run's, or "idle" before the first run.
type RunStatus string

// Run states. The last four are terminal and are the statuses of "done".
const (
	RunRunning      RunStatus = "running"
	RunWaitingInput RunStatus = "waiting_input"
	RunCompleted    RunStatus = "completed"
	RunCancelled    RunStatus = "cancelled"
	RunExpired      RunStatus = "expired"
	RunFailed       RunStatus = "failed"
)

// DoneEvent is the payload of "done": run RunID ended with Status
// (completed, cancelled, expired or failed). Every terminal state emits it.
type DoneEvent struct {
	RunID  string    `json:"runId"`
	Status RunStatus `json:"status"`
}

// ErrorEvent is the payload of "error": a run failed (RunID set, followed by
// done with status failed) or the stream itself broke (no RunID, code
// internal_error). A run's failure codes are internal_error,
// agent_not_found, invalid_tool_arguments (the model kept sending invalid
// ask arguments), max_steps and model_error.
type ErrorEvent struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	RunID   string `json:"runId,omitempty"`
}
