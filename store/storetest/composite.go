package storetest

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// exerciseComposite checks the calls that do several things at once: an
// interaction read with its session, run and messages; a transition's rows
// written in one call; a resume that also sets the session running.
func exerciseComposite(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("InteractionGetState", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		m, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_a", SessionID: r.SessionID, RunID: r.ID, Role: "assistant",
			ToolCalls: json.RawMessage(`[{"id":"c1","name":"ask_user","arguments":"{}"}]`), Now: T0})
		require.NoError(t, err)
		calls := []store.ToolCall{{ID: "c1", Name: "ask_user", Arguments: "{}"}}
		require.Equal(t, calls, m.Calls, "the calls decoded once, by the store")
		it := b.ask(t, r, T0.Add(time.Hour))

		got, err := b.st.InteractionGetState(b.ctx, &store.InteractionGetStateParams{ID: it.ID, Messages: true})
		require.NoError(t, err)
		require.Equal(t, it.ID, got.Interaction.ID)
		require.Equal(t, r.SessionID, got.Session.ID)
		require.Equal(t, "alice", got.Session.Owner)
		require.Equal(t, r.ID, got.Run.ID)
		require.Equal(t, store.RunRunning, got.Run.Status)
		require.Len(t, got.Messages, 1)
		require.Equal(t, "msg_a", got.Messages[0].ID)
		require.Equal(t, calls, got.Messages[0].Calls)

		// What a driver's own statement reads is what the single reads
		// give, messages in order.
		for i, role := range []string{"tool", "user", "assistant"} {
			_, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_" + role, SessionID: r.SessionID, RunID: r.ID, Role: role,
				Content: "内容", ToolCallID: map[bool]string{true: "c1"}[role == "tool"], ParentID: map[bool]string{true: "msg_a"}[role == "tool"],
				Metadata: json.RawMessage(`{"k":1}`), Now: T0.Add(time.Duration(i) * time.Second)})
			require.NoError(t, err)
		}
		got, err = b.st.InteractionGetState(b.ctx, &store.InteractionGetStateParams{ID: it.ID, Messages: true})
		require.NoError(t, err)
		want, err := store.GetInteractionState(b.ctx, b.st, &store.InteractionGetStateParams{ID: it.ID, Messages: true})
		require.NoError(t, err)
		require.Equal(t, want, got)
		require.Len(t, got.Messages, 4)

		got, err = b.st.InteractionGetState(b.ctx, &store.InteractionGetStateParams{ID: it.ID})
		require.NoError(t, err)
		require.Nil(t, got.Messages, "messages only when asked")
		want.Messages = nil
		require.Equal(t, want, got)

		_, err = b.st.InteractionGetState(b.ctx, &store.InteractionGetStateParams{ID: "ask_unknown"})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("RowsInsert", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		var out *store.RowsInserted
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			var err error
			out, err = tx.RowsInsert(b.ctx, &store.RowsInsertParams{
				Messages: []*store.MessageInsertParams{{ID: "msg_t", SessionID: r.SessionID, RunID: r.ID, Role: "tool", Content: "结果", ToolCallID: "c1", Name: "x", Now: T0}},
				Events: []*store.EventAppendParams{
					{SessionID: r.SessionID, Name: "user_input_resolved", Data: json.RawMessage(`{"requestId":"ask_1"}`), Now: T0},
					{SessionID: r.SessionID, Name: "tool_result", Data: json.RawMessage(`{"toolCallId":"c1","content":""}`), MessageRef: "msg_t", Now: T0},
				},
				Traces: []*store.TraceInsertParams{{SessionID: r.SessionID, RunID: r.ID, Kind: "interaction", Data: json.RawMessage(`{}`), Now: T0}},
				Audits: []*store.AuditInsertParams{{SessionID: r.SessionID, RequestID: "ask_1", RunID: r.ID, Action: "answered", Now: T0}},
			})
			return err
		}))
		require.Len(t, out.Messages, 1)
		require.Equal(t, "msg_t", out.Messages[0].ID)
		msgs, err := b.st.MessageList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, msgs, 1)
		require.Equal(t, msgs[0].Seq, out.Messages[0].Seq, "the message's number, by the time InTx returned")
		require.Len(t, out.Events, 2)
		require.Less(t, out.Events[0].Seq, out.Events[1].Seq, "events in the order given")
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: r.SessionID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		require.JSONEq(t, `{"toolCallId":"c1","content":"结果"}`, string(evs[1].Data), "the event references the message written with it")
		tr, err := b.st.TraceList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, tr, 1)
		au, err := b.st.AuditList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, au, 1)
		require.Equal(t, "answered", au[0].Action)

		// A failing row rolls the whole call back with its transaction.
		err = b.st.InTx(b.ctx, func(tx store.Tx) error {
			_, err := tx.RowsInsert(b.ctx, &store.RowsInsertParams{
				Messages: []*store.MessageInsertParams{{ID: "msg_t2", SessionID: r.SessionID, RunID: r.ID, Role: "tool", Content: "again", ToolCallID: "c1", Name: "x", Now: T0}},
				Events:   []*store.EventAppendParams{{SessionID: r.SessionID, Name: "x", Data: json.RawMessage(`{}`), Now: T0}},
			})
			return err
		})
		require.ErrorIs(t, err, store.ErrDuplicate)
		evs, err = b.st.EventList(b.ctx, &store.EventListParams{SessionID: r.SessionID, Limit: 10})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		// The same with nothing but an audit row and the COMMIT after it.
		err = b.st.InTx(b.ctx, func(tx store.Tx) error {
			_, err := tx.RowsInsert(b.ctx, &store.RowsInsertParams{
				Messages: []*store.MessageInsertParams{{ID: "msg_t3", SessionID: r.SessionID, RunID: r.ID, Role: "tool", Content: "again", ToolCallID: "c1", Name: "x", Now: T0}},
				Audits:   []*store.AuditInsertParams{{SessionID: r.SessionID, RequestID: "ask_1", RunID: r.ID, Action: "answered", Now: T0}},
			})
			return err
		})
		require.ErrorIs(t, err, store.ErrDuplicate)
		au, err = b.st.AuditList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, au, 1, "no audit row of the rolled back transaction")
	})
	t.Run("RunPauseAndResumeSetTheSessionStatus", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		require.NoError(t, b.st.SessionSetStatus(b.ctx, &store.SessionSetStatusParams{ID: r.SessionID, Status: string(store.RunRunning), Now: T0}))
		won, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_b", Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.False(t, won)
		s, err := b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, string(store.RunRunning), s.Status, "a pause that loses leaves the session as it is")
		require.Equal(t, T0, s.UpdatedAt)
		won, err = b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, string(store.RunWaitingInput), s.Status, "a pause sets the session waiting")
		require.Equal(t, T0, s.UpdatedAt, "a pause does not move the session in the listing")
		won, err = b.st.RunHold(b.ctx, &store.RunHoldParams{ID: r.ID, Now: T0.Add(3 * time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, T0, s.UpdatedAt, "a hold leaves the session as it is")
		// What else set the session's status (an elicitation's wait) the
		// resume replaces.
		require.NoError(t, b.st.SessionSetStatus(b.ctx, &store.SessionSetStatusParams{ID: r.SessionID, Status: string(store.RunWaitingInput), Now: T0}))
		won, err = b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_b", LeaseUntil: T0.Add(time.Minute), Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, string(store.RunRunning), s.Status)
		require.Equal(t, T0, s.UpdatedAt, "a resume does not move the session in the listing")
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, LeaseOwner: "inst_a", To: store.RunCompleted, Now: T0.Add(4 * time.Second)})
		require.NoError(t, err)
		require.False(t, won)
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, string(store.RunRunning), s.Status, "a finish that loses leaves the session as it is")
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, To: store.RunCompleted, Now: T0.Add(4 * time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, string(store.RunCompleted), s.Status, "a finish sets the session's status")
		require.Equal(t, T0, s.UpdatedAt, "a finish does not move the session in the listing")
		// In a transaction, with other rows after it (PostgreSQL writes the
		// session's status last).
		r2, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), Now: T0.Add(2 * time.Second)})
		require.NoError(t, err)
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			won, err := tx.RunFinish(b.ctx, &store.RunFinishParams{ID: r2.ID, To: store.RunFailed, Error: "boom", Now: T0.Add(5 * time.Second)})
			if err != nil || !won {
				return fmt.Errorf("finish: %v %w", won, err)
			}
			_, err = tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: r.SessionID, Name: "done", Data: []byte(`{}`), RunID: r2.ID, Now: T0.Add(5 * time.Second)})
			return err
		}))
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, string(store.RunFailed), s.Status)
		require.Equal(t, T0.Add(2*time.Second), s.UpdatedAt, "updatedAt is the last run's start")
		require.NoError(t, b.st.SessionSetStatus(b.ctx, &store.SessionSetStatusParams{ID: r.SessionID, Status: string(store.RunWaitingInput), Now: T0}))
		won, err = b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_b", LeaseUntil: T0.Add(time.Minute), Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.False(t, won)
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, string(store.RunWaitingInput), s.Status)

		// A resume that loses leaves the session as it is.
		require.NoError(t, b.st.SessionSetStatus(b.ctx, &store.SessionSetStatusParams{ID: r.SessionID, Status: "idle", Now: T0}))
		won, err = b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_b", LeaseUntil: T0.Add(time.Minute), Now: T0.Add(2 * time.Second)})
		require.NoError(t, err)
		require.False(t, won)
		s, err = b.st.SessionGet(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, "idle", s.Status)
	})
	t.Run("MustWinLostCommitsNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Hour))
		resolve := func(tx store.Tx) (bool, error) {
			return tx.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "answered",
				Answer: json.RawMessage(`{}`), Now: T0, MustWin: true})
		}
		b.mustWin(t, r, resolve, true, true)
		b.mustWin(t, r, resolve, false, true)
		b.mustWin(t, r, resolve, false, false)

		// A run's pause and end, of runs written in a transaction before
		// (a driver may know their sessions then) and of one not.
		for _, r := range []*store.Run{b.runInTx(t), b.runInTx(t), b.run(t)} {
			pause := func(tx store.Tx) (bool, error) {
				return tx.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0, MustWin: true})
			}
			b.mustWin(t, r, pause, true, true)
			b.mustWin(t, r, pause, false, true)
			b.mustWin(t, r, pause, false, false)
		}
		// A resume of a paused run (settled: it waits on nothing else).
		for _, r := range []*store.Run{b.runInTx(t), b.run(t)} {
			won, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0})
			require.NoError(t, err)
			require.True(t, won)
			resume := func(tx store.Tx) (bool, error) {
				return tx.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), Now: T0,
					Settled: true, MustWin: true})
			}
			b.mustWin(t, r, resume, true, true)
			b.mustWin(t, r, resume, false, true)
			b.mustWin(t, r, resume, false, false)
		}
		for _, r := range []*store.Run{b.runInTx(t), b.run(t)} {
			finish := func(tx store.Tx) (bool, error) {
				return tx.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: "inst_a",
					To: store.RunCompleted, Now: T0, MustWin: true})
			}
			b.mustWin(t, r, finish, true, true)
			b.mustWin(t, r, finish, false, true)
			b.mustWin(t, r, finish, false, false)
		}
	})
	t.Run("RunResumeSettledWaitsForEveryQuestion", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		won, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		one, two := b.ask(t, r, T0.Add(time.Hour)), b.ask(t, r, T0.Add(time.Hour))
		resume := func(resolving ...string) bool {
			t.Helper()
			won, err := b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_b", LeaseUntil: T0.Add(time.Minute), Now: T0,
				Settled: true, Resolving: resolving})
			require.NoError(t, err)
			return won
		}
		require.False(t, resume(), "two questions pending")
		require.False(t, resume(one.ID), "the other is pending")
		won, err = b.st.RunHold(b.ctx, &store.RunHoldParams{ID: r.ID, Now: T0})
		require.NoError(t, err)
		require.True(t, won, "a waiting run is held")
		won, err = b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: one.ID, SessionID: r.SessionID, Status: "answered", Answer: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		require.False(t, resume(), "one still pending")
		require.True(t, resume(two.ID), "the last one")
		won, err = b.st.RunHold(b.ctx, &store.RunHoldParams{ID: r.ID, Now: T0})
		require.NoError(t, err)
		require.False(t, won, "a running run is not held")
	})
}

// mustWin runs write, a MustWin conditional write, in a transaction that
// then writes an audit row and (with events) appends a feed event (done)
// and another, as a caller does: it gives up (ErrLost) when the write
// reports it lost. With wins the transaction must commit them all, each
// event with the number EventAppend returned (by the time InTx returned)
// and the feed entry naming its event's; otherwise InTx must return an
// error wrapping store.ErrLost, whether the driver reported the loss at
// once or failed the transaction later (without events nothing but the
// COMMIT follows the write), and nothing of it may be committed.
func (b *testBundle) mustWin(t *testing.T, r *store.Run, write func(tx store.Tx) (bool, error), wins, events bool) {
	t.Helper()
	before, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: r.SessionID})
	require.NoError(t, err)
	audits, err := b.st.AuditList(b.ctx, r.SessionID)
	require.NoError(t, err)
	feed, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "alice"})
	require.NoError(t, err)
	var done, status *store.Event
	err = b.st.InTx(b.ctx, func(tx store.Tx) error {
		won, err := write(tx)
		if err != nil {
			return err
		}
		if !won {
			return fmt.Errorf("the write lost: %w", store.ErrLost)
		}
		if err := tx.AuditInsert(b.ctx, &store.AuditInsertParams{SessionID: r.SessionID, RunID: r.ID, Action: "answered", Now: T0}); err != nil || !events {
			return err
		}
		if done, err = tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: r.SessionID, Name: "done", Data: json.RawMessage(`{}`), RunID: r.ID, Now: T0}); err != nil {
			return err
		}
		status, err = tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: r.SessionID, Name: "status", Data: json.RawMessage(`{}`), Now: T0})
		return err
	})
	after, lerr := b.st.EventList(b.ctx, &store.EventListParams{SessionID: r.SessionID})
	require.NoError(t, lerr)
	auditsAfter, lerr := b.st.AuditList(b.ctx, r.SessionID)
	require.NoError(t, lerr)
	feedAfter, lerr := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "alice"})
	require.NoError(t, lerr)
	if wins {
		require.NoError(t, err)
		require.Len(t, auditsAfter, len(audits)+1, "the audit row committed")
		if events {
			require.Len(t, after, len(before)+2, "the events committed")
			require.Equal(t, after[len(after)-2].Seq, done.Seq, "done's number as EventAppend returned it")
			require.Equal(t, after[len(after)-1].Seq, status.Seq, "status's number as EventAppend returned it")
			require.Len(t, feedAfter, len(feed)+1, "done's feed entry")
			require.Equal(t, done.Seq, feedAfter[len(feedAfter)-1].SessionSeq, "the feed entry names done's number")
		}
		return
	}
	require.ErrorIs(t, err, store.ErrLost)
	require.Len(t, after, len(before), "no event of a lost transaction")
	require.Len(t, auditsAfter, len(audits), "no audit row of a lost transaction")
	require.Len(t, feedAfter, len(feed), "no feed entry of a lost transaction")
}

// runInTx inserts a running run in a new session owned by "alice", leased
// to "inst_a" for a minute, in one transaction (a driver may remember the
// run's session then, as it does for the runs it writes).
func (b *testBundle) runInTx(t *testing.T) *store.Run {
	t.Helper()
	var r *store.Run
	require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
		s, err := tx.SessionCreate(b.ctx, &store.SessionCreateParams{ID: b.id("sess"), Owner: "alice", Title: "t", Status: "running", Now: T0})
		if err != nil {
			return err
		}
		r, err = tx.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: s.ID, Agent: "default",
			LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), Now: T0})
		return err
	}))
	return r
}
