package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
)

// ErrBadCursor is returned by Inbox and SessionPage for a cursor that is not
// one of the caller's interactions (of that status) or sessions: a 400
// invalid_request.
var ErrBadCursor = people.ErrBadCursor

// inbox reads GET /api/interactions and GET /api/sessions; a pending
// request of a run whose agent is not configured here is not resumable.
func (r *Runner) inbox() *people.Inbox {
	return &people.Inbox{Store: r.st, DefaultAgent: r.first.Name, AgentExists: func(name string) bool {
		_, ok := r.agents[name]
		return ok || name == externalAgent
	}, Refresh: r.refreshAssignees}
}

// Inbox lists owner's interactions of status across all of owner's sessions
// and those assigned to owner in other principals' sessions (GET
// /api/interactions, docs/design.md §12 and §16): pending oldest first, resolved most
// recently resolved first; after cursor (a previous page's Next) when set;
// at most limit (clamped to 1..api.MaxPageLimit, 0 = api.DefaultPageLimit).
// Errors: ErrBadCursor.
func (r *Runner) Inbox(ctx context.Context, owner string, status api.InboxStatus, cursor string, limit int) (*api.InteractionList, error) {
	return r.inbox().Interactions(ctx, owner, status, cursor, limit)
}

// SessionPage lists owner's sessions newest-updated first (GET
// /api/sessions), after the session before (a previous page's Next) when
// set, at most limit (clamped as by Inbox). Errors: ErrBadCursor.
func (r *Runner) SessionPage(ctx context.Context, owner, before string, limit int) (*api.SessionList, error) {
	return r.inbox().Sessions(ctx, owner, before, limit)
}

// FeedEvent is one entry of a principal's feed (docs/design.md §12): a
// user_input_required, user_input_resolved or done event of one of the
// principal's sessions, numbered in the principal's own sequence.
type FeedEvent struct {
	// Seq is the entry's number in owner's feed: the SSE id of GET /api/events.
	Seq int64
	// SessionID is the session the event was committed in, SessionSeq its
	// Seq there.
	SessionID  string
	SessionSeq int64
	// Name is api.EventUserInputRequired, api.EventUserInputResolved or
	// api.EventDone.
	Name string
	// Data is the event's payload as stored in the session's log.
	Data json.RawMessage
	// At is when the entry was committed.
	At time.Time
}

// FeedPosition is owner's last feed sequence number (0 when the feed is
// empty): Feed after it yields only what is committed from now on.
func (r *Runner) FeedPosition(ctx context.Context, owner string) (int64, error) {
	return r.st.FeedLastSeq(ctx, owner)
}

// Feed yields owner's feed entries with Seq > after, oldest first, then
// every new one as it is committed, until ctx is done or the loop stops:
// the replay-then-live contract of Events, for a principal instead of a
// session. When the feed cannot be read it yields the error once and stops.
func (r *Runner) Feed(ctx context.Context, owner string, after int64) iter.Seq2[FeedEvent, error] {
	return func(yield func(FeedEvent, error) bool) {
		wake, unsubscribe := r.st.Subscribe(store.PrincipalKey(owner))
		defer unsubscribe()
		for {
			feed, err := r.st.FeedList(ctx, &store.FeedListParams{Owner: owner, AfterSeq: after, Limit: eventBatch})
			if err != nil {
				if ctx.Err() == nil {
					yield(FeedEvent{}, err)
				}
				return
			}
			for _, f := range feed {
				if !yield(FeedEvent{Seq: f.Seq, SessionID: f.SessionID, SessionSeq: f.SessionSeq, Name: f.Name, Data: f.Data, At: f.CreatedAt}, nil) {
					return
				}
				after = f.Seq
			}
			if len(feed) == eventBatch {
				continue
			}
			select {
			case <-wake:
			case <-ctx.Done():
				return
			}
		}
	}
}

// SessionState is where a session stands: the sequence number of its last
// committed event and its status (its latest run's status, or "idle"), read
// together from the session's row.
type SessionState struct {
	LastSeq int64
	Status  string
}

// SessionState returns owner's session id as it stands
// (ErrSessionNotFound for a session that does not exist or is another
// principal's). Events after LastSeq are everything committed since.
func (r *Runner) SessionState(ctx context.Context, owner, id string) (SessionState, error) {
	s, err := r.session(ctx, owner, id)
	if err != nil {
		return SessionState{}, err
	}
	return SessionState{LastSeq: s.LastSeq, Status: s.Status}, nil
}

// RunState is one run as it stands: its session, status and, for a failed
// run, the error it ended with.
type RunState struct {
	ID, SessionID string
	Status        api.RunStatus
	Error         string
}

// RunState returns run id of one of owner's sessions (ErrSessionNotFound
// for a run that does not exist or is in another principal's session).
func (r *Runner) RunState(ctx context.Context, owner, id string) (*RunState, error) {
	run, err := r.st.RunGet(ctx, id)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrSessionNotFound
		}
		return nil, err
	}
	if _, err := r.session(ctx, owner, run.SessionID); err != nil {
		return nil, err
	}
	return &RunState{ID: run.ID, SessionID: run.SessionID, Status: api.RunStatus(run.Status), Error: run.Error}, nil
}

// RequestRun returns the run that asked request requestID of one of owner's
// sessions (ErrInteractionNotFound for a request that does not exist or is
// in another principal's session).
func (r *Runner) RequestRun(ctx context.Context, owner, requestID string) (*RunState, error) {
	it, err := r.interaction(ctx, owner, requestID)
	if err != nil {
		return nil, err
	}
	return r.RunState(ctx, owner, it.RunID)
}
