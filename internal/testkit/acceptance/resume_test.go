package acceptance

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// docs/design.md §A.6.4 页面刷新: pending returns the same request until it is
// answered, then null with the last receipt; the submit then continues.
func TestRefresh(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_f", name: "ask_user", args: singleArgs}}}, turn{text: "继续了"})
	p := e.ask("", "改代码")

	first := e.pending(p.sessionID)
	require.NotNil(t, first.Pending)
	require.Nil(t, first.Last)
	want := p.req
	require.Equal(t, &want, first.Pending, "pending is the request the stream carried")
	for range 3 {
		require.Equal(t, first, e.pending(p.sessionID))
	}
	tr := e.transcript(p.sessionID)
	require.Len(t, tr.Interactions, 1)
	require.Equal(t, "pending", tr.Interactions[0].Status)
	require.Equal(t, "waiting_input", tr.Session.Status)

	// While the question waits, a new message is refused with the question.
	resp := e.srv.Request("POST", "/api/chat", map[string]any{"sessionId": p.sessionID, "message": "再来"}, "")
	ae := e.expectError(resp, http.StatusConflict, "interaction_pending")
	require.Equal(t, p.req.ID, ae.Error.Pending.ID)
	require.Len(t, e.model.requests(), 1)

	evs := e.answer(body(p.sessionID, first.Pending.ID, []string{"implement"}, ""))
	require.Equal(t, "completed", doneStatus(t, evs))
	after := e.pending(p.sessionID)
	require.Nil(t, after.Pending)
	require.NotNil(t, after.Last)
	require.Equal(t, p.req.ID, after.Last.RequestID)
	require.Equal(t, "call_f", after.Last.ToolCallID)
	require.Equal(t, api.StatusAnswered, after.Last.Status)
	require.Equal(t, []string{"implement"}, after.Last.Selections)
	require.False(t, after.Last.ResolvedAt.IsZero())
	require.Equal(t, "implement", content(t, e.waitRequests(2)[1].last().content).Selections[0])
}

// docs/design.md §A.6.4 服务重启 (exact resume): stop the server, start a new one on
// the same data; pending shows the request resumable, the continue works and
// the next model request carries the answer.
func TestRestart(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{text: "先问一下", calls: []call{{id: "call_x", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "重启前的任务")
	lastID := p.events[len(p.events)-1].ID

	e.restart()

	pv := e.pending(p.sessionID)
	require.NotNil(t, pv.Pending)
	require.Equal(t, p.req.ID, pv.Pending.ID)
	require.Equal(t, "call_x", pv.Pending.ToolCallID)
	require.True(t, pv.Pending.Resumable, "exact resume, not a display-only card")
	require.Equal(t, p.req.Options, pv.Pending.Options)

	e.model.push(turn{text: "重启后继续"})
	evs := e.answer(body(p.sessionID, p.req.ID, []string{"safe"}, ""))
	require.Equal(t, lastID+1, evs[0].ID, "the event sequence goes on where it stopped")
	require.Equal(t, "completed", doneStatus(t, evs))
	reqs := e.waitRequests(2)
	next := reqs[1]
	require.NoError(t, next.err)
	require.True(t, next.hasText("重启前的任务"))
	n := len(next.messages)
	require.Equal(t, []call{{id: "call_x", name: "ask_user", args: singleArgs}}, next.messages[n-2].calls)
	require.Equal(t, "call_x", next.last().toolCallID)
	require.Equal(t, []string{"safe"}, content(t, next.last().content).Selections)
	require.Equal(t, reqs[0].tools, next.tools)

	// The whole log survived, in one sequence.
	all := e.replay(p.sessionID, 0, doneOf(p.runID))
	require.Equal(t, append(lubantest.Names(lubantest.Logged(p.events)), lubantest.Names(lubantest.Logged(evs))...), lubantest.Names(all))
}

// A client that drops and reconnects with Last-Event-ID gets the question
// exactly once, with no gap; an answered question is never offered again.
func TestReconnect(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_n", name: "ask_user", args: singleArgs}}}, turn{text: "完成"})

	// Drop right after the first event: the run goes on without the client.
	st := e.srv.Chat("", "断线重连")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	ev, err := st.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "session", ev.Name)
	se := decode[struct{ SessionID, RunID string }](t, ev)
	e.remember(se.SessionID)
	st.Close()

	sub := e.srv.Events(se.SessionID, ev.ID)
	defer sub.Close()
	got, err := sub.Until("user_input_required", waitFor)
	require.NoError(t, err)
	checkSSE(t, sub, got)
	require.Equal(t, ev.ID+1, got[0].ID, "replay starts right after Last-Event-ID")
	requireSequence(t, got)
	p := e.pausedAt(se.SessionID, se.RunID, got)
	qid := got[len(got)-1].ID

	// Answer without a stream (Accept: application/json → 202 + receipt).
	resp := e.srv.Request("POST", "/api/chat/continue", body(p.sessionID, p.req.ID, []string{"safe"}, ""), "", "Accept", "application/json")
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", raw)
	var acc struct{ Receipt api.Receipt }
	require.NoError(t, json.Unmarshal(raw, &acc))
	require.Equal(t, p.req.ID, acc.Receipt.RequestID)

	rest, err := sub.Until("done", waitFor)
	require.NoError(t, err)
	checkSSE(t, sub, append(got, rest...))
	// The 202 receipt is the stored one: the replay (409) and the pending
	// view give the same resolvedAt, to the microsecond the stores keep.
	replayed := e.reject(body(p.sessionID, p.req.ID, []string{"safe"}, ""), http.StatusConflict, "already_resolved")
	require.Equal(t, acc.Receipt.ResolvedAt.Format(time.RFC3339Nano), replayed.Error.Receipt.ResolvedAt.Format(time.RFC3339Nano))
	require.Equal(t, acc.Receipt.ResolvedAt.Format(time.RFC3339Nano), e.pending(p.sessionID).Last.ResolvedAt.Format(time.RFC3339Nano))
	require.Empty(t, named(rest, "user_input_required"), "the question came exactly once")
	require.Equal(t, "completed", doneStatus(t, rest))

	// Reconnecting after the question (header, then ?after=) never offers it again.
	again := e.replay(p.sessionID, qid, doneOf(p.runID))
	require.Equal(t, lubantest.Names(lubantest.Logged(rest)), lubantest.Names(again), "the replay is the live events but deltas")
	resp = e.srv.Request("GET", "/api/sessions/"+p.sessionID+"/events?after="+itoa(qid), nil, "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	qs := e.srv.Open(resp, "events_after")
	viaQuery, err := qs.Until("done", waitFor)
	qs.Close()
	require.NoError(t, err)
	require.Equal(t, lubantest.Names(lubantest.Logged(rest)), lubantest.Names(viaQuery))
	require.Equal(t, qid+1, viaQuery[0].ID)

	// Refresh, then a new message in the same session: nothing old is asked.
	require.Nil(t, e.pending(p.sessionID).Pending)
	e.model.push(turn{text: "第二轮"})
	_, run2, evs := e.chat(p.sessionID, "再来一轮")
	require.NotEqual(t, p.runID, run2)
	require.Empty(t, named(evs, "user_input_required"))
	require.Equal(t, "completed", doneStatus(t, evs))
	reqs := e.waitRequests(3)
	require.Len(t, reqs[2].toolMessages(), 1, "the old answer is history, given once")
}
