package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// ExercisePeople runs the conformance cases of store.People (docs/design.md §12):
// the inbox across sessions and principals, session paging, the principal
// feed written with the events, and the webhook outbox's claims. Every
// driver runs it next to Exercise.
func ExercisePeople(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Inbox", func(t *testing.T) { t.Parallel(); exerciseInbox(t, newStore) })
	t.Run("SessionPage", func(t *testing.T) { t.Parallel(); exerciseSessionPage(t, newStore) })
	t.Run("Feed", func(t *testing.T) { t.Parallel(); exerciseFeed(t, newStore) })
	t.Run("Webhooks", func(t *testing.T) { t.Parallel(); exerciseWebhooks(t, newStore) })
	t.Run("NotifyMessages", func(t *testing.T) { t.Parallel(); exerciseNotifyMessages(t, newStore) })
}

// exerciseNotifyMessages: a channel's posted messages are kept per
// (request, channel, person), a second put replaces the first, and they go
// with their session.
func exerciseNotifyMessages(t *testing.T, newStore func(t *testing.T) store.Store) {
	b := setup(t, newStore)
	r := b.ownedRun(t, "alice", "deploy", "coder")
	list, err := b.st.NotifyMessageList(b.ctx, "ask_1")
	require.NoError(t, err)
	require.Empty(t, list)
	put := func(person, ref string, at time.Time) {
		require.NoError(t, b.st.NotifyMessagePut(b.ctx, &store.NotifyMessage{RequestID: "ask_1", Channel: "slack", Person: person, SessionID: r.SessionID,
			Address: "D" + person, Ref: ref, CreatedAt: at}))
	}
	put("alice", "1.1", T0)
	put("bob", "2.1", T0.Add(time.Second))
	put("alice", "1.2", T0.Add(2*time.Second)) // posted again (a retry after a crash)
	require.NoError(t, b.st.NotifyMessagePut(b.ctx, &store.NotifyMessage{RequestID: "ask_2", Channel: "slack", Person: "alice", SessionID: r.SessionID, Address: "Dalice", Ref: "9.9", CreatedAt: T0}))
	list, err = b.st.NotifyMessageList(b.ctx, "ask_1")
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, store.NotifyMessage{RequestID: "ask_1", Channel: "slack", Person: "bob", SessionID: r.SessionID, Address: "Dbob", Ref: "2.1", CreatedAt: T0.Add(time.Second)}, *list[0])
	require.Equal(t, "1.2", list[1].Ref)
	require.Equal(t, T0.Add(2*time.Second), list[1].CreatedAt)

	won, err := b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, To: store.RunCompleted, Now: T0})
	require.NoError(t, err)
	require.True(t, won)
	if m, ok := b.st.(store.Maintainer); ok {
		require.NoError(t, m.SessionDelete(b.ctx, r.SessionID))
		list, err = b.st.NotifyMessageList(b.ctx, "ask_1")
		require.NoError(t, err)
		require.Empty(t, list, "a deleted session's messages go with it")
	}
}

// ownedRun creates a session of owner titled title with a running run of
// agent, and returns the run.
func (b *testBundle) ownedRun(t *testing.T, owner, title, agent string) *store.Run {
	t.Helper()
	s, err := b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: b.id("sess"), Owner: owner, Title: title, Now: T0})
	require.NoError(t, err)
	r, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: s.ID, Agent: agent, LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), Now: T0})
	require.NoError(t, err)
	return r
}

func (b *testBundle) inboxAsk(t *testing.T, r *store.Run, id string, at time.Time) {
	t.Helper()
	_, err := b.st.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: id, SessionID: r.SessionID, RunID: r.ID, ToolCallID: "call_" + id, Tool: "ask_user",
		Request: json.RawMessage(`{"requestId":"` + id + `"}`), Now: at, ExpiresAt: at.Add(24 * time.Hour)})
	require.NoError(t, err)
}

func inboxIDs(es []*store.InboxEntry) []string {
	out := []string{}
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

func exerciseInbox(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("AcrossSessionsNoLeak", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		// Three sessions, two principals: alice owns two, bob one.
		a1 := b.ownedRun(t, "alice", "deploy", "coder")
		a2 := b.ownedRun(t, "alice", "trip", "planner")
		b1 := b.ownedRun(t, "bob", "bob's", "coder")
		b.inboxAsk(t, a2, "ask_a2", T0.Add(1*time.Second))
		b.inboxAsk(t, b1, "ask_b1", T0.Add(2*time.Second))
		b.inboxAsk(t, a1, "ask_a1", T0.Add(3*time.Second))

		got, err := b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxPending})
		require.NoError(t, err)
		require.Equal(t, []string{"ask_a2", "ask_a1"}, inboxIDs(got), "alice's pending requests, oldest first, none of bob's")
		require.Equal(t, "trip", got[0].SessionTitle)
		require.Equal(t, "planner", got[0].Agent)
		require.Equal(t, store.RunRunning, got[0].RunStatus)
		require.Equal(t, a2.SessionID, got[0].SessionID)
		require.Equal(t, `{"requestId":"ask_a2"}`, string(got[0].Request))
		require.Equal(t, T0.Add(time.Second), got[0].CreatedAt)

		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "bob", Status: store.InboxPending})
		require.NoError(t, err)
		require.Equal(t, []string{"ask_b1"}, inboxIDs(got))
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "carol", Status: store.InboxPending})
		require.NoError(t, err)
		require.Empty(t, got)

		// Paging pending with the cursor.
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxPending, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, []string{"ask_a2"}, inboxIDs(got))
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxPending, Cursor: "ask_a2", Limit: 1})
		require.NoError(t, err)
		require.Equal(t, []string{"ask_a1"}, inboxIDs(got))

		// Resolve: resolved ones leave pending and list newest first.
		for i, id := range []struct{ id, sess string }{{"ask_a1", a1.SessionID}, {"ask_b1", b1.SessionID}, {"ask_a2", a2.SessionID}} {
			won, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: id.id, SessionID: id.sess, Status: "answered",
				Answer: json.RawMessage(`{"selections":["x"]}`), Now: T0.Add(time.Duration(10+i) * time.Second)})
			require.NoError(t, err)
			require.True(t, won)
		}
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxPending})
		require.NoError(t, err)
		require.Empty(t, got)
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxResolved})
		require.NoError(t, err)
		require.Equal(t, []string{"ask_a2", "ask_a1"}, inboxIDs(got), "resolved: most recently resolved first")
		require.Equal(t, `{"selections":["x"]}`, string(got[0].Answer))
		require.Equal(t, T0.Add(12*time.Second), got[0].ResolvedAt)
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxResolved, Cursor: "ask_a2"})
		require.NoError(t, err)
		require.Equal(t, []string{"ask_a1"}, inboxIDs(got))
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxResolved, Cursor: "ask_a1"})
		require.NoError(t, err)
		require.Empty(t, got)
		got, err = b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "bob", Status: store.InboxResolved})
		require.NoError(t, err)
		require.Equal(t, []string{"ask_b1"}, inboxIDs(got))
	})
	t.Run("StableOrderOnEqualTimes", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		for i := range 5 {
			b.inboxAsk(t, b.ownedRun(t, "alice", "s", "a"), fmt.Sprintf("ask_%d", 4-i), T0)
		}
		var seen []string
		cursor := ""
		for {
			got, err := b.st.InboxList(b.ctx, &store.InboxListParams{Owner: "alice", Status: store.InboxPending, Cursor: cursor, Limit: 2})
			require.NoError(t, err)
			if len(got) == 0 {
				break
			}
			seen = append(seen, inboxIDs(got)...)
			cursor = got[len(got)-1].ID
		}
		require.Equal(t, []string{"ask_0", "ask_1", "ask_2", "ask_3", "ask_4"}, seen, "equal times: id order, every row once")
	})
}

func exerciseSessionPage(t *testing.T, newStore func(t *testing.T) store.Store) {
	b := setup(t, newStore)
	for i := range 5 {
		_, err := b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: fmt.Sprintf("sess_%d", i), Owner: "alice", Now: T0.Add(time.Duration(i%3) * time.Second)})
		require.NoError(t, err)
	}
	_, err := b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: "sess_bob", Owner: "bob", Now: T0.Add(time.Hour)})
	require.NoError(t, err)
	var seen []string
	before := ""
	for {
		page, err := b.st.SessionPage(b.ctx, &store.SessionPageParams{Owner: "alice", Before: before, Limit: 2})
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		for _, s := range page {
			require.Equal(t, "alice", s.Owner)
			seen = append(seen, s.ID)
		}
		before = page[len(page)-1].ID
	}
	// updated_at: sess_2 2s; sess_1, sess_4 1s; sess_0, sess_3 0s; ties by id descending.
	require.Equal(t, []string{"sess_2", "sess_4", "sess_1", "sess_3", "sess_0"}, seen)
	page, err := b.st.SessionPage(b.ctx, &store.SessionPageParams{Owner: "alice", Before: "sess_bob"})
	require.NoError(t, err)
	require.Empty(t, page, "another principal's session is no cursor")
}

func exerciseFeed(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("WrittenWithTheEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		a1 := b.ownedRun(t, "alice", "one", "a")
		a2 := b.ownedRun(t, "alice", "two", "a")
		b1 := b.ownedRun(t, "bob", "bob's", "a")
		wake, unsub := b.st.Subscribe(store.PrincipalKey("alice"))
		defer unsub()
		all, unsubAll := b.st.Subscribe(store.FeedKey)
		defer unsubAll()

		last, err := b.st.FeedLastSeq(b.ctx, "alice")
		require.NoError(t, err)
		require.Zero(t, last)
		appendIn := func(sess, name string) {
			require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
				_, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: sess, Name: name, Data: json.RawMessage(`{"n":"` + name + `"}`), Now: T0})
				return err
			}))
		}
		appendIn(a1.SessionID, "message_delta")
		appendIn(a1.SessionID, "user_input_required")
		<-wake // the commit woke alice's feed
		<-all
		appendIn(b1.SessionID, "user_input_required")
		appendIn(a2.SessionID, "done")
		// Outside InTx too.
		_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: a2.SessionID, Name: "user_input_resolved", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		<-wake

		// A rolled-back append leaves no feed entry.
		boom := errors.New("boom")
		require.ErrorIs(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: a1.SessionID, Name: "done", Data: json.RawMessage(`{}`), Now: T0}); err != nil {
				return err
			}
			return boom
		}), boom)

		feed, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "alice"})
		require.NoError(t, err)
		require.Len(t, feed, 3)
		require.Equal(t, []int64{1, 2, 3}, []int64{feed[0].Seq, feed[1].Seq, feed[2].Seq})
		require.Equal(t, "user_input_required", feed[0].Name)
		require.Equal(t, a1.SessionID, feed[0].SessionID)
		require.Equal(t, int64(2), feed[0].SessionSeq, "the session event's own seq (message_delta was 1)")
		require.Equal(t, `{"n":"user_input_required"}`, string(feed[0].Data))
		require.Equal(t, T0, feed[0].CreatedAt)
		require.Equal(t, "done", feed[1].Name)
		require.Equal(t, a2.SessionID, feed[1].SessionID)
		require.Equal(t, "user_input_resolved", feed[2].Name)

		feed, err = b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "alice", AfterSeq: 2})
		require.NoError(t, err)
		require.Len(t, feed, 1)
		last, err = b.st.FeedLastSeq(b.ctx, "alice")
		require.NoError(t, err)
		require.Equal(t, int64(3), last)
		bob, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "bob"})
		require.NoError(t, err)
		require.Len(t, bob, 1)
		require.Equal(t, int64(1), bob[0].Seq, "each principal has its own sequence")

		un, err := b.st.FeedListUnfanned(b.ctx, 10)
		require.NoError(t, err)
		require.Len(t, un, 4)
	})
	t.Run("ConcurrentAppendsGetDistinctSeqs", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		runs := []*store.Run{b.ownedRun(t, "alice", "1", "a"), b.ownedRun(t, "alice", "2", "a"), b.ownedRun(t, "alice", "3", "a"), b.ownedRun(t, "alice", "4", "a")}
		wins := race(t, 8, func(i int) (bool, error) {
			err := b.st.InTx(b.ctx, func(tx store.Tx) error {
				_, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: runs[i%4].SessionID, Name: "done", Data: json.RawMessage(`{}`), Now: T0})
				return err
			})
			return err == nil, err
		})
		require.Equal(t, 8, wins)
		feed, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "alice"})
		require.NoError(t, err)
		require.Len(t, feed, 8)
		for i, f := range feed {
			require.Equal(t, int64(i+1), f.Seq)
		}
	})
}

func exerciseWebhooks(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("EnqueueClaimFinish", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.ownedRun(t, "alice", "s", "a")
		_, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: r.SessionID, Name: "done", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		un, err := b.st.FeedListUnfanned(b.ctx, 10)
		require.NoError(t, err)
		require.Len(t, un, 1)
		f := un[0]
		mk := func(id, hook string) *store.WebhookDelivery {
			return &store.WebhookDelivery{ID: id, Hook: hook, SessionID: f.SessionID, Type: "run.finished", Body: json.RawMessage(`{"type":"run.finished"}`)}
		}
		require.NoError(t, b.st.WebhookEnqueue(b.ctx, &store.WebhookEnqueueParams{Owner: f.Owner, Seq: f.Seq, Now: T0,
			Deliveries: []*store.WebhookDelivery{mk("msg_1", "https://a/"), mk("msg_2", "https://b/")}}))
		// A second fan-out of the same entry (another replica) keeps the first.
		require.NoError(t, b.st.WebhookEnqueue(b.ctx, &store.WebhookEnqueueParams{Owner: f.Owner, Seq: f.Seq, Now: T0,
			Deliveries: []*store.WebhookDelivery{mk("msg_other", "https://a/")}}))
		un, err = b.st.FeedListUnfanned(b.ctx, 10)
		require.NoError(t, err)
		require.Empty(t, un)
		next, err := b.st.WebhookNextDue(b.ctx)
		require.NoError(t, err)
		require.Equal(t, T0, next)

		// Concurrent claims: each delivery goes to exactly one claimer.
		claimed := make(chan string, 16)
		wins := race(t, 6, func(i int) (bool, error) {
			ds, err := b.st.WebhookClaim(b.ctx, &store.WebhookClaimParams{Owner: fmt.Sprintf("inst_%d", i), Until: T0.Add(time.Minute), Now: T0, Limit: 5})
			for _, d := range ds {
				claimed <- d.ID + "@" + d.LeaseOwner
			}
			return len(ds) > 0, err
		})
		close(claimed)
		require.GreaterOrEqual(t, wins, 1)
		owners := map[string]string{}
		for c := range claimed {
			var id, owner string
			for i := range c {
				if c[i] == '@' {
					id, owner = c[:i], c[i+1:]
				}
			}
			_, dup := owners[id]
			require.False(t, dup, "delivery %s claimed twice", id)
			owners[id] = owner
		}
		require.Len(t, owners, 2)
		require.Contains(t, owners, "msg_1")
		require.Contains(t, owners, "msg_2")

		// Leased rows are not claimed again before their lease ends.
		ds, err := b.st.WebhookClaim(b.ctx, &store.WebhookClaimParams{Owner: "inst_x", Until: T0.Add(2 * time.Minute), Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.Empty(t, ds)

		// Only the lease holder finishes, and only its trace entry is written.
		traceBefore := webhookTraces(t, b, r.SessionID)
		won, err := b.st.WebhookFinish(b.ctx, &store.WebhookFinishParams{ID: "msg_1", LeaseOwner: "inst_x", Status: store.WebhookDelivered, Now: T0,
			Trace: json.RawMessage(`{"attempt":1,"lost":true}`)})
		require.NoError(t, err)
		require.False(t, won)
		require.Equal(t, traceBefore, webhookTraces(t, b, r.SessionID), "a lost lease writes no trace entry")
		won, err = b.st.WebhookFinish(b.ctx, &store.WebhookFinishParams{ID: "msg_1", LeaseOwner: owners["msg_1"], Status: store.WebhookPending,
			NextAt: T0.Add(10 * time.Second), LastCode: 500, LastError: "HTTP 500", Now: T0, Trace: json.RawMessage(`{"attempt":1,"code":500}`)})
		require.NoError(t, err)
		require.True(t, won)
		require.Equal(t, append(traceBefore, `{"attempt":1,"code":500}`), webhookTraces(t, b, r.SessionID), "the winner's trace entry, with its outcome")
		won, err = b.st.WebhookFinish(b.ctx, &store.WebhookFinishParams{ID: "msg_2", LeaseOwner: owners["msg_2"], Status: store.WebhookDelivered, LastCode: 204, Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		next, err = b.st.WebhookNextDue(b.ctx)
		require.NoError(t, err)
		require.Equal(t, T0.Add(10*time.Second), next)

		// Not due yet; then due, claimed again with the same id.
		ds, err = b.st.WebhookClaim(b.ctx, &store.WebhookClaimParams{Owner: "inst_x", Until: T0.Add(time.Minute), Now: T0.Add(5 * time.Second)})
		require.NoError(t, err)
		require.Empty(t, ds)
		ds, err = b.st.WebhookClaim(b.ctx, &store.WebhookClaimParams{Owner: "inst_x", Until: T0.Add(time.Minute), Now: T0.Add(10 * time.Second)})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		d := ds[0]
		require.Equal(t, "msg_1", d.ID)
		require.Equal(t, 1, d.Attempts)
		require.Equal(t, 500, d.LastCode)
		require.Equal(t, "HTTP 500", d.LastError)
		require.Equal(t, "https://a/", d.Hook)
		require.Equal(t, "alice", d.Owner)
		require.Equal(t, f.Seq, d.Seq)
		require.Equal(t, `{"type":"run.finished"}`, string(d.Body))

		list, err := b.st.WebhookList(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Len(t, list, 2)
		st := map[string]string{}
		for _, d := range list {
			st[d.ID] = d.Status
		}
		require.Equal(t, map[string]string{"msg_1": "pending", "msg_2": "delivered"}, st)

		// An expired lease is claimable by another sender.
		ds, err = b.st.WebhookClaim(b.ctx, &store.WebhookClaimParams{Owner: "inst_y", Until: T0.Add(3 * time.Minute), Now: T0.Add(2 * time.Minute)})
		require.NoError(t, err)
		require.Len(t, ds, 1)
		require.Equal(t, "inst_y", ds[0].LeaseOwner)
	})
}

// webhookTraces lists the data of sessionID's "webhook" trace entries, in order.
func webhookTraces(t *testing.T, b *testBundle, sessionID string) []string {
	t.Helper()
	tr, err := b.st.TraceList(b.ctx, sessionID)
	require.NoError(t, err)
	var out []string
	for _, e := range tr {
		if e.Kind == "webhook" {
			out = append(out, string(e.Data))
		}
	}
	return out
}
