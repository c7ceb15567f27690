package agui

import (
	"context"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/store"
)

// source is what the handler reads that the Runner's public calls do not
// give: a session's last event sequence number and a run's status (of the
// run that asked an interaction). It is the one place of this package that
// reaches the store, through agent.Runner.Store; the events themselves come
// from Runner.Events.
type source struct{ st store.Store }

func newSource(r *agent.Runner) source { return source{st: r.Store()} }

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
