package agent

import (
	"context"
	"encoding/json"

	"github.com/lubanhq/luban/store"
)

// SSE event names (DESIGN §3). They are a contract: never rename them.
const (
	EventSession           = "session"
	EventMessageDelta      = "message_delta"
	EventMessage           = "message"
	EventToolCall          = "tool_call"
	EventToolResult        = "tool_result"
	EventUserInputRequired = "user_input_required"
	EventUserInputResolved = "user_input_resolved"
	EventDone              = "done"
	EventError             = "error"
)

// SessionEvent is the payload of "session".
type SessionEvent struct {
	SessionID string `json:"sessionId"`
	RunID     string `json:"runId"`
}

// MessageDeltaEvent is the payload of "message_delta": a piece of streaming
// assistant text.
type MessageDeltaEvent struct {
	MessageID string `json:"messageId"`
	Delta     string `json:"delta"`
}

// MessageEvent is the payload of "message": a whole message.
type MessageEvent struct {
	MessageID string `json:"messageId"`
	Role      string `json:"role"`
	Content   string `json:"content"`
}

// ToolCallEvent is the payload of "tool_call".
type ToolCallEvent struct {
	ToolCallID string `json:"toolCallId"`
	Name       string `json:"name"`
	Arguments  string `json:"arguments"`
}

// ToolResultEvent is the payload of "tool_result".
type ToolResultEvent struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Content    string          `json:"content"`
	IsError    bool            `json:"isError"`
	Metadata   json.RawMessage `json:"metadata,omitempty"`
}

// DoneEvent is the payload of "done": the run ended with Status
// (completed, cancelled, expired or failed).
type DoneEvent struct {
	RunID  string `json:"runId"`
	Status string `json:"status"`
}

// ErrorEvent is the payload of "error".
type ErrorEvent struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	RunID   string `json:"runId,omitempty"`
}

func (r *Runner) emit(ctx context.Context, ex store.Executor, sessionID, name string, v any) (*store.Event, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return ex.EventAppend(ctx, &store.EventAppendParams{SessionID: sessionID, Name: name, Data: data, Now: r.now()})
}
