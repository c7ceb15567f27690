package agent

import (
	"context"
	"encoding/json"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

func (r *Runner) emit(ctx context.Context, ex store.Executor, sessionID, name string, v any) (*store.Event, error) {
	return r.emitTo(ctx, ex, sessionID, name, v, nil)
}

// emitTo is emit with the principals besides the session's owner whose
// feeds get the event too (a question's assignees, docs/design.md §16).
func (r *Runner) emitTo(ctx context.Context, ex store.Executor, sessionID, name string, v any, audience []string) (*store.Event, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return ex.EventAppend(ctx, &store.EventAppendParams{SessionID: sessionID, Name: name, Data: data, RunID: runOf(v), Audience: audience, Now: r.now()})
}

// runOf is the run a payload names (its runId), "" for one that names
// none: stored beside the event (store.EventAppendParams.RunID), so that
// readers filter by run without decoding it (Event.RunID).
func runOf(v any) string {
	switch p := v.(type) {
	case api.SessionEvent:
		return p.RunID
	case *api.SessionEvent:
		return p.RunID
	case api.InputRequest:
		return p.RunID
	case *api.InputRequest:
		return p.RunID
	case api.DoneEvent:
		return p.RunID
	case *api.DoneEvent:
		return p.RunID
	case api.ErrorEvent:
		return p.RunID
	case *api.ErrorEvent:
		return p.RunID
	}
	return ""
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
