package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

func exerciseMessages(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("InsertList", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		user, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_u", SessionID: r.SessionID, RunID: r.ID, Role: "user", Content: "帮我改代码", Now: T0})
		require.NoError(t, err)
		calls := json.RawMessage(`[{"id":"call_1","name":"ask_user","arguments":"{\"title\":\"x\"}"}]`)
		asst, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_a", SessionID: r.SessionID, RunID: r.ID, Role: "assistant", ToolCalls: calls, Now: T0})
		require.NoError(t, err)
		meta := json.RawMessage(`{"z":1,"a":[true]}`)
		_, err = b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_t", SessionID: r.SessionID, RunID: r.ID, Role: "tool", Content: "done",
			ToolCallID: "call_1", Name: "ask_user", IsError: true, Metadata: meta, ParentID: "msg_a", CallIndex: 2, Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.Less(t, user.Seq, asst.Seq)

		msgs, err := b.st.MessageList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, msgs, 3)
		require.Equal(t, []string{"msg_u", "msg_a", "msg_t"}, []string{msgs[0].ID, msgs[1].ID, msgs[2].ID})
		require.Equal(t, "帮我改代码", msgs[0].Content)
		require.Nil(t, msgs[0].ToolCalls)
		require.Nil(t, msgs[0].Metadata)
		require.Equal(t, string(calls), string(msgs[1].ToolCalls), "JSON is kept byte for byte")
		tm := msgs[2]
		require.Equal(t, string(meta), string(tm.Metadata))
		require.Equal(t, "call_1", tm.ToolCallID)
		require.Equal(t, "ask_user", tm.Name)
		require.True(t, tm.IsError)
		require.Equal(t, "msg_a", tm.ParentID)
		require.Equal(t, 2, tm.CallIndex)
		require.Equal(t, T0.Add(time.Second), tm.CreatedAt)
	})
	t.Run("OneToolResultPerCall", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		result := func(id string) error {
			_, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: id, SessionID: r.SessionID, RunID: r.ID, Role: "tool", ToolCallID: "call_1", Content: id, Now: T0})
			return err
		}
		require.NoError(t, result("msg_1"))
		require.ErrorIs(t, result("msg_2"), store.ErrDuplicate)
		// Messages without a tool call id never collide.
		for i := 0; i < 3; i++ {
			_, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: b.id("msg"), SessionID: r.SessionID, Role: "assistant", Now: T0})
			require.NoError(t, err)
		}
		// The same call id in another session is another call.
		other := b.session(t)
		_, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_other", SessionID: other.ID, Role: "tool", ToolCallID: "call_1", Now: T0})
		require.NoError(t, err)
	})
	t.Run("DuplicateKeepsTransactionUsable", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		_, err := b.st.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_1", SessionID: r.SessionID, Role: "tool", ToolCallID: "call_1", Now: T0})
		require.NoError(t, err)
		// No require inside fn: a failed test must not keep a transaction open.
		var errs [4]error
		err = b.st.InTx(b.ctx, func(tx store.Tx) error {
			_, errs[0] = tx.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_2", SessionID: r.SessionID, Role: "tool", ToolCallID: "call_1", Now: T0})
			_, errs[1] = tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_1", SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_2", Tool: "ask_user", Request: []byte(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour)})
			_, errs[2] = tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_2", SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_2", Tool: "ask_user", Request: []byte(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour)})
			_, errs[3] = tx.RunInsert(b.ctx, &store.RunInsertParams{ID: "run_x", SessionID: r.SessionID, Agent: "default", Now: T0})
			_, err := tx.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_3", SessionID: r.SessionID, Role: "tool", ToolCallID: "call_3", Now: T0})
			return err
		})
		require.ErrorIs(t, errs[0], store.ErrDuplicate)
		require.NoError(t, errs[1])
		require.ErrorIs(t, errs[2], store.ErrDuplicate)
		require.ErrorIs(t, errs[3], store.ErrRunActive)
		require.NoError(t, err, "after ErrDuplicate and ErrRunActive the transaction still commits")
		msgs, err := b.st.MessageList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, msgs, 2)
		_, err = b.st.InteractionGet(b.ctx, "ask_1")
		require.NoError(t, err)
	})
	t.Run("DuplicateMustWinFailsTransaction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		ask := func(tx store.Tx, id, call string) error {
			_, err := tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: id, SessionID: r.SessionID, RunID: r.ID, ToolCallID: call, Tool: "ask_user",
				Request: []byte(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour), MustWin: true})
			if err != nil {
				return err
			}
			// As a caller does: a row after the question, and its event.
			if err := tx.AuditInsert(b.ctx, &store.AuditInsertParams{SessionID: r.SessionID, RequestID: id, RunID: r.ID, Action: "requested", Now: T0}); err != nil {
				return err
			}
			_, err = tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: r.SessionID, Name: "user_input_required", Data: []byte(`{}`), Ref: id, RunID: r.ID, Now: T0})
			return err
		}
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error { return ask(tx, "ask_1", "call_1") }))
		it, err := b.st.InteractionGet(b.ctx, "ask_1")
		require.NoError(t, err)
		require.Equal(t, "call_1", it.ToolCallID)
		err = b.st.InTx(b.ctx, func(tx store.Tx) error { return ask(tx, "ask_2", "call_1") })
		require.ErrorIs(t, err, store.ErrDuplicate, "whether the driver reported it at once or failed the transaction")
		_, err = b.st.InteractionGet(b.ctx, "ask_2")
		require.ErrorIs(t, err, store.ErrNotFound)
		au, err := b.st.AuditList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, au, 1, "no audit row of the failed transaction")
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: r.SessionID})
		require.NoError(t, err)
		require.Len(t, evs, 1, "no event of the failed transaction")
	})
	t.Run("RacingToolResultsOneWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		wins := race(t, 30, func(i int) (bool, error) {
			err := b.st.InTx(b.ctx, func(tx store.Tx) error {
				_, err := tx.MessageInsert(b.ctx, &store.MessageInsertParams{ID: b.id("msg"), SessionID: r.SessionID, Role: "tool", ToolCallID: "call_1", Now: T0})
				return err
			})
			if errors.Is(err, store.ErrDuplicate) {
				return false, nil
			}
			return err == nil, err
		})
		require.Equal(t, 1, wins)
	})
}

// ask inserts a pending interaction for a new tool call of run r, expiring at exp.
func (b *testBundle) ask(t *testing.T, r *store.Run, exp time.Time) *store.Interaction {
	t.Helper()
	it, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: b.id("ask"), SessionID: r.SessionID, RunID: r.ID,
		ToolCallID: b.id("call"), Tool: "ask_user", Request: json.RawMessage(`{"title":"选哪个","mode":"single"}`), Now: T0, ExpiresAt: exp})
	require.NoError(t, err)
	return it
}

func exerciseInteractions(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("InsertGet", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Hour))
		want := &store.Interaction{ID: it.ID, SessionID: r.SessionID, RunID: r.ID, ToolCallID: it.ToolCallID, Tool: "ask_user",
			Request: json.RawMessage(`{"title":"选哪个","mode":"single"}`), Status: "pending", CreatedAt: T0, ExpiresAt: T0.Add(time.Hour)}
		require.Equal(t, want, it)
		for _, get := range []func() (*store.Interaction, error){
			func() (*store.Interaction, error) { return b.st.InteractionGet(b.ctx, it.ID) },
			func() (*store.Interaction, error) {
				return b.st.InteractionGetByToolCall(b.ctx, r.SessionID, it.ToolCallID)
			},
			func() (*store.Interaction, error) { return b.st.InteractionGetPending(b.ctx, r.SessionID) },
		} {
			got, err := get()
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
		_, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: b.id("ask"), SessionID: r.SessionID, RunID: r.ID,
			ToolCallID: it.ToolCallID, Tool: "ask_user", Request: []byte(`{}`), Now: T0, ExpiresAt: T0.Add(time.Hour)})
		require.ErrorIs(t, err, store.ErrDuplicate, "one interaction per tool call")
		_, err = b.st.InteractionGetLastResolved(b.ctx, r.SessionID)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("ResolveRun", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		expired := b.ask(t, r, T0.Add(-time.Hour))
		answered := b.ask(t, r, T0.Add(time.Hour))
		open := b.ask(t, r, T0.Add(time.Hour))
		other := b.ask(t, b.run(t), T0.Add(time.Hour))
		won, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: answered.ID, SessionID: r.SessionID, Status: "answered", Answer: []byte(`{}`), Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		ans := json.RawMessage(`{"selections":[],"cancelled":true}`)
		var got []*store.Interaction
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			got, err = tx.InteractionResolveRun(b.ctx, &store.InteractionResolveRunParams{SessionID: r.SessionID, RunID: r.ID, Status: "cancelled", Answer: ans, Now: T0.Add(time.Minute)})
			return err
		}))
		require.Len(t, got, 2, "every pending interaction of the run, past expiresAt or not; not the answered one")
		require.Equal(t, []string{expired.ID, open.ID}, []string{got[0].ID, got[1].ID})
		for _, it := range got {
			require.Equal(t, "cancelled", it.Status)
			require.Equal(t, string(ans), string(it.Answer))
			require.Equal(t, T0.Add(time.Minute), it.ResolvedAt)
			cur, err := b.st.InteractionGet(b.ctx, it.ID)
			require.NoError(t, err)
			require.Equal(t, it, cur)
		}
		cur, err := b.st.InteractionGet(b.ctx, other.ID)
		require.NoError(t, err)
		require.Equal(t, "pending", cur.Status, "another run's question stays")
		again, err := b.st.InteractionResolveRun(b.ctx, &store.InteractionResolveRunParams{SessionID: r.SessionID, RunID: r.ID, Status: "cancelled", Now: T0.Add(time.Minute)})
		require.NoError(t, err)
		require.Empty(t, again)
	})
	t.Run("ResolveOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Hour))
		resolve := func(p store.InteractionResolveParams) bool {
			t.Helper()
			won, err := b.st.InteractionResolve(b.ctx, &p)
			require.NoError(t, err)
			return won
		}
		ans := json.RawMessage(`{"selections":["safe"],"customInput":""}`)
		require.False(t, resolve(store.InteractionResolveParams{ID: it.ID, SessionID: "sess_other", Status: "answered", Answer: ans, Now: T0}), "another session")
		require.False(t, resolve(store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "answered", Answer: ans, Now: T0.Add(time.Hour)}), "at expiresAt an answer is too late")
		require.False(t, resolve(store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "expired", Now: T0.Add(time.Hour - time.Microsecond)}), "not expired yet")
		require.True(t, resolve(store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "answered", Answer: ans, Now: T0.Add(time.Minute)}))
		require.False(t, resolve(store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "cancelled", Now: T0.Add(2 * time.Minute)}), "consumed once")
		require.False(t, resolve(store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: "expired", Now: T0.Add(2 * time.Hour)}), "consumed once")

		got, err := b.st.InteractionGet(b.ctx, it.ID)
		require.NoError(t, err)
		require.Equal(t, "answered", got.Status)
		require.Equal(t, string(ans), string(got.Answer))
		require.Equal(t, T0.Add(time.Minute), got.ResolvedAt)
		_, err = b.st.InteractionGetPending(b.ctx, r.SessionID)
		require.ErrorIs(t, err, store.ErrNotFound)
		last, err := b.st.InteractionGetLastResolved(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, it.ID, last.ID)
	})
	t.Run("RacingResolveOneWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Hour))
		statuses := []string{"answered", "cancelled", "expired"}
		wins := race(t, 60, func(i int) (bool, error) {
			now := T0.Add(time.Minute)
			if statuses[i%3] == "expired" {
				now = T0.Add(2 * time.Hour)
			}
			won := false
			err := b.st.InTx(b.ctx, func(tx store.Tx) error {
				var err error
				won, err = tx.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: it.ID, SessionID: r.SessionID, Status: statuses[i%3], Now: now})
				return err
			})
			return won, err
		})
		require.Equal(t, 1, wins)
	})
	t.Run("ListPending", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r1 := b.run(t)
		askAt := func(r *store.Run, at, exp time.Time) *store.Interaction {
			t.Helper()
			it, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: b.id("ask"), SessionID: r.SessionID, RunID: r.ID,
				ToolCallID: b.id("call"), Tool: "ask_user", Request: json.RawMessage(`{"title":"t"}`), Now: at, ExpiresAt: exp})
			require.NoError(t, err)
			return it
		}
		// Inserted out of creation order; two created at the same instant
		// (one model message's questions); one past expiresAt but pending.
		third := askAt(r1, T0.Add(3*time.Minute), T0.Add(time.Hour))
		first := askAt(r1, T0.Add(time.Minute), T0.Add(time.Hour))
		answered := askAt(r1, T0.Add(2*time.Minute), T0.Add(time.Hour))
		late := askAt(r1, T0.Add(2*time.Minute), T0.Add(-time.Hour))
		same := askAt(r1, T0.Add(2*time.Minute), T0.Add(time.Hour))
		other := b.ask(t, b.run(t), T0.Add(time.Hour))
		won, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: answered.ID, SessionID: r1.SessionID, Status: "answered", Answer: []byte(`{}`), Now: T0.Add(4 * time.Minute)})
		require.NoError(t, err)
		require.True(t, won)

		all, err := b.st.InteractionList(b.ctx, r1.SessionID)
		require.NoError(t, err)
		require.Len(t, all, 5)
		var want []*store.Interaction
		for _, it := range all {
			if it.Status == "pending" {
				want = append(want, it)
			}
		}
		got, err := b.st.InteractionListPending(b.ctx, r1.SessionID)
		require.NoError(t, err)
		require.Equal(t, want, got, "InteractionList's pending rows, whole and in its order")
		ids := make([]string, len(got))
		for i, it := range got {
			ids[i] = it.ID
		}
		require.Len(t, ids, 4, "the pending questions, past expiresAt or not; not the answered one")
		require.Equal(t, first.ID, ids[0], "creation order")
		require.ElementsMatch(t, []string{late.ID, same.ID}, ids[1:3])
		require.Equal(t, third.ID, ids[3])
		cur, err := b.st.InteractionGet(b.ctx, late.ID)
		require.NoError(t, err)
		require.Equal(t, cur, got[slices.Index(ids, late.ID)])

		got, err = b.st.InteractionListPending(b.ctx, other.SessionID)
		require.NoError(t, err)
		require.Equal(t, []*store.Interaction{other}, got, "another session's only")
		got, err = b.st.InteractionListPending(b.ctx, "sess_missing")
		require.NoError(t, err)
		require.Empty(t, got)

		// Once the run closes what it left open nothing is pending.
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			_, err := tx.InteractionResolveRun(b.ctx, &store.InteractionResolveRunParams{SessionID: r1.SessionID, RunID: r1.ID, Status: "cancelled", Now: T0.Add(5 * time.Minute)})
			return err
		}))
		got, err = b.st.InteractionListPending(b.ctx, r1.SessionID)
		require.NoError(t, err)
		require.Empty(t, got)
	})
	t.Run("ListExpiredAndOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r1, r2 := b.run(t), b.run(t)
		late := b.ask(t, r1, T0.Add(2*time.Hour))
		early := b.ask(t, r2, T0.Add(time.Hour))
		b.ask(t, r2, T0.Add(3*time.Hour))
		list, err := b.st.InteractionListExpired(b.ctx, &store.InteractionListExpiredParams{Now: T0.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.Len(t, list, 2, "expiresAt <= now is expired")
		require.Equal(t, early.ID, list[0].ID, "soonest first")
		require.Equal(t, late.ID, list[1].ID)
		list, err = b.st.InteractionListExpired(b.ctx, &store.InteractionListExpiredParams{Now: T0.Add(2 * time.Hour), Limit: 1})
		require.NoError(t, err)
		require.Len(t, list, 1)
		won, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: early.ID, SessionID: r2.SessionID, Status: "expired", Now: T0.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.True(t, won)
		list, err = b.st.InteractionListExpired(b.ctx, &store.InteractionListExpiredParams{Now: T0.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.Len(t, list, 1, "resolved rows are not listed")
		all, err := b.st.InteractionList(b.ctx, r2.SessionID)
		require.NoError(t, err)
		require.Len(t, all, 2)
	})
}
