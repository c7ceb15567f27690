package agent

import (
	"context"
	"iter"

	"github.com/lubanhq/luban/api"
)

// Run starts a run (as Start) and yields its events as they are committed,
// oldest first, until the run pauses for a person (the yielded
// user_input_required events, one per question the pause put, their Payload
// an *api.InputRequest: docs/design.md §32) or ends (the
// yielded done event, *api.DoneEvent), ctx is done, or the loop stops. A
// paused run goes on once its question is answered (Resolve: its
// ContinueResult.AfterSeq is where Events follows the rest). Start's errors
// (docs/design.md §3) are yielded once, with a nil event, as is an error
// reading the log. Run is the embedder's loop of docs/design.md §15, as
// adk-go's Runner.Run: for a program that drives luban from Go rather than
// over HTTP.
func (r *Runner) Run(ctx context.Context, p StartParams) iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		res, err := r.Start(ctx, p)
		if err != nil {
			yield(nil, err)
			return
		}
		var waiting map[string]bool
		for ev, err := range r.Events(ctx, res.SessionID, res.AfterSeq) {
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(&ev, nil) {
				return
			}
			if ev.RunID() != res.RunID {
				continue
			}
			switch ev.Name {
			case api.EventDone:
				return
			case api.EventUserInputRequired:
				if waiting == nil {
					ids, err := r.WaitingRequests(ctx, res.SessionID, res.RunID)
					if err != nil || len(ids) <= 1 {
						return
					}
					waiting = map[string]bool{}
					for _, id := range ids {
						waiting[id] = true
					}
				}
				if req, ok := ev.Payload().(*api.InputRequest); ok {
					delete(waiting, req.ID)
				}
				if len(waiting) == 0 {
					return
				}
			}
		}
	}
}
