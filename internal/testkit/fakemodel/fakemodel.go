// Package fakemodel holds what the fake model servers of the tests
// (internal/testkit/fakeopenai, internal/testkit/fakeanthropic) share: the FIFO of turns a
// test queues and the record of every request (Recorder), and the wire
// helpers that cut text into byte pieces (Split) and quote them as JSON
// strings that keep a cut UTF-8 character byte-exact (Quote). Each fake keeps
// its own Turn and Request types and its own wire format. The provider tests
// (model/openai, model/anthropic) share its dial counter (CountDials,
// RequireSequentialReuse).
package fakemodel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

// Recorder is the state of one fake server: the turns a test queued (type
// T), the handler that answers when the queue is empty, and every request
// (type R) in arrival order. Its methods are safe for concurrent use. The
// zero value is not usable; call NewRecorder.
type Recorder[T, R any] struct {
	label string

	mu      sync.Mutex
	queue   []T
	handler func(r *R) T
	reqs    []*R
	changed chan struct{} // closed and replaced whenever a request is recorded
	seq     int
}

// NewRecorder returns an empty Recorder; label (e.g. "fakeopenai") starts
// its error messages.
func NewRecorder[T, R any](label string) *Recorder[T, R] {
	return &Recorder[T, R]{label: label, changed: make(chan struct{})}
}

// Push appends turns to the FIFO of answers.
func (q *Recorder[T, R]) Push(turns ...T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.queue = append(q.queue, turns...)
}

// SetHandler sets a function that answers requests while the queue is
// empty; nil removes it.
func (q *Recorder[T, R]) SetHandler(fn func(r *R) T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.handler = fn
}

// Requests returns every request recorded so far, in arrival order.
func (q *Recorder[T, R]) Requests() []*R {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]*R(nil), q.reqs...)
}

// WaitRequests blocks until at least n requests were recorded and returns
// them all, or returns an error wrapping ctx's ("<label>: 1 of 2 requests:
// context canceled"). It waits on a signal, never by polling.
func (q *Recorder[T, R]) WaitRequests(ctx context.Context, n int) ([]*R, error) {
	for {
		q.mu.Lock()
		if len(q.reqs) >= n {
			out := append([]*R(nil), q.reqs...)
			q.mu.Unlock()
			return out, nil
		}
		ch := q.changed
		got := len(q.reqs)
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, fmt.Errorf("%s: %d of %d requests: %w", q.label, got, n, ctx.Err())
		}
	}
}

// Next records req, wakes WaitRequests, and picks its answer: the first
// queued turn, else the handler's (called outside the lock, on the caller's
// goroutine). seq numbers the requests from 1 (for response ids); ok is
// false when there is neither a queued turn nor a handler.
func (q *Recorder[T, R]) Next(req *R) (seq int, turn T, ok bool) {
	q.mu.Lock()
	q.reqs = append(q.reqs, req)
	close(q.changed)
	q.changed = make(chan struct{})
	q.seq++
	seq = q.seq
	if len(q.queue) > 0 {
		turn, ok = q.queue[0], true
		q.queue = q.queue[1:]
	}
	handler := q.handler
	q.mu.Unlock()
	if !ok && handler != nil {
		turn, ok = handler(req), true
	}
	return seq, turn, ok
}

// Body is what both wire formats share in a request body.
type Body struct {
	// Object is the body decoded as a JSON object; nil when it is not one.
	Object map[string]any
	// Model is Object["model"].
	Model string
	// Messages is Object["messages"], each a JSON object (others skipped).
	Messages []map[string]any
}

// ParseBody decodes raw; a body that is not a JSON object gives a zero Body.
func ParseBody(raw []byte) Body {
	var b Body
	if json.Unmarshal(raw, &b.Object) != nil {
		return Body{}
	}
	b.Model, _ = b.Object["model"].(string)
	if msgs, ok := b.Object["messages"].([]any); ok {
		for _, m := range msgs {
			if mm, ok := m.(map[string]any); ok {
				b.Messages = append(b.Messages, mm)
			}
		}
	}
	return b
}

// Split cuts s into pieces of n bytes (the last may be shorter), even inside
// a UTF-8 character, as real servers do; "" gives none. n must be > 0.
func Split(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// Quote encodes s as a JSON string like encoding/json does, except that
// bytes that are not valid UTF-8 are passed through raw instead of being
// replaced by U+FFFD, so a character cut in two reaches the client
// byte-exact (and no HTML escaping).
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Tokens is the token count the fake servers report for s: one token per
// four bytes, rounded up (the usual rule of thumb), so a test can predict it.
func Tokens(s string) int64 { return int64((len(s) + 3) / 4) }
