package agent

import (
	"context"
	"encoding/json"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// SSE event names (docs/design.md §3); see package api, where the wire types live.
const (
	EventSession           = api.EventSession
	EventMessageDelta      = api.EventMessageDelta
	EventMessage           = api.EventMessage
	EventToolCall          = api.EventToolCall
	EventToolResult        = api.EventToolResult
	EventUserInputRequired = api.EventUserInputRequired
	EventUserInputResolved = api.EventUserInputResolved
	EventDone              = api.EventDone
	EventError             = api.EventError
)

// The payloads of the events above (package api).
type (
	// SessionEvent is the payload of "session".
	SessionEvent = api.SessionEvent
	// MessageDeltaEvent is the payload of "message_delta".
	MessageDeltaEvent = api.MessageDeltaEvent
	// MessageEvent is the payload of "message".
	MessageEvent = api.MessageEvent
	// ToolCallEvent is the payload of "tool_call".
	ToolCallEvent = api.ToolCallEvent
	// ToolResultEvent is the payload of "tool_result".
	ToolResultEvent = api.ToolResultEvent
	// DoneEvent is the payload of "done".
	DoneEvent = api.DoneEvent
	// ErrorEvent is the payload of "error".
	ErrorEvent = api.ErrorEvent
)

func (r *Runner) emit(ctx context.Context, ex store.Executor, sessionID, name string, v any) (*store.Event, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return ex.EventAppend(ctx, &store.EventAppendParams{SessionID: sessionID, Name: name, Data: data, Now: r.now()})
}

// emitContent appends an event whose payload v carries the content of
// message msgID (a message or tool_result event) or the arguments of one
// of its tool calls (a tool_call event): the event references the message
// instead of copying them (store.EventAppendParams.MessageRef), and reads
// back byte for byte as the whole payload marshalled. v is the payload with
// its Content (or Arguments) field empty.
func (r *Runner) emitContent(ctx context.Context, ex store.Executor, sessionID, name, msgID string, v any) (*store.Event, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return ex.EventAppend(ctx, &store.EventAppendParams{SessionID: sessionID, Name: name, Data: data, MessageRef: msgID, Now: r.now()})
}
