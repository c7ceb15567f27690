package agui

import (
	"encoding/json"
	"strings"

	"github.com/lubanhq/luban/api"
)

// EventType is the discriminator of an AG-UI event (@ag-ui/core EventType).
type EventType string

// The AG-UI event types luban emits (@ag-ui/core 1.0.0).
const (
	EventRunStarted         EventType = "RUN_STARTED"
	EventRunFinished        EventType = "RUN_FINISHED"
	EventRunError           EventType = "RUN_ERROR"
	EventTextMessageStart   EventType = "TEXT_MESSAGE_START"
	EventTextMessageContent EventType = "TEXT_MESSAGE_CONTENT"
	EventTextMessageEnd     EventType = "TEXT_MESSAGE_END"
	EventToolCallStart      EventType = "TOOL_CALL_START"
	EventToolCallArgs       EventType = "TOOL_CALL_ARGS"
	EventToolCallEnd        EventType = "TOOL_CALL_END"
	EventToolCallResult     EventType = "TOOL_CALL_RESULT"
	EventCustom             EventType = "CUSTOM"

	EventReasoningStart          EventType = "REASONING_START"
	EventReasoningMessageStart   EventType = "REASONING_MESSAGE_START"
	EventReasoningMessageContent EventType = "REASONING_MESSAGE_CONTENT"
	EventReasoningMessageEnd     EventType = "REASONING_MESSAGE_END"
	EventReasoningEnd            EventType = "REASONING_END"
)

// Event is one AG-UI event: the union of the fields of the event types
// above, each omitted when empty, so that every value marshals to exactly
// the object @ag-ui/core's EventSchema accepts for its Type (checked by the
// tests in internal/testkit/aguitest). Metadata, when set, is an object.
type Event struct {
	Type EventType `json:"type"`

	// RUN_STARTED, RUN_FINISHED.
	ThreadID string `json:"threadId,omitempty"`
	RunID    string `json:"runId,omitempty"`
	// RUN_FINISHED.
	Outcome *Outcome `json:"outcome,omitempty"`

	// TEXT_MESSAGE_*, REASONING_*, TOOL_CALL_RESULT.
	MessageID string `json:"messageId,omitempty"`
	Role      string `json:"role,omitempty"`
	// TEXT_MESSAGE_CONTENT, REASONING_MESSAGE_CONTENT, TOOL_CALL_ARGS.
	// Never empty when sent.
	Delta string `json:"delta,omitempty"`

	// TOOL_CALL_*, TOOL_CALL_RESULT.
	ToolCallID      string `json:"toolCallId,omitempty"`
	ToolCallName    string `json:"toolCallName,omitempty"`
	ParentMessageID string `json:"parentMessageId,omitempty"`
	// TOOL_CALL_RESULT: the text the model reads (may be empty, so a
	// pointer: the field is required by the schema).
	Content *string `json:"content,omitempty"`

	// CUSTOM.
	Name  string `json:"name,omitempty"`
	Value any    `json:"value,omitempty"`

	// RUN_ERROR: Message says what went wrong, Code is a docs/design.md §3 code.
	// What a client needs to recover travels in Metadata (@ag-ui/client
	// strips unknown top-level fields): "details" (invalid_answer),
	// "receipt" (already resolved, expired) and "pending"
	// (interaction_pending), as in the JSON errors of docs/design.md §3.
	Message string        `json:"message,omitempty"`
	Code    api.ErrorCode `json:"code,omitempty"`
	// Metadata: {"luban": {"sessionId", "runId"}} on RUN_STARTED;
	// {"luban": {"isError", "metadata"}} (the ToolResult's) on
	// TOOL_CALL_RESULT; the recovery fields above on RUN_ERROR.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Outcome is RUN_FINISHED.outcome: Type "success", "cancelled" or
// "interrupt" (then Interrupts holds at least one). A client before 1.0 is
// never sent "cancelled" (RunAgentInput.legacy). PendingToolCallIDs names
// the front-end tool calls a success leaves for the application
// (docs/design.md §21 "Front-end tools"); never sent to a client before 1.0,
// whose success outcome takes no other field.
type Outcome struct {
	Type               string      `json:"type"`
	Interrupts         []Interrupt `json:"interrupts,omitempty"`
	PendingToolCallIDs []string    `json:"pendingToolCallIds,omitempty"`
}

// The outcome types of RUN_FINISHED (@ag-ui/core RunFinishedOutcomeSchema).
const (
	OutcomeSuccess   = "success"
	OutcomeCancelled = "cancelled"
	OutcomeInterrupt = "interrupt"
)

// Interrupt is one open question of a paused run (docs/design.md §13): ID is the
// requestId, Reason ReasonInputRequired or ReasonConfirmation, Message the
// title, ResponseSchema a JSON Schema of the resume payload, ExpiresAt RFC
// 3339, Metadata {"inputRequest": the InputRequest of docs/design.md §3}.
type Interrupt struct {
	ID             string         `json:"id"`
	Reason         string         `json:"reason"`
	Message        string         `json:"message,omitempty"`
	ToolCallID     string         `json:"toolCallId,omitempty"`
	ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	ExpiresAt      string         `json:"expiresAt,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// Interrupt reasons (docs/design.md §13).
const (
	ReasonInputRequired = "input_required" // ask_user, AskUser, elicitations
	ReasonConfirmation  = "confirmation"   // approvals (docs/design.md §10)
	// ReasonFrontendTool is a front-end tool call (docs/design.md §21): it
	// is announced as the call itself and a RUN_FINISHED success that
	// leaves it pending, and this interrupt rides in that event's
	// metadata.luban.frontendTool (for its id and expiresAt).
	ReasonFrontendTool = "frontend_tool"
)

// RunAgentInput is the request body (@ag-ui/core RunAgentInputSchema). Only
// the fields luban reads are decoded; context, state and forwardedProps are
// accepted and ignored; tools are offered to the model for the run that a
// user message starts. ProtocolVersion is what @ag-ui/client 1.0 declares
// ("1.0"); clients before 1.0 (0.0.x, the one CopilotKit's runtime pins)
// send none, and are answered only with what their schemas accept
// (docs/design.md §21 "Clients before 1.0").
type RunAgentInput struct {
	ThreadID        string        `json:"threadId"`
	RunID           string        `json:"runId"`
	ProtocolVersion string        `json:"protocolVersion,omitempty"`
	Messages        []Message     `json:"messages"`
	Tools           []Tool        `json:"tools,omitempty"`
	Resume          []ResumeEntry `json:"resume,omitempty"`
}

// Tool is one front-end tool of RunAgentInput.tools (@ag-ui/core
// ToolSchema): offered to the model for the run (docs/design.md §21
// "Front-end tools"). Parameters is a JSON Schema object (absent: none).
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// legacy reports whether the client speaks AG-UI before 1.0: it declared no
// protocolVersion (or a 0.x one), so its RUN_FINISHED outcome is only
// success or interrupt (@ag-ui/core 0.0.x has no cancelled outcome and
// rejects an event carrying one).
func (in *RunAgentInput) legacy() bool {
	v := in.ProtocolVersion
	return v == "" || strings.HasPrefix(v, "0.")
}

// Message is one message of RunAgentInput.messages. Content is a string or
// an array of content parts (only "text" parts are read). ToolCallID names
// the call a tool message answers (a front-end tool's result).
type Message struct {
	ID         string          `json:"id"`
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCallID string          `json:"toolCallId,omitempty"`
}

// ResumeEntry answers one interrupt (@ag-ui/core ResumeEntrySchema): Status
// "resolved" with Payload (the answer part of a POST /api/chat/continue
// body: selections, customInput, answers) or "cancelled".
type ResumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// Resume statuses.
const (
	ResumeResolved  = "resolved"
	ResumeCancelled = "cancelled"
)
