package replicatest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

type testBundle struct {
	db   string
	fake *fakeopenai.Server
	a, b *replica
}

type setupOptions struct {
	FaultA string // LUBAN_FAULT of replica A
	TTL    string // --interaction-ttl of both
	Lease  string // --lease of both; default 30s
}

// setup starts replicas A and B on a fresh schema with one fake model.
func setup(t *testing.T, o setupOptions) *testBundle {
	t.Helper()
	db := pgtest.Schema(t)
	fake := fakeopenai.New(t)
	a := startReplica(t, replicaOptions{Name: "A", DB: db, Fake: fake, Fault: o.FaultA, TTL: o.TTL, Lease: o.Lease})
	b := startReplica(t, replicaOptions{Name: "B", DB: db, Fake: fake, TTL: o.TTL, Lease: o.Lease})
	return &testBundle{db: db, fake: fake, a: a, b: b}
}

// count runs a COUNT(*) query on the test's schema: the evidence in the table.
func (b *testBundle) count(t *testing.T, query string, args ...any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitEvents)
	defer cancel()
	conn, err := pgx.Connect(ctx, b.db)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var n int
	require.NoError(t, conn.QueryRow(ctx, query, args...).Scan(&n))
	return n
}

const askArgs = `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`

func askTurn() fakeopenai.Turn {
	return fakeopenai.Turn{Text: "我需要问一下。", ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "ask_user", Arguments: askArgs}}}
}

// asked starts a run on r and reads its stream to user_input_required; it
// returns the events, the session id and the request id.
func asked(t *testing.T, r *replica) ([]lubantest.Event, string, string) {
	t.Helper()
	evs, err := r.API.Chat("", "帮我改代码").Until("user_input_required", waitEvents)
	require.NoError(t, err)
	sess, ok := lubantest.Find(evs, "session")
	require.True(t, ok)
	var se struct{ SessionID string }
	require.NoError(t, sess.Decode(&se))
	var ir struct{ ID string }
	require.NoError(t, evs[len(evs)-1].Decode(&ir))
	return evs, se.SessionID, ir.ID
}

func answer(sessionID, requestID string) map[string]any {
	return map[string]any{"sessionId": sessionID, "requestId": requestID, "selections": []string{"safe"}, "customInput": "", "cancelled": false}
}

// requireContiguous checks that ids run from first, one by one, except
// before an assistant message, where the ids of deltas a slow stream
// committed and the message's transaction deleted are skipped (docs/design.md §3:
// ids increase; they may skip deleted deltas).
func requireContiguous(t *testing.T, evs []lubantest.Event, first int64) {
	t.Helper()
	after := first - 1
	for i, ev := range evs {
		lubantest.RequireNext(t, after, ev, "event %d (%s): gap or repeat in %v", i, ev.Name, lubantest.Names(evs))
		after = ev.ID
	}
}

func requireDone(t *testing.T, evs []lubantest.Event, status string) {
	t.Helper()
	require.NotEmpty(t, evs)
	last := evs[len(evs)-1]
	require.Equal(t, "done", last.Name, "%v", lubantest.Names(evs))
	var d struct{ Status string }
	require.NoError(t, last.Decode(&d))
	require.Equal(t, status, d.Status)
}

// A question asked on A is answered on B; a subscriber on A receives the
// continuation B drives, in order and without gaps (LISTEN/NOTIFY: the SSE
// heartbeat is an hour, so no periodic re-read can stand in for it).
func TestAskOnAAnswerOnB(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	b.fake.Push(askTurn(), fakeopenai.Turn{Text: "好的，先分析。"})

	evs, sessionID, requestID := asked(t, b.a)
	lastSeen := evs[len(evs)-1].ID
	sub := b.a.API.Events(sessionID, lastSeen)
	defer sub.Close()

	resp := b.b.API.Continue(answer(sessionID, requestID))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	onB, err := b.b.API.Open(resp, "B-continue").All(waitEvents)
	require.NoError(t, err)
	requireDone(t, onB, "completed")

	onA, err := sub.Until("done", waitEvents)
	require.NoError(t, err)
	requireContiguous(t, onA, lastSeen+1)
	require.Equal(t, lubantest.Names(lubantest.Logged(onB)), lubantest.Names(lubantest.Logged(onA)), "A's subscriber sees what B's stream saw (a delta B committed may be deleted before A reads it)")
	require.Equal(t, "user_input_resolved", onA[0].Name)
	requireDone(t, onA, "completed")

	reqs := b.fake.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "tool", last["role"])
	require.Equal(t, "call_1", last["tool_call_id"])
}

// 200 identical answers split between A and B at the same moment: exactly
// one 200, every other one 409, one ToolResult, one model call after it.
func TestRacingContinuesAcrossReplicas(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	b.fake.Push(askTurn(), fakeopenai.Turn{Text: "好的。"})
	_, sessionID, requestID := asked(t, b.a)

	const n = 200
	body, err := json.Marshal(answer(sessionID, requestID))
	require.NoError(t, err)
	start := make(chan struct{})
	type result struct {
		status int
		code   string
		events []lubantest.Event
		err    error
	}
	results := make(chan result, n)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		target := b.a
		if i%2 == 1 {
			target = b.b
		}
		req, err := http.NewRequest(http.MethodPost, target.URL+"/api/chat/continue", bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer test-token")
		req.Header.Set("Content-Type", "application/json")
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := client.Do(req)
			if err != nil {
				results <- result{err: err}
				return
			}
			defer resp.Body.Close()
			res := result{status: resp.StatusCode}
			if resp.StatusCode == http.StatusOK {
				res.events, res.err = target.API.Open(resp, "winner").All(waitEvents)
			} else {
				var e struct {
					Error struct{ Code string }
				}
				raw, _ := io.ReadAll(resp.Body)
				res.err = json.Unmarshal(raw, &e)
				res.code = e.Error.Code
			}
			results <- res
		}()
	}
	close(start)
	wg.Wait()
	close(results)
	statuses := map[int]int{}
	codes := map[string]int{}
	for r := range results {
		require.NoError(t, r.err)
		statuses[r.status]++
		if r.status == http.StatusOK {
			requireDone(t, r.events, "completed")
		} else {
			codes[r.code]++
		}
	}
	require.Equal(t, map[int]int{http.StatusOK: 1, http.StatusConflict: n - 1}, statuses)
	require.Len(t, codes, 1, "every loser gets the same error code: %v", codes)

	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE role = 'tool' AND tool_call_id = 'call_1'`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM events WHERE session_id = $1 AND name = 'user_input_resolved'`, sessionID))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit WHERE session_id = $1 AND action = 'answered'`, sessionID))
	require.Equal(t, n-1, b.count(t, `SELECT count(*) FROM audit WHERE session_id = $1 AND action = 'rejected' AND reason = 'duplicate'`, sessionID))
	require.Len(t, b.fake.Requests(), 2, "one model call after the answer")
}

// A is killed (SIGKILL, by its own fault injection) while it streams the
// model's answer; B takes the run over once A's 1s lease expires and
// finishes it. A client that had followed A reconnects to B and misses
// nothing.
func TestKilledReplicaRunFinishedByOther(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{FaultA: "model_stream", Lease: "1s"})
	b.fake.Push(fakeopenai.Turn{Text: "第一次的回答会被打断。", ChunkBytes: 6}, fakeopenai.Turn{Text: "接手后完成。"})

	// The stream breaks when A dies, possibly before its response headers
	// (the run reaches the model before the handler flushes them).
	body, err := json.Marshal(map[string]string{"message": "写一首诗"})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, b.a.API.URL+"/api/chat", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+b.a.API.Token)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_, _ = b.a.API.Open(resp, "chat").All(waitEvents)
	}
	b.a.WaitKilled()
	var list struct {
		Sessions []struct{ ID string }
	}
	require.Equal(t, http.StatusOK, b.b.API.JSON(http.MethodGet, "/api/sessions", nil, &list))
	require.Len(t, list.Sessions, 1, "A committed the run before it died")

	all := b.b.API.EventsUntil(list.Sessions[0].ID, 0, "done", waitEvents)
	sess, ok := lubantest.Find(all, "session")
	require.True(t, ok)
	var se struct{ SessionID, RunID string }
	require.NoError(t, sess.Decode(&se))
	requireContiguous(t, all, 1)
	requireDone(t, all, "completed")
	msg := all[len(all)-2]
	require.Equal(t, "message", msg.Name)
	require.Contains(t, string(msg.Data), "接手后完成。")
	require.Len(t, b.fake.Requests(), 2, "B made the model call again")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM runs WHERE id = $1 AND status = 'completed'`, se.RunID))
}

// A client follows a run on A, disconnects, and reconnects to B with the
// Last-Event-ID it had on A: it gets every later event once, in order.
func TestLastEventIDAcrossReplicas(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	b.fake.Push(askTurn(), fakeopenai.Turn{Text: "好的，先分析。"})
	evs, sessionID, requestID := asked(t, b.a)
	lastSeen := evs[len(evs)-1].ID
	requireContiguous(t, evs, 1)

	// Answered on A with the client away (202, no stream).
	resp := b.a.API.Request(http.MethodPost, "/api/chat/continue", answer(sessionID, requestID), "", "Accept", "application/json")
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", raw)

	rest := b.b.API.EventsUntil(sessionID, lastSeen, "done", waitEvents)
	requireContiguous(t, rest, lastSeen+1)
	requireDone(t, rest, "completed")

	full := b.b.API.EventsUntil(sessionID, 0, "done", waitEvents)
	require.Equal(t, append(lubantest.Names(lubantest.Logged(evs)), lubantest.Names(lubantest.Logged(rest))...), lubantest.Names(full))
}

// Both replicas' sweepers find the same expired question: it is expired
// once (one ToolResult, one audit entry, one done), never twice.
func TestSweepersExpireOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{TTL: "1s"})
	b.fake.Push(askTurn())
	_, sessionID, _ := asked(t, b.a)

	all := b.b.API.EventsUntil(sessionID, 0, "done", waitEvents)
	requireDone(t, all, "expired")
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE role = 'tool' AND tool_call_id = 'call_1'`))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM audit WHERE session_id = $1 AND action = 'expired'`, sessionID))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM events WHERE session_id = $1 AND name = 'done'`, sessionID))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM events WHERE session_id = $1 AND name = 'user_input_resolved'`, sessionID))
	require.Len(t, b.fake.Requests(), 1, "no model call after an expiry")
}

// Stop on B while A streams the reply: the text A committed so far is
// stored as the run's assistant message with stopped=true in B's cancel,
// both streams get that message before done (raw SSE: A's own chat stream
// and B's session stream), the transcript on both replicas has it, and A's
// model call ends (its request to the model goes away) without writing more.
func TestStopOnOtherReplicaKeepsPartialReply(t *testing.T) {
	t.Parallel()
	b := setup(t, setupOptions{})
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	const partial = "床前明月光，疑是地上霜。"
	gone := make(chan struct{})
	b.fake.Push(fakeopenai.Turn{Text: partial, ChunkBytes: 6, Hold: hold, Gone: gone})

	// A streams the reply until every piece is in the log.
	st := b.a.API.Chat("", "背一首诗")
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitEvents)
	defer cancel()
	var onA []lubantest.Event
	var sessionID, streamed string
	for streamed != partial {
		ev, err := st.Next(ctx)
		require.NoError(t, err, "A's stream before the stop: %v", lubantest.Names(onA))
		onA = append(onA, ev)
		switch ev.Name {
		case "session":
			var se struct{ SessionID string }
			require.NoError(t, ev.Decode(&se))
			sessionID = se.SessionID
		case "message_delta":
			var d struct{ Delta string }
			require.NoError(t, ev.Decode(&d))
			streamed += d.Delta
		}
	}

	var cancelled struct{ Status string }
	require.Equal(t, http.StatusOK, b.b.API.JSON(http.MethodPost, "/api/sessions/"+sessionID+"/cancel", nil, &cancelled))
	require.Equal(t, "cancelled", cancelled.Status)

	rest, err := st.All(waitEvents)
	require.NoError(t, err)
	onA = append(onA, rest...)
	requireDone(t, onA, "cancelled")
	stopped := onA[len(onA)-2]
	require.Equal(t, "message", stopped.Name, "A's stream: %v", lubantest.Names(onA))
	var me struct {
		MessageID, Role, Content string
		Stopped                  bool
	}
	require.NoError(t, stopped.Decode(&me))
	require.Equal(t, "assistant", me.Role)
	require.Equal(t, partial, me.Content)
	require.True(t, me.Stopped, "%s", stopped.Data)

	onB := b.b.API.EventsUntil(sessionID, 0, "done", waitEvents)
	require.Equal(t, []string{"session", "message", "message", "done"}, lubantest.Names(onB), "the log keeps no delta of the stopped reply")
	require.Equal(t, string(stopped.Data), string(onB[2].Data), "B's stream has A's bytes")

	for _, r := range []*replica{b.a, b.b} {
		var tr struct {
			Messages []struct {
				ID, Role, Content string
				Stopped           bool
			}
		}
		require.Equal(t, http.StatusOK, r.API.JSON(http.MethodGet, "/api/sessions/"+sessionID, nil, &tr))
		require.Len(t, tr.Messages, 2)
		require.Equal(t, me.MessageID, tr.Messages[1].ID)
		require.Equal(t, partial, tr.Messages[1].Content)
		require.True(t, tr.Messages[1].Stopped)
	}

	// A ends its model call: the fake's handler sees the request go away.
	select {
	case <-gone:
	case <-ctx.Done():
		t.Fatal("A's model call is still open after the stop")
	}
	require.Len(t, b.fake.Requests(), 1)
	require.Equal(t, 0, b.count(t, `SELECT count(*) FROM events WHERE session_id = $1 AND name = 'message_delta'`, sessionID))
	require.Equal(t, 1, b.count(t, `SELECT count(*) FROM messages WHERE session_id = $1 AND role = 'assistant' AND metadata::text LIKE '%stopped%'`, sessionID))
}
