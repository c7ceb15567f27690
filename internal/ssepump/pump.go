// Package ssepump is the one loop behind every long SSE stream of luban
// (GET /api/sessions/{id}/events and the chat streams, GET /api/events,
// POST /api/agui): it reads an iterator of committed items (agent.Runner's
// Events or Feed) on a goroutine of its own and hands them to the writer on
// the request's goroutine, where the heartbeat and the server's shutdown are
// watched too. The callers choose the bytes; this package only decides when
// they are written and flushed.
package ssepump

import (
	"context"
	"iter"
	"net/http"
	"time"
)

// Start writes the headers of an SSE response (200, text/event-stream, no
// caching or proxy buffering) and clears the connection's read and write
// deadlines: a stream lasts as long as what it follows, and no deadline of
// the request (a body read deadline, an http.Server ReadTimeout or
// WriteTimeout) may end it. Nothing is flushed yet.
func Start(w http.ResponseWriter) *http.ResponseController {
	h := w.Header()
	for _, kv := range headers {
		h[kv.key] = kv.value
	}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
	return rc
}

// headers are Start's, their keys canonical. The value slices are shared
// by every response, at full capacity: an Add to one of them copies it, and
// net/http only reads them.
var headers = [...]struct {
	key   string
	value []string
}{
	{"Content-Type", []string{"text/event-stream"}[:1:1]},
	{"Cache-Control", []string{"no-cache"}[:1:1]},
	{"Connection", []string{"keep-alive"}[:1:1]},
	{"X-Accel-Buffering", []string{"no"}[:1:1]},
}

// Writer is what Run writes with. Every func returns false when the client
// is gone (a failed write or flush), which ends Run.
type Writer[T any] struct {
	// Item writes one item without flushing; stop true ends the stream
	// after a flush (the end of what the stream follows).
	Item func(item T) (stop, ok bool)
	// Flush flushes what Item wrote.
	Flush func() bool
	// Ping writes and flushes a heartbeat (an SSE comment).
	Ping func() bool
	// Fail writes and flushes the frame that tells the client the source
	// failed with err (the stream then ends); it logs err.
	Fail func(err error)
}

// buffer is how many items the reader may be ahead of the writer: a burst
// is written with one flush.
const buffer = 64

// Run reads source(ctx) and writes each item with w.Item, flushing once the items
// read so far are written (so a burst costs one flush), and writes w.Ping
// every heartbeat while nothing arrives. It returns after an item for which
// Item reports stop, when a write fails, when the source yields an error
// (after w.Fail), when it ends, when ctx is done (the client went away) or
// when done is closed (the server shuts down); the source's context is
// cancelled before Run returns. Items are written in the source's order,
// each once.
func Run[T any](ctx context.Context, source func(ctx context.Context) iter.Seq2[T, error], heartbeat time.Duration, done <-chan struct{}, w Writer[T]) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	items := make(chan T, buffer)
	errc := make(chan error, 1)
	go func() {
		defer close(items)
		for it, err := range source(ctx) {
			if err != nil {
				errc <- err
				return
			}
			select {
			case items <- it:
			case <-ctx.Done():
				return
			}
		}
	}()
	hb := time.NewTicker(heartbeat)
	defer hb.Stop()
	for {
		select {
		case it, ok := <-items:
			if !ok {
				select {
				case err := <-errc:
					w.Fail(err)
				default:
				}
				return
			}
			for {
				stop, ok := w.Item(it)
				if !ok {
					return
				}
				if stop {
					w.Flush()
					return
				}
				var more bool
				select {
				case it, more = <-items:
				default:
				}
				if !more {
					break
				}
			}
			if !w.Flush() {
				return
			}
		case <-hb.C:
			if !w.Ping() {
				return
			}
		case <-ctx.Done():
			return
		case <-done:
			return
		}
	}
}
