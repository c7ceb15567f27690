package agent

import (
	"strings"
	"sync"
	"time"

	"github.com/lubanhq/luban/store"
)

// deltaFlushInterval is the longest streamed text waits before it is
// committed as a message_delta event (until its message commits: the
// message's transaction deletes the deltas).
const deltaFlushInterval = 25 * time.Millisecond

// deltaBatcher commits streamed text in batches: whatever arrives within
// deltaFlushInterval becomes one message_delta event (a timer flushes a batch
// the model leaves waiting), and take drops the rest, which the message
// event carries. A fast model thus costs no commit and no row for its
// streamed text; a slow one streams at most 40 events a second.
type deltaBatcher struct {
	// out commits the batches as events named event (out.emit, called
	// with mu held).
	out   *modelStream
	event string

	mu        sync.Mutex
	pending   strings.Builder
	all       strings.Builder // every text add queued, committed or not
	lastFlush time.Time
	timer     *time.Timer
	closed    bool
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
	b.all.WriteString(text)
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
	b.out.emit(b, b.pending.String())
	b.pending.Reset()
	b.lastFlush = time.Now()
}

// take stops the batching and returns the text not committed yet. It must
// be called outside the message's transaction: a timer flush in flight
// holds mu while it waits for the store's writer. Once it returns, emit is
// not called again.
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

// streamed is all the text add queued while the batcher was open, the
// committed batches and the rest alike.
func (b *deltaBatcher) streamed() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.all.String()
}

// liveTurn is the model call a run is making in this process: its message
// id, its streamed text and the Seqs of its delta events. A cancel that
// claims it (Runner.claimLive) stores the text streamed so far as the
// stopped assistant message; the driver then records nothing of the turn.
type liveTurn struct {
	msgID  string
	deltas *deltaBatcher
	seqs   *streamedSeqs
	stream *modelStream
}

// stop ends both delta streams of the call; it is safe to call more than
// once.
func (lt *liveTurn) stop() {
	lt.stream.reasoning.take()
	lt.stream.text.take()
}

// setLive registers run runID's model call lt.
func (r *Runner) setLive(runID string, lt *liveTurn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.live[runID] = lt
}

// unlive removes lt from the runs' model calls. It reports false when a
// cancel claimed lt first: the turn is the cancel's to record.
func (r *Runner) unlive(runID string, lt *liveTurn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[runID] != lt {
		return false
	}
	delete(r.live, runID)
	return true
}

// claimLive takes run runID's model call in this process away from its
// driver (nil when none) and ends its delta streams.
func (r *Runner) claimLive(runID string) *liveTurn {
	r.mu.Lock()
	lt := r.live[runID]
	delete(r.live, runID)
	r.mu.Unlock()
	if lt != nil {
		lt.stop()
	}
	return lt
}

// streamedSeqs collects the Seqs of the delta events a model call
// committed (message_delta and reasoning_delta, from two batchers).
type streamedSeqs struct {
	mu          sync.Mutex
	first, last int64
}

// add records ev (nil: the append failed).
func (s *streamedSeqs) add(ev *store.Event) {
	if ev == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == 0 || ev.Seq < s.first {
		s.first = ev.Seq
	}
	if ev.Seq > s.last {
		s.last = ev.Seq
	}
}

// span is the first and last Seq recorded, zeros when none.
func (s *streamedSeqs) span() [2]int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return [2]int64{s.first, s.last}
}
