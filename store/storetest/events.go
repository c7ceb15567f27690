package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// woken reports whether ch holds a wake-up right now.
func woken(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// waitWake waits for a wake-up on ch with a deadline.
func waitWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake-up: %s", what)
	}
}

func exerciseEvents(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("RunIDTravelsWithTheEvent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		// The run id is a column, not read from Data: it comes back for a
		// payload that is not JSON, for a request stored by reference (the
		// interaction's run is another: the event's own wins), and "" when
		// the event names no run.
		err := b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_run", SessionID: s.ID, RunID: "run_other", ToolCallID: "call_run",
				Tool: "ask_user", Request: json.RawMessage(`{"id":"ask_run"}`), Now: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
				return err
			}
			for _, p := range []*store.EventAppendParams{
				{SessionID: s.ID, Name: "session", Data: json.RawMessage(`{"runId":"run_data"}`), RunID: "run_a", Now: T0},
				{SessionID: s.ID, Name: "user_input_required", Data: json.RawMessage(`{"id":"ask_run"}`), Ref: "ask_run", RunID: "run_a", Now: T0},
				{SessionID: s.ID, Name: "done", Data: json.RawMessage(`not json`), RunID: "run_b", Now: T0},
				{SessionID: s.ID, Name: "message", Data: json.RawMessage(`{"runId":"run_c"}`), Now: T0},
			} {
				ev, err := tx.EventAppend(b.ctx, p)
				if err != nil {
					return err
				}
				require.Equal(t, p.RunID, ev.RunID, "EventAppend returns it")
			}
			return nil
		})
		require.NoError(t, err)
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
		require.NoError(t, err)
		require.Len(t, evs, 4)
		var runs []string
		for _, ev := range evs {
			runs = append(runs, ev.RunID)
		}
		require.Equal(t, []string{"run_a", "run_a", "run_b", ""}, runs)
		require.Equal(t, "not json", string(evs[2].Data), "the data is as written")
		evs, err = b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID, AfterSeq: evs[1].Seq, Limit: 1})
		require.NoError(t, err)
		require.Len(t, evs, 1)
		require.Equal(t, "run_b", evs[0].RunID)
	})
	t.Run("RefReadsTheInteraction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		// The request as the agent stores it: not normalized JSON, text a
		// driver might escape (NUL, U+FDD0, non-ASCII, HTML characters).
		req := json.RawMessage(`{"id":"ask_ref","title":"选择 \u0000 <b>&</b> ﷐","options":[1, 2],"resumable":true}`)
		err := b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_ref", SessionID: s.ID, RunID: "run_ref", ToolCallID: "call_ref",
				Tool: "ask_user", Request: req, Now: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
				return err
			}
			ev, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "user_input_required", Data: req, Ref: "ask_ref", Now: T0})
			if err != nil {
				return err
			}
			require.Equal(t, string(req), string(ev.Data))
			_, err = tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message", Data: json.RawMessage(`{"after":1}`), Now: T0})
			return err
		})
		require.NoError(t, err)
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		require.Equal(t, string(req), string(evs[0].Data), "a referencing event reads the request byte for byte")
		require.Equal(t, "user_input_required", evs[0].Name)
		require.Equal(t, `{"after":1}`, string(evs[1].Data))
		// Resolving the interaction does not change the event.
		won, err := b.st.InteractionResolve(b.ctx, &store.InteractionResolveParams{ID: "ask_ref", SessionID: s.ID, Status: "answered", Answer: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		evs, err = b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID, Limit: 1})
		require.NoError(t, err)
		require.Equal(t, string(req), string(evs[0].Data))
	})
	t.Run("RefFeedReadsTheInteraction", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		req := json.RawMessage(`{"id":"ask_feed","title":"选择 \u0000 <b>&</b> ﷐","resumable":true}`)
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_feed", SessionID: s.ID, RunID: "run_feed", ToolCallID: "call_feed",
				Tool: "ask_user", Request: req, Now: T0, ExpiresAt: T0.Add(time.Hour)}); err != nil {
				return err
			}
			_, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "user_input_required", Data: req, Ref: "ask_feed", Now: T0})
			return err
		}))
		feed, err := b.st.FeedList(b.ctx, &store.FeedListParams{Owner: "alice"})
		require.NoError(t, err)
		require.Len(t, feed, 1)
		require.Equal(t, string(req), string(feed[0].Data), "the feed entry reads the request byte for byte")
		un, err := b.st.FeedListUnfanned(b.ctx, 10)
		require.NoError(t, err)
		require.Len(t, un, 1)
		require.Equal(t, string(req), string(un[0].Data), "so does the webhook outbox")
	})
	t.Run("MessageRefReadsTheContent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		// Content a driver might escape or a splice might mangle: NUL,
		// U+FDD0, a byte that is not UTF-8, HTML characters, quotes, a
		// backslash and the hole's own text.
		content := "结果 \x00 <b>&</b> \"content\":\"\" \\ ﷐ \xff"
		type payload struct {
			ToolCallID string          `json:"toolCallId"`
			Name       string          `json:"name"`
			Content    string          `json:"content"`
			IsError    bool            `json:"isError"`
			Metadata   json.RawMessage `json:"metadata,omitempty"`
		}
		full := payload{ToolCallID: "call_m", Name: "x\"content\":\"\"", Content: content, Metadata: json.RawMessage(`{"content":"","k":1}`)}
		want, err := json.Marshal(full)
		require.NoError(t, err)
		hole := full
		hole.Content = ""
		tmpl, err := json.Marshal(hole)
		require.NoError(t, err)
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_ref", SessionID: s.ID, Role: "tool", Content: content,
				ToolCallID: "call_m", Name: "x", Now: T0}); err != nil {
				return err
			}
			if _, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "tool_result", Data: tmpl, MessageRef: "msg_ref", Now: T0}); err != nil {
				return err
			}
			_, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message", Data: json.RawMessage(`{"content":""}`), Now: T0})
			return err
		}))
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		require.Equal(t, string(want), string(evs[0].Data), "the event reads as it was marshalled with the message's content, byte for byte")
		require.Equal(t, `{"content":""}`, string(evs[1].Data), "an event without a reference is read as stored")
	})
	t.Run("MessageRefReadsTheArguments", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		type call struct {
			ID        string `json:"id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}
		type payload struct {
			ToolCallID string `json:"toolCallId"`
			Name       string `json:"name"`
			Arguments  string `json:"arguments"`
		}
		// Arguments as a model may send them: not JSON, text a driver
		// might escape, a byte that is not UTF-8, the hole's own text.
		args := []string{`{"title":"选择 <b>&</b>"}`, "not json \x00 \xff \"arguments\":\"\" ﷐"}
		calls := []call{{ID: "call_a", Name: "ask_user", Arguments: args[0]}, {ID: "call_b", Name: "x", Arguments: args[1]}}
		stored, err := json.Marshal(calls)
		require.NoError(t, err)
		var want []string
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_calls", SessionID: s.ID, Role: "assistant", Content: "看看",
				ToolCalls: stored, Now: T0}); err != nil {
				return err
			}
			for _, c := range []call{calls[1], calls[0]} {
				full, err := json.Marshal(payload{ToolCallID: c.ID, Name: c.Name, Arguments: c.Arguments})
				if err != nil {
					return err
				}
				want = append(want, string(full))
				tmpl, err := json.Marshal(payload{ToolCallID: c.ID, Name: c.Name})
				if err != nil {
					return err
				}
				if _, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "tool_call", Data: tmpl, MessageRef: "msg_calls", Now: T0}); err != nil {
					return err
				}
			}
			return nil
		}))
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		for i, ev := range evs {
			require.Equal(t, want[i], string(ev.Data), "the event reads as it was marshalled with its call's arguments, byte for byte")
		}
	})
	t.Run("DeleteDeltas", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s, other := b.session(t), b.session(t)
		for _, n := range []string{"message_delta", "reasoning_delta", "tool_call", "message_delta", "message"} {
			_, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: n, Data: json.RawMessage(`{}`), Now: T0})
			require.NoError(t, err)
			_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: other.ID, Name: n, Data: json.RawMessage(`{}`), Now: T0})
			require.NoError(t, err)
		}
		var n int64
		require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
			var err error
			n, err = tx.EventDelete(b.ctx, &store.EventDeleteParams{SessionID: s.ID, FromSeq: 2, ToSeq: 4, Names: []string{"message_delta", "reasoning_delta"}})
			return err
		}))
		require.Equal(t, int64(2), n, "reasoning_delta 2 and message_delta 4; not message_delta 1 (before the range) nor tool_call 3")
		seqs := func(id string) []int64 {
			evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: id})
			require.NoError(t, err)
			var out []int64
			for _, e := range evs {
				out = append(out, e.Seq)
			}
			return out
		}
		require.Equal(t, []int64{1, 3, 5}, seqs(s.ID))
		require.Equal(t, []int64{1, 2, 3, 4, 5}, seqs(other.ID), "another session's events stay")
		ev, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "done", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		require.Equal(t, int64(6), ev.Seq, "numbers go on after the last event")
		n, err = b.st.EventDelete(b.ctx, &store.EventDeleteParams{SessionID: s.ID, FromSeq: 1, ToSeq: 6})
		require.NoError(t, err)
		require.Zero(t, n, "no names, nothing deleted")
	})
	t.Run("SequencePerSession", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s1, s2 := b.session(t), b.session(t)
		for i := 1; i <= 3; i++ {
			ev, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s1.ID, Name: "message", Data: json.RawMessage(fmt.Sprintf(`{"i": %d}`, i)), Now: T0})
			require.NoError(t, err)
			require.Equal(t, int64(i), ev.Seq)
		}
		ev, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s2.ID, Name: "message", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		require.Equal(t, int64(1), ev.Seq, "each session counts on its own")

		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s1.ID, AfterSeq: 1})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		require.Equal(t, int64(2), evs[0].Seq)
		require.Equal(t, `{"i": 2}`, string(evs[0].Data), "data is kept byte for byte")
		require.Equal(t, "message", evs[0].Name)
		require.Equal(t, s1.ID, evs[0].SessionID)
		require.Equal(t, T0, evs[0].CreatedAt)
		evs, err = b.st.EventList(b.ctx, &store.EventListParams{SessionID: s1.ID, Limit: 2})
		require.NoError(t, err)
		require.Equal(t, []int64{1, 2}, []int64{evs[0].Seq, evs[1].Seq})
		got, err := b.st.SessionGet(b.ctx, s1.ID)
		require.NoError(t, err)
		require.Equal(t, int64(3), got.LastSeq)
	})
	t.Run("ConcurrentAppendsGapless", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		const n = 40
		race(t, n, func(i int) (bool, error) {
			if i%2 == 0 {
				_, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message_delta", Data: json.RawMessage(`{}`), Now: T0})
				return true, err
			}
			return true, b.st.InTx(b.ctx, func(tx store.Tx) error {
				for j := 0; j < 2; j++ {
					if _, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "tool_result", Data: json.RawMessage(`{}`), Now: T0}); err != nil {
						return err
					}
				}
				return nil
			})
		})
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
		require.NoError(t, err)
		require.Len(t, evs, n/2+n)
		seqs := make([]int64, len(evs))
		for i, ev := range evs {
			seqs[i] = ev.Seq
		}
		require.True(t, sort.SliceIsSorted(seqs, func(i, j int) bool { return seqs[i] < seqs[j] }))
		for i, s := range seqs {
			require.Equal(t, int64(i+1), s, "no gaps, no repeats")
		}
	})
	t.Run("SubscribeWakesAfterCommitOnly", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		wake, unsubscribe := b.st.Subscribe(s.ID)
		defer unsubscribe()
		other, unsubOther := b.st.Subscribe("sess_unrelated")
		defer unsubOther()

		// No require inside fn: a failed test must not keep a transaction open.
		var wokenEarly bool
		var outside []*store.Event
		err := b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "session", Data: json.RawMessage(`{}`), Now: T0}); err != nil {
				return err
			}
			if _, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message", Data: json.RawMessage(`{}`), Now: T0}); err != nil {
				return err
			}
			wokenEarly = woken(wake)
			var err error
			outside, err = b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
			return err
		})
		require.NoError(t, err)
		require.False(t, wokenEarly, "woken before the commit")
		require.Empty(t, outside, "uncommitted events are visible outside the transaction")
		waitWake(t, wake, "after commit")
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
		require.NoError(t, err)
		require.Len(t, evs, 2, "a woken subscriber finds the events")
		require.False(t, woken(other), "another session's subscriber")

		_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message_delta", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		waitWake(t, wake, "after a single append")

		unsubscribe()
		_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message_delta", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
	})
	t.Run("FollowHandsWhatEventListReads", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		other, unfollow := b.st.Follow("sess_unrelated")
		defer unfollow()
		followCommits(t, b, s.ID, FollowedCommits(b.ctx, s.ID)...)
		evs, read := other.Take()
		require.Empty(t, evs, "another session's follower")
		require.False(t, read, "another session's follower")
		require.False(t, woken(other.C), "another session's follower")
	})
	t.Run("RollbackDropsEvents", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		// Subscribed before the session has any event: with PostgreSQL an
		// earlier event's notification could still be on its way.
		wake, unsubscribe := b.st.Subscribe(s.ID)
		defer unsubscribe()
		boom := errors.New("boom")
		err := b.st.InTx(b.ctx, func(tx store.Tx) error {
			if _, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message", Data: json.RawMessage(`{}`), Now: T0}); err != nil {
				return err
			}
			if _, err := tx.MessageInsert(b.ctx, &store.MessageInsertParams{ID: "msg_gone", SessionID: s.ID, Role: "user", Now: T0}); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom, "fn's error is returned")
		require.False(t, woken(wake), "a rolled-back event woke a subscriber")
		evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: s.ID})
		require.NoError(t, err)
		require.Empty(t, evs)
		msgs, err := b.st.MessageList(b.ctx, s.ID)
		require.NoError(t, err)
		require.Empty(t, msgs)
		ev, err := b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message", Data: json.RawMessage(`{}`), Now: T0})
		require.NoError(t, err)
		require.Equal(t, int64(1), ev.Seq, "the rolled-back sequence number is reused: no gap")
		waitWake(t, wake, "after the commit that followed the rollback")
	})
}

// handedCommit is what a Follower was handed for one commit: the events,
// or read when it was told to read the log instead.
type handedCommit struct {
	events []*store.Event
	read   bool
}

// followCommits runs each of commits (a func of an InTx, or with tx nil
// a write outside one) on b's store and returns what a Follower of
// sessionID was handed for each, checking that whatever was handed is
// what EventList reads for the same numbers, byte for byte.
func followCommits(t *testing.T, b *testBundle, sessionID string, commits ...func(tx store.Tx) error) []handedCommit {
	t.Helper()
	f, unfollow := b.st.Follow(sessionID)
	defer unfollow()
	var out []handedCommit
	var after int64
	for i, c := range commits {
		// No require inside fn: a failed test must not keep a transaction open.
		require.NoError(t, b.st.InTx(b.ctx, c), "commit %d", i)
		waitWake(t, f.C, fmt.Sprintf("after commit %d", i))
		evs, read := f.Take()
		want, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: sessionID, AfterSeq: after})
		require.NoError(t, err)
		require.NotEmpty(t, want)
		after = want[len(want)-1].Seq
		if !read {
			require.Equal(t, want, evs, "commit %d: handed as EventList reads them", i)
		}
		out = append(out, handedCommit{events: evs, read: read})
	}
	return out
}

// FollowCommits is followCommits for a driver's own tests: whether the
// driver hands the events of each commit (see store.Store.Follow).
func FollowCommits(t *testing.T, st store.Store, sessionID string, commits ...func(tx store.Tx) error) (read []bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, c := range followCommits(t, &testBundle{ctx: ctx, st: st, n: &atomic.Int64{}}, sessionID, commits...) {
		read = append(read, c.read)
	}
	return read
}

// FollowedCommits are commits of events that EventList reads back
// rebuilt (references to messages and to an interaction, run ids taken
// out of Data, a time finer than the store keeps), for FollowCommits on
// session sessionID: the second references a message the first inserted.
func FollowedCommits(ctx context.Context, sessionID string) []func(tx store.Tx) error {
	now := T0.Add(1234567891 * time.Nanosecond)
	app := func(tx store.Tx, p *store.EventAppendParams) error {
		p.SessionID, p.Now = sessionID, now
		_, err := tx.EventAppend(ctx, p)
		return err
	}
	return []func(tx store.Tx) error{
		func(tx store.Tx) error {
			if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_follow_a", SessionID: sessionID, RunID: "run_f", Role: "assistant",
				Content: "<b>&\u00e9\"</b> é", ToolCalls: json.RawMessage(`[{"id":"call_f","name":"f","arguments":{"x":[1,"<"]}}]`), Now: now}); err != nil {
				return err
			}
			if _, err := tx.InteractionInsert(ctx, &store.InteractionInsertParams{ID: "ask_follow", SessionID: sessionID, RunID: "run_f", ToolCallID: "call_f",
				Tool: "ask_user", Request: json.RawMessage(`{"id":"ask_follow","runId":"run_f","sessionId":"` + sessionID + `","questions":[]}`), Now: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				return err
			}
			for _, p := range []*store.EventAppendParams{
				{Name: "session", Data: json.RawMessage(`{"sessionId":"` + sessionID + `","runId":"run_f","status":"running"}`), RunID: "run_f"},
				{Name: "message", Data: json.RawMessage(`{"messageId":"msg_follow_a","role":"assistant","content":""}`), MessageRef: "msg_follow_a"},
				{Name: "tool_call", Data: json.RawMessage(`{"toolCallId":"call_f","name":"f","arguments":""}`), MessageRef: "msg_follow_a"},
				{Name: "user_input_required", Data: json.RawMessage(`{"id":"ask_follow","runId":"run_f","sessionId":"` + sessionID + `","questions":[]}`), Ref: "ask_follow", RunID: "run_f"},
			} {
				if err := app(tx, p); err != nil {
					return err
				}
			}
			return nil
		},
		func(tx store.Tx) error {
			return app(tx, &store.EventAppendParams{Name: "message", Data: json.RawMessage(`{"messageId":"msg_follow_a","role":"assistant","content":""}`), MessageRef: "msg_follow_a"})
		},
		func(tx store.Tx) error {
			if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_follow_b", SessionID: sessionID, RunID: "run_f", Role: "tool", ToolCallID: "call_f", Content: "42", Now: now}); err != nil {
				return err
			}
			if err := app(tx, &store.EventAppendParams{Name: "tool_result", Data: json.RawMessage(`{"toolCallId":"call_f","name":"f","content":"","isError":false}`), MessageRef: "msg_follow_b"}); err != nil {
				return err
			}
			return app(tx, &store.EventAppendParams{Name: "done", Data: json.RawMessage(`{"runId":"run_f","status":"completed"}`), RunID: "run_f"})
		},
	}
}

func exerciseAuditTrace(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("AuditInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		sum := json.RawMessage(`{"mode":"single","optionIds":["safe"],"customInputLength":0}`)
		for _, action := range []string{"requested", "rejected", "answered"} {
			reason := ""
			if action == "rejected" {
				reason = "invalid_answer"
			}
			require.NoError(t, b.st.AuditInsert(b.ctx, &store.AuditInsertParams{SessionID: s.ID, RequestID: "ask_1", ToolCallID: "call_1", RunID: "run_1",
				Action: action, Reason: reason, Summary: sum, Now: T0}))
		}
		require.NoError(t, b.st.AuditInsert(b.ctx, &store.AuditInsertParams{SessionID: "sess_other", RequestID: "ask_2", Action: "requested", Now: T0}))
		list, err := b.st.AuditList(b.ctx, s.ID)
		require.NoError(t, err)
		require.Len(t, list, 3)
		require.Equal(t, []string{"requested", "rejected", "answered"}, []string{list[0].Action, list[1].Action, list[2].Action})
		require.Less(t, list[0].ID, list[1].ID)
		a := list[1]
		require.Equal(t, "invalid_answer", a.Reason)
		require.Equal(t, "ask_1", a.RequestID)
		require.Equal(t, "call_1", a.ToolCallID)
		require.Equal(t, "run_1", a.RunID)
		require.Equal(t, string(sum), string(a.Summary))
		require.Equal(t, T0, a.At)
		other, err := b.st.AuditList(b.ctx, "sess_other")
		require.NoError(t, err)
		require.Len(t, other, 1)
		require.Nil(t, other[0].Summary)
	})
	t.Run("TraceInOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		for i, kind := range []string{"model_call", "tool_call", "tool_result"} {
			require.NoError(t, b.st.TraceInsert(b.ctx, &store.TraceInsertParams{SessionID: s.ID, RunID: "run_1", Kind: kind,
				Data: json.RawMessage(fmt.Sprintf(`{"i":%d,"text":"你好"}`, i)), Now: T0.Add(time.Duration(i) * time.Millisecond)}))
		}
		list, err := b.st.TraceList(b.ctx, s.ID)
		require.NoError(t, err)
		require.Len(t, list, 3)
		require.Equal(t, "tool_call", list[1].Kind)
		require.Equal(t, `{"i":1,"text":"你好"}`, string(list[1].Data))
		require.Equal(t, "run_1", list[1].RunID)
		require.Equal(t, T0.Add(time.Millisecond), list[1].At)
	})
}
