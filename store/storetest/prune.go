package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// ExerciseMaintainer runs the conformance cases of store.Maintainer
// (docs/design.md §14: DELETE /api/sessions/{id}, retention, /metrics counts).
// newStore returns a fresh, empty store that implements store.Maintainer.
func ExerciseMaintainer(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("SessionDelete", func(t *testing.T) { t.Parallel(); exerciseSessionDelete(t, newStore) })
	t.Run("SessionSetTitle", func(t *testing.T) { t.Parallel(); exerciseSessionSetTitle(t, newStore) })
	t.Run("Prune", func(t *testing.T) { t.Parallel(); exercisePrune(t, newStore) })
	t.Run("PruneFeed", func(t *testing.T) { t.Parallel(); exercisePruneFeed(t, newStore) })
	t.Run("Stats", func(t *testing.T) { t.Parallel(); exerciseStats(t, newStore) })
}

// filled is one session with a run in status, a message, an interaction,
// an event, an audit and a trace entry, all written at "at".
func (b *testBundle) filled(t *testing.T, status store.RunStatus, at time.Time) (sessionID, runID string) {
	t.Helper()
	sid, rid := b.id("sess"), b.id("run")
	_, err := b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: sid, Owner: "owner", Title: "t", Now: at})
	require.NoError(t, err)
	_, err = b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: rid, SessionID: sid, Agent: "a", LeaseOwner: "p", LeaseUntil: at.Add(time.Minute), Now: at})
	require.NoError(t, err)
	_, err = b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: b.id("msg"), SessionID: sid, RunID: rid, Role: "user", Content: "hi", Now: at})
	require.NoError(t, err)
	_, err = b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: b.id("req"), SessionID: sid, RunID: rid, ToolCallID: b.id("call"),
		Tool: "ask_user", Request: json.RawMessage(`{}`), Now: at, ExpiresAt: at.Add(time.Hour)})
	require.NoError(t, err)
	_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: sid, Name: "message", Data: json.RawMessage(`{}`), Now: at})
	require.NoError(t, err)
	require.NoError(t, b.st.AuditInsert(b.ctx, &store.AuditInsertParams{SessionID: sid, RequestID: "req", Action: "requested", Now: at}))
	require.NoError(t, b.st.TraceInsert(b.ctx, &store.TraceInsertParams{SessionID: sid, RunID: rid, Kind: "model_call", Data: json.RawMessage(`{}`), Now: at}))
	if status != store.RunRunning {
		var won bool
		if status == store.RunWaitingInput {
			won, err = b.st.RunPause(b.ctx, &store.RunPauseParams{ID: rid, LeaseOwner: "p", Now: at})
		} else {
			won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: rid, To: status, Now: at})
		}
		require.NoError(t, err)
		require.True(t, won)
		require.NoError(t, b.st.SessionSetStatus(b.ctx, &store.SessionSetStatusParams{ID: sid, Status: string(status), Now: at}))
	}
	return sid, rid
}

func maintainer(t *testing.T, st store.Store) store.Maintainer {
	t.Helper()
	m, ok := st.(store.Maintainer)
	require.True(t, ok, "%T does not implement store.Maintainer", st)
	return m
}

func exerciseSessionSetTitle(t *testing.T, newStore func(t *testing.T) store.Store) {
	b := setup(t, newStore)
	m := maintainer(t, b.st)
	require.ErrorIs(t, m.SessionSetTitle(b.ctx, "sess_none", "x"), store.ErrNotFound)

	renamed, _ := b.filled(t, store.RunCompleted, T0)
	kept, _ := b.filled(t, store.RunCompleted, T0)
	before, err := b.st.SessionGet(b.ctx, renamed)
	require.NoError(t, err)
	require.NoError(t, m.SessionSetTitle(b.ctx, renamed, "新的标题 ✓"))
	after, err := b.st.SessionGet(b.ctx, renamed)
	require.NoError(t, err)
	require.Equal(t, "新的标题 ✓", after.Title)
	require.True(t, before.UpdatedAt.Equal(after.UpdatedAt), "a rename does not reorder the list")
	other, err := b.st.SessionGet(b.ctx, kept)
	require.NoError(t, err)
	require.Equal(t, "t", other.Title)
}

func exerciseSessionDelete(t *testing.T, newStore func(t *testing.T) store.Store) {
	b := setup(t, newStore)
	m := maintainer(t, b.st)

	require.ErrorIs(t, m.SessionDelete(b.ctx, "sess_none"), store.ErrNotFound)

	active, _ := b.filled(t, store.RunWaitingInput, T0)
	require.ErrorIs(t, m.SessionDelete(b.ctx, active), store.ErrRunActive)
	_, err := b.st.SessionGet(b.ctx, active)
	require.NoError(t, err, "a refused delete changes nothing")
	evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: active})
	require.NoError(t, err)
	require.Len(t, evs, 1)

	gone, goneRun := b.filled(t, store.RunCompleted, T0)
	kept, _ := b.filled(t, store.RunCompleted, T0)
	require.NoError(t, m.SessionDelete(b.ctx, gone))
	_, err = b.st.SessionGet(b.ctx, gone)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.st.RunGet(b.ctx, goneRun)
	require.ErrorIs(t, err, store.ErrNotFound)
	msgs, err := b.st.MessageList(b.ctx, gone)
	require.NoError(t, err)
	require.Empty(t, msgs)
	its, err := b.st.InteractionList(b.ctx, gone)
	require.NoError(t, err)
	require.Empty(t, its)
	evs, err = b.st.EventList(b.ctx, &store.EventListParams{SessionID: gone})
	require.NoError(t, err)
	require.Empty(t, evs)
	tr, err := b.st.TraceList(b.ctx, gone)
	require.NoError(t, err)
	require.Empty(t, tr)
	au, err := b.st.AuditList(b.ctx, gone)
	require.NoError(t, err)
	require.Len(t, au, 1, "audit entries are kept")
	require.ErrorIs(t, m.SessionDelete(b.ctx, gone), store.ErrNotFound)

	// Other sessions are untouched.
	msgs, err = b.st.MessageList(b.ctx, kept)
	require.NoError(t, err)
	require.Len(t, msgs, 1)
	evs, err = b.st.EventList(b.ctx, &store.EventListParams{SessionID: kept})
	require.NoError(t, err)
	require.Len(t, evs, 1)

	// The owner's feed numbers go on past a deleted session that held the
	// last of them.
	last, _ := b.filled(t, store.RunCompleted, T0)
	_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: last, Name: "done", Data: json.RawMessage(`{}`), Now: T0})
	require.NoError(t, err)
	seen, err := b.st.FeedLastSeq(b.ctx, "owner")
	require.NoError(t, err)
	require.Positive(t, seen)
	require.NoError(t, m.SessionDelete(b.ctx, last))
	n, err := b.st.FeedLastSeq(b.ctx, "owner")
	require.NoError(t, err)
	require.Equal(t, seen, n, "a deleted session's feed numbers stay taken")
	_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: kept, Name: "done", Data: json.RawMessage(`{}`), Now: T0})
	require.NoError(t, err)
	feed, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "owner"})
	require.NoError(t, err)
	require.Len(t, feed, 1)
	require.Equal(t, seen+1, feed[0].Seq, "the next entry is not given a deleted one's number")
}

func exercisePrune(t *testing.T, newStore func(t *testing.T) store.Store) {
	b := setup(t, newStore)
	m := maintainer(t, b.st)
	old := T0.Add(-40 * 24 * time.Hour)
	cutoff := T0.Add(-30 * 24 * time.Hour)

	oldEnded, _ := b.filled(t, store.RunCompleted, old)
	oldWaiting, _ := b.filled(t, store.RunWaitingInput, old)
	recent, _ := b.filled(t, store.RunCompleted, T0)
	// A run started long ago that ended after the cutoff: the session's
	// last activity is the run's end, though its updatedAt is the start.
	endedLate, endedLateRun := b.filled(t, store.RunWaitingInput, old)
	won, err := b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: endedLateRun, To: store.RunExpired, Now: T0})
	require.NoError(t, err)
	require.True(t, won)
	// Many old ended sessions: more than one call's Limit.
	var many []string
	for range 5 {
		s, _ := b.filled(t, store.RunCancelled, old)
		many = append(many, s)
	}

	// A zero time prunes nothing.
	res, err := m.Prune(b.ctx, &store.PruneParams{})
	require.NoError(t, err)
	require.Zero(t, res.Total())

	var total store.PruneResult
	for range 10 {
		res, err := m.Prune(b.ctx, &store.PruneParams{EventsBefore: cutoff, Limit: 2})
		require.NoError(t, err)
		require.LessOrEqual(t, res.Events, int64(2), "at most Limit sessions per call")
		total.Add(res)
		if res.Total() == 0 {
			break
		}
	}
	require.Equal(t, store.PruneResult{Events: 6, Trace: 6}, total)

	count := func(sid string) (events, trace, audit, msgs int) {
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: sid})
		require.NoError(t, err)
		tr, err := b.st.TraceList(b.ctx, sid)
		require.NoError(t, err)
		au, err := b.st.AuditList(b.ctx, sid)
		require.NoError(t, err)
		ms, err := b.st.MessageList(b.ctx, sid)
		require.NoError(t, err)
		return len(evs), len(tr), len(au), len(ms)
	}
	e, tr, _, _ := count(endedLate)
	require.Equal(t, []int{1, 1}, []int{e, tr}, "a session whose run ended after the cutoff keeps its events and trace")
	for _, sid := range append(many, oldEnded) {
		e, tr, a, ms := count(sid)
		require.Equal(t, []int{0, 0, 1, 1}, []int{e, tr, a, ms}, "an old ended session keeps its transcript and audit, loses events and trace")
		s, err := b.st.SessionGet(b.ctx, sid)
		require.NoError(t, err)
		require.Equal(t, int64(1), s.LastSeq, "sequence numbers go on from where they were")
	}
	e, tr, _, _ = count(oldWaiting)
	require.Equal(t, []int{1, 1}, []int{e, tr}, "a session whose run waits for an answer keeps everything")
	e, tr, _, _ = count(recent)
	require.Equal(t, []int{1, 1}, []int{e, tr}, "a recent session keeps everything")

	// Audit has its own, longer retention.
	res, err = m.Prune(b.ctx, &store.PruneParams{AuditBefore: cutoff})
	require.NoError(t, err)
	require.Equal(t, store.PruneResult{Audit: 8}, *res)
	_, _, a, _ := count(recent)
	require.Equal(t, 1, a)
	_, _, a, _ = count(oldEnded)
	require.Equal(t, 0, a)
	_, _, a, _ = count(oldWaiting)
	require.Equal(t, 0, a, "audit age is the entry's own, whatever its session")
}

// exercisePruneFeed: retention of the principal feed and the webhook
// outbox. Old entries already fanned out go, an old entry not fanned out
// yet stays (it is an outbox row), and so do recent ones; old deliveries
// that ended go, pending ones stay whatever their age. Feed numbering goes
// on after a prune.
func exercisePruneFeed(t *testing.T, newStore func(t *testing.T) store.Store) {
	b := setup(t, newStore)
	m := maintainer(t, b.st)
	old := T0.Add(-40 * 24 * time.Hour)
	cutoff := T0.Add(-30 * 24 * time.Hour)
	r := b.ownedRun(t, "alice", "s", "a")
	other := b.ownedRun(t, "bob", "s", "a")

	appendAt := func(sid, name string, at time.Time) {
		t.Helper()
		_, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: sid, Name: name, Data: json.RawMessage(`{}`), Now: at})
		require.NoError(t, err)
	}
	// Feed: alice 1..4 old, 5 recent; bob 1 old. Fan out every old one
	// but alice's 4 and the recent one.
	for range 4 {
		appendAt(r.SessionID, "user_input_resolved", old)
	}
	appendAt(r.SessionID, "done", T0)
	appendAt(other.SessionID, "done", old)
	un, err := b.st.FeedListUnfanned(b.ctx, 100)
	require.NoError(t, err)
	require.Len(t, un, 6)
	delivery := func(id string, f *store.FeedEntry) []*store.WebhookDelivery {
		return []*store.WebhookDelivery{{ID: id, Hook: "https://h/", SessionID: f.SessionID, Type: "interaction.resolved", Body: json.RawMessage(`{}`)}}
	}
	fanned := 0
	for _, f := range un {
		if f.CreatedAt.After(cutoff) || (f.Owner == "alice" && f.Seq == 4) {
			continue
		}
		require.NoError(t, b.st.WebhookEnqueue(b.ctx, &store.WebhookEnqueueParams{Owner: f.Owner, Seq: f.Seq, Now: old,
			Deliveries: delivery(fmt.Sprintf("msg_%s_%d", f.Owner, f.Seq), f)}))
		fanned++
	}
	require.Equal(t, 4, fanned)
	// Deliveries: alice 1 delivered, alice 2 failed, alice 3 still pending
	// (old), bob 1 delivered recently.
	claim := func(now time.Time) map[string]bool {
		t.Helper()
		ds, err := b.st.WebhookClaim(b.ctx, &store.WebhookClaimParams{Owner: "inst", Until: now.Add(time.Minute), Now: now, Limit: 10})
		require.NoError(t, err)
		out := map[string]bool{}
		for _, d := range ds {
			out[d.ID] = true
		}
		return out
	}
	got := claim(old)
	require.Len(t, got, 4)
	end := func(id, status string, at time.Time) {
		t.Helper()
		next := time.Time{}
		if status == store.WebhookPending {
			next = T0.Add(time.Hour)
		}
		won, err := b.st.WebhookFinish(b.ctx, &store.WebhookFinishParams{ID: id, LeaseOwner: "inst", Status: status, NextAt: next, Now: at})
		require.NoError(t, err)
		require.True(t, won)
	}
	end("msg_alice_1", store.WebhookDelivered, old)
	end("msg_alice_2", store.WebhookFailed, old)
	end("msg_alice_3", store.WebhookPending, old)
	end("msg_bob_1", store.WebhookDelivered, T0)

	var total store.PruneResult
	for range 10 {
		res, err := m.Prune(b.ctx, &store.PruneParams{EventsBefore: cutoff, Limit: 1})
		require.NoError(t, err)
		total.Add(res)
		if res.Total() == 0 {
			break
		}
	}
	require.Equal(t, int64(4), total.Feed, "the old entries that were fanned out: alice 1–3, bob 1")
	require.Equal(t, int64(2), total.Webhooks, "the old deliveries that ended: alice 1 and 2")

	feed, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "alice"})
	require.NoError(t, err)
	var seqs []int64
	for _, f := range feed {
		seqs = append(seqs, f.Seq)
	}
	require.Equal(t, []int64{4, 5}, seqs, "an entry not fanned out stays whatever its age; a recent one stays")
	bob, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "bob"})
	require.NoError(t, err)
	require.Empty(t, bob)
	last, err := b.st.FeedLastSeq(b.ctx, "bob")
	require.NoError(t, err)
	require.Equal(t, int64(1), last, "numbering goes on after a prune")
	appendAt(other.SessionID, "done", T0)
	bob, err = b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "bob"})
	require.NoError(t, err)
	require.Len(t, bob, 1)
	require.Equal(t, int64(2), bob[0].Seq)

	ids := func(sid string) []string {
		ds, err := b.st.WebhookList(b.ctx, sid)
		require.NoError(t, err)
		var out []string
		for _, d := range ds {
			out = append(out, d.ID+"="+d.Status)
		}
		return out
	}
	require.Equal(t, []string{"msg_alice_3=pending"}, ids(r.SessionID), "a pending delivery is kept whatever its age")
	require.Equal(t, []string{"msg_bob_1=delivered"}, ids(other.SessionID), "a recent delivery is kept")
	un, err = b.st.FeedListUnfanned(b.ctx, 100)
	require.NoError(t, err)
	require.Len(t, un, 3, "alice 4 and 5, bob 2 are still to fan out")
}

func exerciseStats(t *testing.T, newStore func(t *testing.T) store.Store) {
	b := setup(t, newStore)
	m := maintainer(t, b.st)
	st, err := m.Stats(b.ctx)
	require.NoError(t, err)
	require.Empty(t, st.Runs)
	require.Zero(t, st.PendingInteractions)

	b.filled(t, store.RunWaitingInput, T0)
	b.filled(t, store.RunCompleted, T0)
	b.filled(t, store.RunCompleted, T0)
	b.filled(t, store.RunRunning, T0)
	st, err = m.Stats(b.ctx)
	require.NoError(t, err)
	require.Equal(t, map[store.RunStatus]int64{store.RunWaitingInput: 1, store.RunCompleted: 2, store.RunRunning: 1}, st.Runs)
	require.Equal(t, int64(4), st.PendingInteractions, "every filled session has a pending interaction")
}
