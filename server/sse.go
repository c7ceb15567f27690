package server

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/ssepump"
)

// stream writes the session's events with Seq > after as SSE frames
// ("id: <seq>\nevent: <name>\ndata: <json>\n\n"), then follows new ones as
// they are committed (Runner.Events), with a heartbeat comment every
// Heartbeat. It returns after writing an event for which stop returns true,
// when the client goes away, or when the server shuts down. The event log is
// the source of truth, so nothing is missed or repeated.
//
// pending says that events after after are committed already (the run's
// start, an answer's receipt): the headers then go out with the first of
// them, in one write, instead of being flushed on their own first. Else
// the headers are flushed at once, so that a client following a quiet
// session sees the stream open. The frames of the last batch, the one with
// the stop event, are not flushed here: the handler returns right after,
// and the response's end sends them with its last chunk, in one write.
//
// follow, when not nil, followed the session since before the commit of
// the events after after (Runner.Follow): the stream starts with what
// that commit handed over instead of reading it back.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sessionID string, after int64, pending bool, stop func(agent.Event) bool, follow *agent.Following) {
	rc := ssepump.Start(w)
	if !pending {
		if err := rc.Flush(); err != nil {
			return
		}
	}
	ending := false
	var out frames
	ssepump.Run(r.Context(), func(ctx context.Context) iter.Seq2[agent.Event, error] {
		if follow != nil {
			return follow.Events(ctx, sessionID, after)
		}
		return s.opts.Runner.Events(ctx, sessionID, after)
	}, s.opts.Heartbeat, s.closing, ssepump.Writer[agent.Event]{
		Item: func(ev agent.Event) (bool, bool) {
			if err := out.write(w, ev.Seq, ev.Name, ev.Data); err != nil {
				return false, false
			}
			ending = stop != nil && stop(ev)
			return ending, true
		},
		Flush: func() bool { return ending || rc.Flush() == nil },
		Ping:  func() bool { return ping(w, rc) },
		Fail: func(err error) {
			s.log.Error("sse: event list", "sessionId", sessionID, "err", err)
			fmt.Fprintf(w, "event: %s\ndata: {\"code\":%q,\"message\":\"event log unavailable\"}\n\n", api.EventError, api.CodeInternal)
			_ = rc.Flush()
		},
	})
}

// ping writes and flushes the SSE heartbeat comment.
func ping(w http.ResponseWriter, rc *http.ResponseController) bool {
	if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// runEnds stops a stream at the run's pause or end: done of runID, or its
// user_input_required once the stream has shown every request the pause
// put (docs/design.md §32: one model message may ask several questions
// at once; their events are committed together, in call order).
func (s *Server) runEnds(ctx context.Context, sessionID, runID string) func(agent.Event) bool {
	var waiting map[string]bool
	return func(ev agent.Event) bool {
		switch ev.Name {
		case api.EventDone:
			return ev.RunID() == runID
		case api.EventUserInputRequired:
			if ev.RunID() != runID {
				return false
			}
			if waiting == nil {
				ids, err := s.opts.Runner.WaitingRequests(ctx, sessionID, runID)
				if err != nil || len(ids) <= 1 {
					return true
				}
				waiting = map[string]bool{}
				for _, id := range ids {
					waiting[id] = true
				}
			}
			var req struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal(ev.Data, &req)
			delete(waiting, req.ID)
			return len(waiting) == 0
		}
		return false
	}
}
