package tool

import "context"

// Call is the identity of one tool call (docs/design.md §9): which session, run and
// model tool call it belongs to, whose session it is and which agent made
// it. The run puts it in the context it passes to Tool.Call; a tool reads it
// with CallFrom.
//
// ToolCallID is unique within the session and stays the same when a run is
// resumed after a restart, so SessionID+ToolCallID is the idempotency key of
// a side effect: a tool that is run again for the same call (an idempotent
// tool after a crash) can find what it did the first time under that key.
type Call struct {
	SessionID  string `json:"sessionId"`
	RunID      string `json:"runId"`
	ToolCallID string `json:"toolCallId"`
	// Principal is the owner of the session (the authenticated caller that
	// started it), not necessarily who approved the call.
	Principal string `json:"principal"`
	// Agent is the name of the agent the run uses.
	Agent string `json:"agent"`
}

// IdempotencyKey is SessionID + "/" + ToolCallID: the key under which a side
// effect of this call may be recorded (docs/design.md §9).
func (c Call) IdempotencyKey() string { return c.SessionID + "/" + c.ToolCallID }

type callKey struct{}

// WithCall returns ctx carrying c.
func WithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the Call that ctx carries; ok is false outside a run (a
// tool called directly, as in a test).
func CallFrom(ctx context.Context) (c Call, ok bool) {
	c, ok = ctx.Value(callKey{}).(Call)
	return c, ok
}
