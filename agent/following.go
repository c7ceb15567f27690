package agent

import (
	"context"
	"iter"

	"github.com/lubanhq/luban/store"
)

// Following follows a session's events from before a transition commits
// (Runner.Follow), so that a stream of what the transition appended is
// handed its events instead of reading them back from the log
// (store.Store.Follow). Events yields them with Runner.Events' contract.
// Close releases it; a caller that made one closes it, whatever happens.
// A nil *Following follows nothing (StartParams.Follow's zero value).
type Following struct {
	r         *Runner
	sessionID string
	f         *store.Follower
	unfollow  func()
}

// Follow returns a Following of session sessionID from now on; with ""
// it follows nothing until StartParams.Follow gives it the session Start
// runs in, before Start's commit. It does not check who owns the session:
// the transition it is passed to (or Session) does.
func (r *Runner) Follow(sessionID string) *Following {
	f := &Following{r: r}
	f.follow(sessionID)
	return f
}

// follow starts following sessionID unless f already follows a session
// or sessionID is "".
func (f *Following) follow(sessionID string) {
	if f == nil || f.f != nil || sessionID == "" {
		return
	}
	f.sessionID = sessionID
	f.f, f.unfollow = f.r.st.Follow(sessionID)
}

// Events yields the events of sessionID with Seq > after as Runner.Events
// does, starting with what commits since Follow handed over rather than a
// read of the log; another sessionID than the one f follows, or an f
// that follows none, is Runner.Events.
func (f *Following) Events(ctx context.Context, sessionID string, after int64) iter.Seq2[Event, error] {
	if f.f == nil || sessionID != f.sessionID {
		return f.r.Events(ctx, sessionID, after)
	}
	return func(yield func(Event, error) bool) {
		f.r.events(ctx, sessionID, after, f.f, true, yield)
	}
}

// Close stops following: an Events still running is handed nothing more
// and reads the log only when something else wakes it (its context's end
// stops it).
func (f *Following) Close() {
	if f == nil || f.unfollow == nil {
		return
	}
	f.unfollow()
	f.unfollow = nil
}
