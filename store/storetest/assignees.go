package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// ExerciseAssignees runs the conformance cases of an interaction's
// assignees (docs/design.md §16): the route stored with the row, the
// assignee rows in order, quorum decisions counted once each under a race,
// the assignees' inbox and their feed entries. Every driver runs it next to
// Exercise.
func ExerciseAssignees(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RouteAndOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.ownedRun(t, "alice", "refund", "billing")
		_, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_r", SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_r",
			Tool: "approval", Request: json.RawMessage(`{}`), Route: json.RawMessage(`{"index":1,"quorum":2}`), Now: T0, ExpiresAt: T0.Add(time.Hour)})
		require.NoError(t, err)
		b.inboxAsk(t, r, "ask_plain", T0)
		it, err := b.st.InteractionGet(b.ctx, "ask_r")
		require.NoError(t, err)
		require.JSONEq(t, `{"index":1,"quorum":2}`, string(it.Route))
		plain, err := b.st.InteractionGet(b.ctx, "ask_plain")
		require.NoError(t, err)
		require.Nil(t, plain.Route, "no route: no Route")

		require.NoError(t, b.st.AssigneeAdd(b.ctx, &store.AssigneeAddParams{RequestID: "ask_r", Persons: []string{"zoe", "bob", "carol"}, Via: store.AssigneeRoute, Now: T0}))
		// A person already assigned keeps their row; a new one goes last.
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			return tx.AssigneeAdd(b.ctx, &store.AssigneeAddParams{RequestID: "ask_r", Persons: []string{"bob", "dave"}, Via: store.AssigneeEscalation, Now: T0.Add(time.Minute)})
		}))
		as, err := b.st.AssigneeList(b.ctx, "ask_r")
		require.NoError(t, err)
		var names, via []string
		for _, a := range as {
			names, via = append(names, a.Person), append(via, a.Via)
			require.Equal(t, "ask_r", a.RequestID)
			require.Empty(t, a.Decision)
			require.True(t, a.DecidedAt.IsZero())
		}
		require.Equal(t, []string{"zoe", "bob", "carol", "dave"}, names, "in the order they were added")
		require.Equal(t, []string{"route", "route", "route", "escalation"}, via)
		require.Equal(t, T0, as[0].AddedAt)
		require.Equal(t, T0.Add(time.Minute), as[3].AddedAt)
		none, err := b.st.AssigneeList(b.ctx, "ask_plain")
		require.NoError(t, err)
		require.Empty(t, none)
	})
	t.Run("DecideOnceEach", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.ownedRun(t, "alice", "refund", "billing")
		b.inboxAsk(t, r, "ask_q", T0)
		people := []string{"p1", "p2", "p3", "p4", "p5", "p6"}
		require.NoError(t, b.st.AssigneeAdd(b.ctx, &store.AssigneeAddParams{RequestID: "ask_q", Persons: people, Via: store.AssigneeRoute, Now: T0}))

		// A stranger's decision wins nothing.
		_, won, err := b.st.AssigneeDecide(b.ctx, &store.AssigneeDecideParams{RequestID: "ask_q", Person: "mallory", Decision: "approve", Now: T0})
		require.NoError(t, err)
		require.False(t, won)

		// Six approvals at once, each in its own transaction: every count
		// from 1 to 6 is seen exactly once.
		counts := make(chan int, len(people))
		wins := race(t, len(people), func(i int) (bool, error) {
			var n int
			var won bool
			err := b.st.InTx(b.ctx, func(tx store.Tx) error {
				var err error
				n, won, err = tx.AssigneeDecide(b.ctx, &store.AssigneeDecideParams{RequestID: "ask_q", Person: people[i], Decision: "approve", Now: T0.Add(time.Second)})
				return err
			})
			if won {
				counts <- n
			}
			return won, err
		})
		require.Equal(t, len(people), wins)
		close(counts)
		var seen []int
		for n := range counts {
			seen = append(seen, n)
		}
		slices.Sort(seen)
		require.Equal(t, []int{1, 2, 3, 4, 5, 6}, seen)

		// A second decision by the same person wins nothing.
		_, won, err = b.st.AssigneeDecide(b.ctx, &store.AssigneeDecideParams{RequestID: "ask_q", Person: "p1", Decision: "reject", Now: T0})
		require.NoError(t, err)
		require.False(t, won)
		as, err := b.st.AssigneeList(b.ctx, "ask_q")
		require.NoError(t, err)
		require.Equal(t, "approve", as[0].Decision)
		require.Equal(t, T0.Add(time.Second), as[0].DecidedAt)

		// A reject is recorded and not counted as an approval.
		b.inboxAsk(t, r, "ask_rej", T0)
		require.NoError(t, b.st.AssigneeAdd(b.ctx, &store.AssigneeAddParams{RequestID: "ask_rej", Persons: []string{"p1", "p2"}, Via: store.AssigneeRoute, Now: T0}))
		n, won, err := b.st.AssigneeDecide(b.ctx, &store.AssigneeDecideParams{RequestID: "ask_rej", Person: "p1", Decision: "reject", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		require.Zero(t, n)

		// A resolved interaction takes no decision; its DecidedBy is kept.
		ok, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: "ask_rej", SessionID: r.SessionID, Status: "cancelled",
			DecidedBy: json.RawMessage(`{"by":{"id":"p1","name":"P One"}}`), Now: T0})
		require.NoError(t, err)
		require.True(t, ok)
		it, err := b.st.InteractionGet(b.ctx, "ask_rej")
		require.NoError(t, err)
		require.JSONEq(t, `{"by":{"id":"p1","name":"P One"}}`, string(it.DecidedBy))
		inbox, err := b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxResolved})
		require.NoError(t, err)
		require.Len(t, inbox, 1)
		require.JSONEq(t, `{"by":{"id":"p1","name":"P One"}}`, string(inbox[0].DecidedBy))
		q, err := b.st.InteractionGet(b.ctx, "ask_q")
		require.NoError(t, err)
		require.Nil(t, q.DecidedBy)
		_, won, err = b.st.AssigneeDecide(b.ctx, &store.AssigneeDecideParams{RequestID: "ask_rej", Person: "p2", Decision: "approve", Now: T0})
		require.NoError(t, err)
		require.False(t, won)
	})
	t.Run("InboxOfAssignees", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		a1 := b.ownedRun(t, "alice", "refund", "billing")
		c1 := b.ownedRun(t, "carol", "carol's", "billing")
		b.inboxAsk(t, a1, "ask_1", T0.Add(1*time.Second))
		b.inboxAsk(t, c1, "ask_2", T0.Add(2*time.Second))
		b.inboxAsk(t, a1, "ask_3", T0.Add(3*time.Second))
		b.inboxAsk(t, c1, "ask_4", T0.Add(4*time.Second))
		for _, id := range []string{"ask_1", "ask_3"} {
			require.NoError(t, b.st.AssigneeAdd(b.ctx, &store.AssigneeAddParams{RequestID: id, Persons: []string{"bob", "alice"}, Via: store.AssigneeRoute, Now: T0}))
		}
		// carol is an assignee of her own session's question: listed once.
		require.NoError(t, b.st.AssigneeAdd(b.ctx, &store.AssigneeAddParams{RequestID: "ask_4", Persons: []string{"carol", "bob"}, Via: store.AssigneeRoute, Now: T0}))

		list := func(owner string, status store.InboxStatus, cursor string, limit int) []string {
			got, err := b.st.InboxList(b.ctx, &store.InboxListParams{Owner: owner, Status: status, Cursor: cursor, Limit: limit})
			require.NoError(t, err)
			return inboxIDs(got)
		}
		require.Equal(t, []string{"ask_1", "ask_3", "ask_4"}, list("bob", store.InboxPending, "", 0), "bob owns no session: the questions assigned to him")
		require.Equal(t, []string{"ask_1", "ask_3"}, list("alice", store.InboxPending, "", 0), "her own, once")
		require.Equal(t, []string{"ask_2", "ask_4"}, list("carol", store.InboxPending, "", 0))
		require.Empty(t, list("mallory", store.InboxPending, "", 0))
		require.Equal(t, []string{"ask_1", "ask_3"}, list("bob", store.InboxPending, "", 2), "the limit counts both kinds")
		require.Equal(t, []string{"ask_4"}, list("bob", store.InboxPending, "ask_3", 2), "the cursor too")

		got, err := b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "bob", Status: store.InboxPending})
		require.NoError(t, err)
		require.Equal(t, "refund", got[0].SessionTitle)
		require.Equal(t, "billing", got[0].Agent)

		for i, id := range []string{"ask_3", "ask_1"} {
			sess := a1.SessionID
			ok, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: id, SessionID: sess, Status: "answered", Answer: json.RawMessage(`{}`), Now: T0.Add(time.Duration(10+i) * time.Second)})
			require.NoError(t, err)
			require.True(t, ok)
		}
		require.Equal(t, []string{"ask_1", "ask_3"}, list("bob", store.InboxResolved, "", 0), "most recently resolved first")
		require.Equal(t, []string{"ask_3"}, list("bob", store.InboxResolved, "ask_1", 0))
		require.Equal(t, []string{"ask_4"}, list("bob", store.InboxPending, "", 0))
	})
	t.Run("FeedOfTheAudience", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		a1 := b.ownedRun(t, "alice", "refund", "billing")
		b.inboxAsk(t, a1, "ask_f", T0)
		bobWake, unsub := b.st.Subscribe(store.PrincipalKey("bob"))
		defer unsub()
		// bob has an entry of his own already: the audience's entries
		// continue each principal's own sequence.
		b1 := b.ownedRun(t, "bob", "bob's", "billing")
		_, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: b1.SessionID, Name: "done", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		<-bobWake
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			_, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: a1.SessionID, Name: "user_input_required", Data: json.RawMessage(`{"requestId":"ask_f"}`),
				Ref: "ask_f", Audience: []string{"bob", "alice", "carol", "bob"}, Now: T0})
			if err != nil {
				return err
			}
			// Not a feed event: no entry for anyone.
			_, err = tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: a1.SessionID, Name: "message", Data: json.RawMessage(`{}`), Audience: []string{"bob"}, Now: T0})
			return err
		}))
		waitWake(t, bobWake, "bob's feed")
		for owner, want := range map[string]int64{"alice": 1, "bob": 2, "carol": 1} {
			feed, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: owner})
			require.NoError(t, err)
			last := feed[len(feed)-1]
			require.Equal(t, want, last.Seq, owner)
			require.Equal(t, "user_input_required", last.Name, owner)
			require.Equal(t, a1.SessionID, last.SessionID, owner)
			require.Equal(t, `{"requestId":"ask_f"}`, string(last.Data), "%s: the request, by reference", owner)
		}
		// A webhook gets the event once: only the owner's entries are
		// outbox rows.
		un, err := b.st.FeedListUnfanned(b.ctx, 10)
		require.NoError(t, err)
		var outbox []string
		for _, f := range un {
			outbox = append(outbox, f.Owner)
		}
		slices.Sort(outbox)
		require.Equal(t, []string{"alice", "bob"}, outbox, "alice's entry and bob's own session's done")
	})
}
