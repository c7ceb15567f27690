package storetest

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// exerciseDeadlines checks the due times of interactions (docs/design.md
// §16 "Deadlines"): written with the interaction, listed when due, fired
// once by a conditional write.
func exerciseDeadlines(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("WrittenWithTheInteraction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_d", SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_d", Tool: "approval",
			Request: json.RawMessage(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour), TimeoutData: json.RawMessage(`{"onTimeout":"reject"}`),
			Deadlines: []store.DeadlineSpec{
				{Kind: store.DeadlineRemind, DueAt: T0.Add(10 * time.Minute)},
				{Kind: store.DeadlineEscalate, DueAt: T0.Add(30 * time.Minute), Data: json.RawMessage(`{"to":["bob"]}`)},
			}})
		require.NoError(t, err)
		ds, err := b.st.DeadlineList(b.ctx, it.ID)
		require.NoError(t, err)
		require.Len(t, ds, 3)
		require.Equal(t, store.Deadline{RequestID: it.ID, SessionID: r.SessionID, Seq: 0, Kind: store.DeadlineTimeout, DueAt: T0.Add(time.Hour), Data: json.RawMessage(`{"onTimeout":"reject"}`)}, *ds[0])
		require.Equal(t, store.Deadline{RequestID: it.ID, SessionID: r.SessionID, Seq: 1, Kind: store.DeadlineRemind, DueAt: T0.Add(10 * time.Minute)}, *ds[1])
		require.Equal(t, store.Deadline{RequestID: it.ID, SessionID: r.SessionID, Seq: 2, Kind: store.DeadlineEscalate, DueAt: T0.Add(30 * time.Minute), Data: json.RawMessage(`{"to":["bob"]}`)}, *ds[2])

		// A duplicate tool call writes neither the interaction nor deadlines.
		_, err = b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_dup", SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_d", Tool: "approval",
			Request: json.RawMessage(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour)})
		require.ErrorIs(t, err, store.ErrDuplicate)
		ds, err = b.st.DeadlineList(b.ctx, "ask_dup")
		require.NoError(t, err)
		require.Empty(t, ds)

		// A transaction rolled back writes none.
		err = b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_rb", SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_rb", Tool: "ask_user",
				Request: json.RawMessage(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
				return err
			}
			return store.ErrNotFound
		})
		require.ErrorIs(t, err, store.ErrNotFound)
		ds, err = b.st.DeadlineList(b.ctx, "ask_rb")
		require.NoError(t, err)
		require.Empty(t, ds)
	})
	t.Run("CommitWakesDeadlineKey", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		wake, unsub := b.st.Subscribe(store.DeadlineKey)
		defer unsub()
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			_, err := tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_w", SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_w", Tool: "ask_user",
				Request: json.RawMessage(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour)})
			return err
		}))
		// The commit woke the key before InTx returned.
		select {
		case <-wake:
		default:
			t.Fatal("the commit that inserted a question's deadlines did not wake store.DeadlineKey")
		}
	})
	t.Run("DueAndNext", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		next, err := b.st.DeadlineNextDue(b.ctx)
		require.NoError(t, err)
		require.True(t, next.IsZero(), "no deadline: the zero time")
		r1, r2 := b.run(t), b.run(t)
		late := b.ask(t, r1, T0.Add(2*time.Hour))
		early := b.ask(t, r2, T0.Add(time.Hour))
		b.ask(t, r2, T0.Add(3*time.Hour))
		next, err = b.st.DeadlineNextDue(b.ctx)
		require.NoError(t, err)
		require.Equal(t, T0.Add(time.Hour), next)
		due, err := b.st.DeadlineListDue(b.ctx, &store.DeadlineListDueParams{Now: T0.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.Len(t, due, 2, "due_at <= now is due")
		require.Equal(t, []string{early.ID, late.ID}, []string{due[0].RequestID, due[1].RequestID}, "earliest first")
		require.Equal(t, store.DeadlineTimeout, due[0].Kind)
		due, err = b.st.DeadlineListDue(b.ctx, &store.DeadlineListDueParams{Now: T0.Add(2 * time.Hour), Limit: 1})
		require.NoError(t, err)
		require.Len(t, due, 1)

		won, err := b.st.DeadlineFire(b.ctx, &store.DeadlineFireParams{RequestID: early.ID, Seq: 0, Pending: true, Now: T0.Add(time.Hour)})
		require.NoError(t, err)
		require.True(t, won)
		won, err = b.st.DeadlineFire(b.ctx, &store.DeadlineFireParams{RequestID: early.ID, Seq: 0, Now: T0.Add(time.Hour)})
		require.NoError(t, err)
		require.False(t, won, "a deadline fires once")
		next, err = b.st.DeadlineNextDue(b.ctx)
		require.NoError(t, err)
		require.Equal(t, T0.Add(2*time.Hour), next, "a fired deadline is not next")
		due, err = b.st.DeadlineListDue(b.ctx, &store.DeadlineListDueParams{Now: T0.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.Len(t, due, 1)
		require.Equal(t, late.ID, due[0].RequestID)
		ds, err := b.st.DeadlineList(b.ctx, early.ID)
		require.NoError(t, err)
		require.Equal(t, T0.Add(time.Hour), ds[0].FiredAt)
	})
	t.Run("FirePendingOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: b.id("ask"), SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_p", Tool: "ask_user",
			Request: json.RawMessage(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour), Deadlines: []store.DeadlineSpec{{Kind: store.DeadlineRemind, DueAt: T0.Add(time.Minute)}}})
		require.NoError(t, err)
		won, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "answered", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		won, err = b.st.DeadlineFire(b.ctx, &store.DeadlineFireParams{RequestID: it.ID, Seq: 1, Pending: true, Now: T0.Add(time.Minute)})
		require.NoError(t, err)
		require.False(t, won, "the reminder of an answered question does not fire")
		won, err = b.st.DeadlineFire(b.ctx, &store.DeadlineFireParams{RequestID: it.ID, Seq: 1, Now: T0.Add(time.Minute)})
		require.NoError(t, err)
		require.True(t, won, "without Pending it is closed whatever the question's status")
	})
	t.Run("FireRace", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Minute))
		var mu sync.Mutex
		wins := 0
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var won bool
				err := b.st.InTx(b.ctx, func(tx store.Tx) error {
					var err error
					won, err = tx.DeadlineFire(b.ctx, &store.DeadlineFireParams{RequestID: it.ID, Seq: 0, Pending: true, Now: T0.Add(time.Minute)})
					return err
				})
				if err == nil && won {
					mu.Lock()
					wins++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		require.Equal(t, 1, wins, "one of the racing transactions fires the deadline")
	})
	t.Run("Delegate", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: b.id("ask"), SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_dl", Tool: "approval",
			Request: json.RawMessage(`{}`), Route: json.RawMessage(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour)})
		require.NoError(t, err)
		require.NoError(t, b.st.AssigneeAdd(b.ctx, &store.AssigneeAddParams{RequestID: it.ID, Persons: []string{"alice", "bob"}, Via: store.AssigneeRoute, Now: T0}))
		delegate := func(from, to string) bool {
			t.Helper()
			var won bool
			require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
				var err error
				won, err = tx.AssigneeDelegate(b.ctx, &store.AssigneeDelegateParams{RequestID: it.ID, From: from, To: to, Now: T0.Add(time.Minute)})
				return err
			}))
			return won
		}
		require.True(t, delegate("alice", "carol"))
		as, err := b.st.AssigneeList(b.ctx, it.ID)
		require.NoError(t, err)
		require.Len(t, as, 2)
		require.Equal(t, []string{"bob", "carol"}, []string{as[0].Person, as[1].Person}, "the delegator is gone, the new assignee last")
		require.Equal(t, store.AssigneeDelegate, as[1].Via)
		require.False(t, delegate("alice", "dave"), "alice may delegate no more")
		_, won, err := b.st.AssigneeDecide(b.ctx, &store.AssigneeDecideParams{RequestID: it.ID, Person: "bob", Decision: "approve", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		require.False(t, delegate("bob", "dave"), "a decided assignee keeps their decision")
		won, err = b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "answered", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		require.False(t, delegate("carol", "dave"), "a resolved question is handed to nobody")
	})
}
