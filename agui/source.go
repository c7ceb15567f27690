package agui

import (
	"context"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/store"
)

// source is what the handler reads besides the Runner's calls: the session's
// event log (the same log /api/sessions/{id}/events replays) and the run of
// an interaction. It is the one place of this package that reaches the
// store, through agent.Runner.Store, the way server/ streams today.
type source struct{ st store.Store }

func newSource(r *agent.Runner) source { return source{st: r.Store()} }

// subscribe returns a channel that receives a value whenever events may have
// been committed in sessionID, and the function that stops it.
func (s source) subscribe(sessionID string) (<-chan struct{}, func()) {
	return s.st.Subscribe(sessionID)
}

// events lists up to limit events of sessionID with Seq > after, ascending.
func (s source) events(ctx context.Context, sessionID string, after int64, limit int) ([]*store.Event, error) {
	return s.st.EventList(ctx, &store.EventListParams{SessionID: sessionID, AfterSeq: after, Limit: limit})
}

// runOf returns the run that asked request requestID.
func (s source) runOf(ctx context.Context, requestID string) (*store.Run, error) {
	it, err := s.st.InteractionGet(ctx, requestID)
	if err != nil {
		return nil, err
	}
	return s.st.RunGet(ctx, it.RunID)
}

// session returns session id as stored (its last event sequence number
// and status); the caller checked its owner with Runner.Session.
func (s source) session(ctx context.Context, id string) (*store.Session, error) {
	return s.st.SessionGet(ctx, id)
}

// run returns run id.
func (s source) run(ctx context.Context, id string) (*store.Run, error) {
	return s.st.RunGet(ctx, id)
}
