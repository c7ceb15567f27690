package agent

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// storeLoggedStopped is storeStopped for a reply this process does not
// stream (another replica drives the run): the text is what the driving
// process committed as message_delta events of the model call in progress,
// which is the text every stream has shown. It stores that text as run's
// assistant message, marked stopped, with its message event, and deletes
// the call's deltas, in tx (the transaction that ends the run), so every
// replica's stream gets the message before done, as after a local stop.
// Text the driver had not committed yet (at most one batch,
// deltaFlushInterval) is not in it. No delta in progress stores nothing.
func (r *Runner) storeLoggedStopped(ctx context.Context, tx store.Tx, run *store.Run) error {
	p, err := loggedReply(ctx, tx, run.SessionID)
	if err != nil || p == nil {
		return err
	}
	if p.text != "" {
		if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: p.msgID, SessionID: run.SessionID, RunID: run.ID, Role: "assistant",
			Content: p.text, Metadata: mustJSON(messageMetadata{Stopped: true}), Now: r.now()}); err != nil {
			return err
		}
		if _, err := r.emitContent(ctx, tx, run.SessionID, api.EventMessage, p.msgID, api.MessageEvent{MessageID: p.msgID, Role: "assistant", Stopped: true}); err != nil {
			return err
		}
	}
	// After the message event, never before: the log's last event must stay.
	_, err = tx.EventDelete(ctx, &store.EventDeleteParams{SessionID: run.SessionID, FromSeq: p.first, ToSeq: p.last,
		Names: []string{api.EventMessageDelta, api.EventReasoningDelta}})
	return err
}

// loggedPartial is the reply a model call has streamed into the log so far.
type loggedPartial struct {
	msgID       string
	text        string // its message_delta text, in order
	first, last int64  // the Seqs of its first and last delta event
}

// loggedReply finds the reply in progress in sessionID's log: a model call
// appends only delta events, so the call in progress is the run of delta
// events at the end of the log, and its message id is the last one's (an
// attempt that died mid-stream left deltas of another id before it). It
// returns nil when the log does not end with a delta. It reads back from
// the end in growing windows, so a long log costs what its last turn does.
func loggedReply(ctx context.Context, ex store.Executor, sessionID string) (*loggedPartial, error) {
	s, err := ex.SessionGet(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	for window := int64(64); ; window *= 4 {
		after := max(s.LastSeq-window, 0)
		var evs []*store.Event
		for from := after; ; {
			page, err := ex.EventList(ctx, &store.EventListParams{SessionID: sessionID, AfterSeq: from})
			if err != nil {
				return nil, err
			}
			evs = append(evs, page...)
			if len(page) < 1000 {
				break
			}
			from = page[len(page)-1].Seq
		}
		start := len(evs)
		for start > 0 && isDelta(evs[start-1].Name) {
			start--
		}
		if start == 0 && after > 0 {
			continue // the deltas may begin before the window
		}
		if start == len(evs) {
			return nil, nil
		}
		var last struct {
			MessageID string `json:"messageId"`
		}
		if err := json.Unmarshal(evs[len(evs)-1].Data, &last); err != nil || last.MessageID == "" {
			return nil, err
		}
		p := &loggedPartial{msgID: last.MessageID}
		var text strings.Builder
		for _, ev := range evs[start:] {
			var d api.MessageDeltaEvent // a reasoning_delta decodes the same way
			if json.Unmarshal(ev.Data, &d) != nil || d.MessageID != p.msgID {
				continue
			}
			if p.first == 0 {
				p.first = ev.Seq
			}
			p.last = ev.Seq
			if ev.Name == api.EventMessageDelta {
				text.WriteString(d.Delta)
			}
		}
		p.text = text.String()
		return p, nil
	}
}

func isDelta(name string) bool {
	return name == api.EventMessageDelta || name == api.EventReasoningDelta
}

// peerStopCheck is how often, at most, a model call re-reads its run when
// its session's log moves, to find a stop that another process committed.
// A call shorter than that reads nothing.
const peerStopCheck = 200 * time.Millisecond

// watchPeerStop follows sessionID's log while run runID's model call lt
// streams in this process: when the run has ended or left this process (a
// cancel through another replica, which stored the partial reply itself),
// it claims lt, so the turn records nothing and commits no more deltas,
// and calls stop to end the model call. The wake-up is the store's (PG
// NOTIFY across replicas); the run row is read at most every
// peerStopCheck, the first time peerStopCheck after the call began if the
// log moved meanwhile. Call end once the call returned; what the watch
// started ends when ctx is done. Its goroutine starts only after
// peerStopCheck: a shorter call costs a subscription and a timer.
func (r *Runner) watchPeerStop(ctx context.Context, sessionID, runID string, lt *liveTurn, stop context.CancelFunc) *peerWatch {
	w := &peerWatch{r: r, ctx: ctx, runID: runID, lt: lt, stop: stop}
	w.wake, w.unsubscribe = r.st.Subscribe(sessionID)
	w.next = time.Now().Add(peerStopCheck)
	w.t = time.AfterFunc(peerStopCheck, w.follow)
	return w
}

// peerWatch is a watchPeerStop.
type peerWatch struct {
	r           *Runner
	ctx         context.Context
	runID       string
	lt          *liveTurn
	stop        context.CancelFunc
	wake        <-chan struct{}
	unsubscribe func()
	next        time.Time // the earliest read
	t           *time.Timer
}

// end ends the watch unless its goroutine started (that one ends with
// ctx).
func (w *peerWatch) end() {
	if w.t.Stop() {
		w.unsubscribe()
	}
}

// follow is the watch from the time next until ctx is done: a wake-up that
// came before next (left in wake) makes it read the run at once.
func (w *peerWatch) follow() {
	defer w.unsubscribe()
	r, ctx, runID, lt, stop, wake, next := w.r, w.ctx, w.runID, w.lt, w.stop, w.wake, w.next
	var timer *time.Timer
	var fire <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-wake:
			if wait := time.Until(next); wait > 0 {
				if timer == nil {
					timer = time.NewTimer(wait)
					fire = timer.C
				}
				continue
			}
		case <-fire:
			timer, fire = nil, nil
		}
		next = time.Now().Add(peerStopCheck)
		run, err := r.st.RunGet(ctx, runID)
		if err != nil {
			continue
		}
		if run.Status != store.RunRunning || run.LeaseOwner != r.opts.InstanceID {
			if r.unlive(runID, lt) { // still this call's: claim it
				lt.stop()
				stop()
			}
			return
		}
	}
}
