package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// stream writes the session's events with Seq > after as SSE frames
// ("id: <seq>\nevent: <name>\ndata: <json>\n\n"), then follows new ones as
// they are committed, with a heartbeat comment every Heartbeat. It returns
// after writing an event for which stop returns true, when the client goes
// away, or when the server shuts down. The event log is the source of
// truth: a wake-up only says "look again", so nothing is missed or repeated.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sessionID string, after int64, stop func(*store.Event) bool) {
	st := s.opts.Runner.Store()
	wake, unsubscribe := st.Subscribe(sessionID)
	defer unsubscribe()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// A stream lasts as long as its run: no deadline of the request (a body
	// read deadline, an http.Server ReadTimeout or WriteTimeout) may end it.
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	if err := rc.Flush(); err != nil {
		return
	}
	hb := time.NewTicker(s.opts.Heartbeat)
	defer hb.Stop()
	ctx := r.Context()
	for {
		evs, err := st.EventList(ctx, &store.EventListParams{SessionID: sessionID, AfterSeq: after, Limit: 500})
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("sse: event list", "sessionId", sessionID, "err", err)
				fmt.Fprintf(w, "event: %s\ndata: {\"code\":%q,\"message\":\"event log unavailable\"}\n\n", api.EventError, api.CodeInternal)
				_ = rc.Flush()
			}
			return
		}
		for _, ev := range evs {
			if err := writeEvent(w, ev.Seq, ev.Name, ev.Data); err != nil {
				return
			}
			after = ev.Seq
			if stop != nil && stop(ev) {
				_ = rc.Flush()
				return
			}
		}
		if len(evs) > 0 {
			if err := rc.Flush(); err != nil {
				return
			}
			if len(evs) == 500 {
				continue
			}
		}
		select {
		case <-wake:
		case <-hb.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		case <-ctx.Done():
			return
		case <-s.closing:
			return
		}
	}
}

// runEnds stops a stream at the run's pause or end: user_input_required or
// done of runID.
func runEnds(runID string) func(*store.Event) bool {
	return func(ev *store.Event) bool {
		switch ev.Name {
		case api.EventDone, api.EventUserInputRequired:
			return eventRunID(ev) == runID
		}
		return false
	}
}

func eventRunID(ev *store.Event) string {
	var v struct {
		RunID string `json:"runId"`
	}
	_ = jsonUnmarshal(ev.Data, &v)
	return v.RunID
}
