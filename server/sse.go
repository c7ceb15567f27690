package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

// stream writes the session's events with Seq > after as SSE frames
// ("id: <seq>\nevent: <name>\ndata: <json>\n\n"), then follows new ones as
// they are committed (Runner.Events), with a heartbeat comment every
// Heartbeat. It returns after writing an event for which stop returns true,
// when the client goes away, or when the server shuts down. The event log is
// the source of truth, so nothing is missed or repeated.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sessionID string, after int64, stop func(agent.Event) bool) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	// The events are read on a goroutine of their own and handed over
	// here, where the heartbeat and the shutdown are watched too; the
	// buffer lets a burst be written with one flush.
	evc := make(chan agent.Event, 64)
	errc := make(chan error, 1)
	go func() {
		defer close(evc)
		for ev, err := range s.opts.Runner.Events(ctx, sessionID, after) {
			if err != nil {
				errc <- err
				return
			}
			select {
			case evc <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()

	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// A stream lasts as long as its run: no deadline of the request (a body
	// read deadline, an http.Server ReadTimeout or WriteTimeout) may end it.
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	if err := rc.Flush(); err != nil {
		return
	}
	hb := time.NewTicker(s.opts.Heartbeat)
	defer hb.Stop()
	for {
		select {
		case ev, ok := <-evc:
			if !ok {
				select {
				case err := <-errc:
					s.log.Error("sse: event list", "sessionId", sessionID, "err", err)
					fmt.Fprintf(w, "event: %s\ndata: {\"code\":%q,\"message\":\"event log unavailable\"}\n\n", api.EventError, api.CodeInternal)
					_ = rc.Flush()
				default:
				}
				return
			}
			for {
				if err := writeEvent(w, ev.Seq, ev.Name, ev.Data); err != nil {
					return
				}
				if stop != nil && stop(ev) {
					_ = rc.Flush()
					return
				}
				var more bool
				select {
				case ev, more = <-evc:
				default:
				}
				if !more {
					break
				}
			}
			if err := rc.Flush(); err != nil {
				return
			}
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
func runEnds(runID string) func(agent.Event) bool {
	return func(ev agent.Event) bool {
		switch ev.Name {
		case api.EventDone, api.EventUserInputRequired:
			return ev.RunID() == runID
		}
		return false
	}
}
