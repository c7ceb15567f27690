package agent

import (
	"strings"
	"sync"
	"time"
)

// deltaFlushInterval is the longest streamed text waits before it is
// committed as a message_delta event.
const deltaFlushInterval = 25 * time.Millisecond

// deltaBatcher commits streamed text in batches: whatever arrives within
// deltaFlushInterval becomes one message_delta event (a timer flushes a batch
// the model leaves waiting), and take hands the rest to the transaction that
// stores the whole message. A fast model thus costs no extra commit for its
// text; a slow one streams at most 40 events a second.
type deltaBatcher struct {
	emit func(text string) // commits one message_delta; called with mu held

	mu        sync.Mutex
	pending   strings.Builder
	lastFlush time.Time
	timer     *time.Timer
	closed    bool
}

func newDeltaBatcher(emit func(text string)) *deltaBatcher {
	return &deltaBatcher{emit: emit, lastFlush: time.Now()}
}

// add queues text and commits the batch when it has waited long enough.
func (b *deltaBatcher) add(text string) {
	if text == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.pending.WriteString(text)
	if wait := deltaFlushInterval - time.Since(b.lastFlush); wait <= 0 {
		b.flushLocked()
	} else if b.timer == nil {
		b.timer = time.AfterFunc(wait, b.flush)
	}
}

func (b *deltaBatcher) flush() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.flushLocked()
	}
}

func (b *deltaBatcher) flushLocked() {
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	if b.pending.Len() == 0 {
		return
	}
	b.emit(b.pending.String())
	b.pending.Reset()
	b.lastFlush = time.Now()
}

// take stops the batching and returns the text not committed yet. It must
// be called outside the transaction that stores it: a timer flush in flight
// holds mu while it waits for the store's writer.
func (b *deltaBatcher) take() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	if b.timer != nil {
		b.timer.Stop()
		b.timer = nil
	}
	rest := b.pending.String()
	b.pending.Reset()
	return rest
}
