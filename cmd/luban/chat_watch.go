package main

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
)

// watcher follows a session's event log (GET /api/sessions/{id}/events)
// while the terminal waits for a person's answer to one request, so an
// answer given elsewhere (the page, another terminal, the API) ends the wait:
// ctx is cancelled when the request's user_input_resolved arrives, and
// resolved then returns that receipt and its event id. A dropped stream is
// reopened with Last-Event-ID (the last id seen), after a short pause that
// grows to watchMaxDelay. A refusal of the stream (404 session_not_found:
// the session was deleted elsewhere; 401) ends the wait too, and refused
// returns it.
type watcher struct {
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu   sync.Mutex
	rc   *api.Receipt
	id   int64
	gone error
}

// watchMaxDelay bounds the pause before the watch stream is reopened.
const watchMaxDelay = 5 * time.Second

// watch starts a watcher of requestID in sessionID from the events after
// after (0: the whole log; a request resolves once, so replaying is safe).
func (s *chatSession) watch(ctx context.Context, sessionID, requestID string, after int64) *watcher {
	wctx, cancel := context.WithCancel(ctx)
	w := &watcher{ctx: wctx, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		delay := 200 * time.Millisecond
		for wctx.Err() == nil {
			st, err := s.c.Events(wctx, sessionID, after)
			var ce *client.Error
			if errors.As(err, &ce) {
				w.mu.Lock()
				w.gone = err
				w.mu.Unlock()
				cancel()
				return
			}
			if err == nil {
				delay = 200 * time.Millisecond
				for {
					ev, err := st.Next()
					if ev == nil && err != nil {
						break
					}
					if rc, ok := ev.Value.(*api.Receipt); ok && rc.RequestID == requestID {
						w.mu.Lock()
						w.rc, w.id = rc, ev.ID
						w.mu.Unlock()
						st.Close()
						cancel()
						return
					}
				}
				after = st.LastEventID()
				st.Close()
			}
			select {
			case <-wctx.Done():
			case <-time.After(delay):
			}
			delay = min(2*delay, watchMaxDelay)
		}
	}()
	return w
}

// resolved is the receipt of the watched request once it arrived on the
// session's stream, with its event id; nil before.
func (w *watcher) resolved() (*api.Receipt, int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rc, w.id
}

// refused is the server's refusal of the watch (the session is gone), nil
// while it is watched.
func (w *watcher) refused() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gone
}

// stop ends the watch and waits for it.
func (w *watcher) stop() {
	w.cancel()
	<-w.done
}

// elsewhere reports a request resolved by another client: a line saying so
// and its receipt; then it follows the session's events after the receipt
// (event id after, 0 when unknown: the receipt printed here is not printed
// again) to the run's next question or its end.
func (s *chatSession) elsewhere(ctx context.Context, rc *api.Receipt, after int64) (*api.InputRequest, int64, error) {
	lang := s.lang
	switch rc.Status {
	case api.StatusCancelled:
		s.printf("%s\n", lang.pick("（已在别处取消）", "(cancelled elsewhere)"))
	case api.StatusExpired:
		s.printf("%s\n", lang.pick("（问题已超时）", "(the question expired)"))
	default:
		s.printf("%s\n", lang.pick("（已在别处回答）", "(answered elsewhere)"))
	}
	s.receipt(rc)
	// One of several questions asked at once (docs/design.md §32): the run
	// waits on the others, which are asked next.
	if p, err := s.c.Pending(ctx, s.sessionID); err == nil && len(p.Requests) > 0 {
		return p.Requests[0], after, nil
	}
	st, err := s.c.Events(ctx, s.sessionID, after)
	var ce *client.Error
	if errors.As(err, &ce) && ce.Status == http.StatusNotFound {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	return s.render(ctx, st)
}
