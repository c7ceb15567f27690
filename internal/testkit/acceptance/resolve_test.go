package acceptance

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// barrier runs an unrelated conversation in a new session to its end and
// checks that it was the only model request made meanwhile: whatever the
// server would still do for earlier runs has had every chance to call the
// model by then, so a count taken after it is not a race.
func (e *env) barrier(before int) {
	e.t.Helper()
	e.model.push(turn{text: "unrelated"})
	_, _, evs := e.chat("", "barrier 无关的请求")
	require.Equal(e.t, "completed", doneStatus(e.t, evs))
	reqs := e.model.requests()
	require.Len(e.t, reqs, before+1, "only the barrier's request was made")
	require.True(e.t, reqs[before].hasText("barrier 无关的请求"))
}

// sweepBarrier proves the sweeper made a full pass after this point: it puts
// a question in a new session, moves the clock past its expiresAt and waits
// for the sweeper to expire it. It checks that this question was the only
// model request made meanwhile.
func (e *env) sweepBarrier(before int) {
	e.t.Helper()
	e.model.push(turn{calls: []call{{id: "call_sweep", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "sweep barrier")
	sub := e.srv.Events(p.sessionID, p.events[len(p.events)-1].ID)
	defer sub.Close()
	e.clock.advance(p.req.ExpiresAt.Sub(p.req.CreatedAt) + time.Second)
	evs, err := sub.Until("done", waitFor)
	require.NoError(e.t, err)
	require.Equal(e.t, "expired", doneStatus(e.t, evs))
	require.Len(e.t, e.model.requests(), before+1, "only the sweep barrier's request was made")
}

// docs/design.md §A.6.4 取消: the ToolResult says cancelled, the run stops (status
// cancelled), the model is not called again and nothing asks again.
func TestCancel(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_c", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "改代码")

	evs := e.answer(cancelBody(p.sessionID, p.req.ID))
	require.Equal(t, []string{"user_input_resolved", "tool_result", "done"}, lubantest.Names(evs))
	rc := decode[api.Receipt](t, evs[0])
	require.Equal(t, api.StatusCancelled, rc.Status)
	require.Equal(t, []string{}, rc.Selections)
	res := results(t, evs)
	require.Equal(t, "call_c", res[0].ToolCallID)
	require.JSONEq(t, `{"selections":[],"customInput":"","cancelled":true}`, res[0].Content)
	require.Equal(t, "cancelled", doneStatus(t, evs))

	require.Len(t, e.model.requests(), 1)
	e.barrier(1)
	e.sweepBarrier(2)

	pv := e.pending(p.sessionID)
	require.Nil(t, pv.Pending, "nothing asks again")
	require.Equal(t, api.StatusCancelled, pv.Last.Status)
	require.Equal(t, "cancelled", e.transcript(p.sessionID).Session.Status)
	require.Equal(t, []string{"requested", "cancelled"}, e.trace(p.sessionID).actions(p.req.ID))
	all := e.replay(p.sessionID, 0, doneOf(p.runID))
	require.Len(t, named(all, "user_input_required"), 1)

	// A cancelled request cannot be answered afterwards.
	ae := e.reject(body(p.sessionID, p.req.ID, []string{"safe"}, ""), http.StatusConflict, "already_resolved")
	require.Equal(t, api.StatusCancelled, ae.Error.Receipt.Status)
}

// POST /api/sessions/{id}/cancel resolves the pending request as cancelled.
func TestCancelSession(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_c", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "改代码")
	var out struct{ Status string }
	require.Equal(t, http.StatusOK, e.srv.JSON("POST", "/api/sessions/"+p.sessionID+"/cancel", nil, &out))
	require.Equal(t, "cancelled", out.Status)
	evs := e.replay(p.sessionID, p.events[len(p.events)-1].ID, doneOf(p.runID))
	require.Equal(t, []string{"user_input_resolved", "tool_result", "done"}, lubantest.Names(evs))
	require.True(t, content(t, results(t, evs)[0].Content).Cancelled)
	require.Equal(t, "cancelled", doneStatus(t, evs))
	e.barrier(1)
}

// docs/design.md §A.6.4 重复提交: the second submit is refused with the receipt and
// makes no second ToolResult.
func TestDuplicate(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_d", name: "ask_user", args: singleArgs}}}, turn{text: "好"})
	p := e.ask("", "改代码")
	evs := e.answer(body(p.sessionID, p.req.ID, []string{"safe"}, ""))
	require.Equal(t, "completed", doneStatus(t, evs))

	for _, sel := range []string{"safe", "implement"} {
		ae := e.reject(body(p.sessionID, p.req.ID, []string{sel}, ""), http.StatusConflict, "already_resolved")
		require.NotNil(t, ae.Error.Receipt)
		require.Equal(t, p.req.ID, ae.Error.Receipt.RequestID)
		require.Equal(t, "call_d", ae.Error.Receipt.ToolCallID)
		require.Equal(t, api.StatusAnswered, ae.Error.Receipt.Status)
		require.Equal(t, []string{"safe"}, ae.Error.Receipt.Selections, "the receipt is the first answer's")
	}
	ae := e.reject(cancelBody(p.sessionID, p.req.ID), http.StatusConflict, "already_resolved")
	require.Equal(t, api.StatusAnswered, ae.Error.Receipt.Status)

	e.barrier(2)
	all := e.replay(p.sessionID, 0, doneOf(p.runID))
	require.Len(t, named(all, "tool_result"), 1, "no second ToolResult")
	require.Len(t, named(all, "user_input_resolved"), 1)
	require.Equal(t, []string{"requested", "answered", "rejected:duplicate", "rejected:duplicate", "rejected:duplicate"}, e.trace(p.sessionID).actions(p.req.ID))
}

// Two identical continues sent at the same moment: exactly one wins (200),
// the other is 409 already_resolved, and the audit has one "answered".
func TestDuplicateConcurrent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_r", name: "ask_user", args: singleArgs}}}, turn{text: "好"})
	p := e.ask("", "改代码")

	const n = 2
	b := body(p.sessionID, p.req.ID, []string{"implement"}, "")
	var wg sync.WaitGroup
	start := make(chan struct{})
	resps := make([]*http.Response, n)
	errs := make([]error, n)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resps[i], errs[i] = e.rawContinue(ctx, b)
		}()
	}
	close(start)
	wg.Wait()
	var won []lubantest.Event
	statuses := map[int]int{}
	for i := range n {
		require.NoError(t, errs[i])
		statuses[resps[i].StatusCode]++
		switch resps[i].StatusCode {
		case http.StatusOK:
			won = e.readAll(e.srv.Open(resps[i], "continue"))
		case http.StatusConflict:
			raw, _ := io.ReadAll(resps[i].Body)
			resps[i].Body.Close()
			var ae apiError
			require.NoError(t, json.Unmarshal(raw, &ae))
			require.Equal(t, "already_resolved", ae.Error.Code)
			require.Equal(t, []string{"implement"}, ae.Error.Receipt.Selections)
		default:
			raw, _ := io.ReadAll(resps[i].Body)
			t.Fatalf("continue: %d %s", resps[i].StatusCode, raw)
		}
	}
	require.Equal(t, map[int]int{200: 1, 409: 1}, statuses)
	require.Equal(t, "completed", doneStatus(t, won))

	reqs := e.waitRequests(2)
	require.Len(t, reqs[1].toolMessages(), 1, "one ToolResult reached the model")
	e.barrier(2)
	actions := e.trace(p.sessionID).actions(p.req.ID)
	require.ElementsMatch(t, []string{"requested", "answered", "rejected:duplicate"}, actions)
}

// docs/design.md §A.6.4 跨会话提交: answering session B's request through session A
// is 404 and B's request stays pending and answerable.
func TestCrossSession(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_a", name: "ask_user", args: singleArgs}}})
	a := e.ask("", "会话 A")
	e.model.push(turn{calls: []call{{id: "call_b", name: "ask_user", args: singleArgs}}})
	b := e.ask("", "会话 B")
	require.NotEqual(t, a.sessionID, b.sessionID)

	e.reject(body(a.sessionID, b.req.ID, []string{"safe"}, ""), http.StatusNotFound, "interaction_not_found")
	e.reject(cancelBody(a.sessionID, b.req.ID), http.StatusNotFound, "interaction_not_found")
	e.reject(body(b.sessionID, "ask_doesnotexist", []string{"safe"}, ""), http.StatusNotFound, "interaction_not_found")
	// An unknown session is session_not_found: a client words "no such
	// session" apart from "no such question" by the code.
	e.reject(body("sess_doesnotexist", b.req.ID, []string{"safe"}, ""), http.StatusNotFound, "session_not_found")

	require.Equal(t, b.req.ID, e.pending(b.sessionID).Pending.ID, "B is untouched")
	require.Equal(t, a.req.ID, e.pending(a.sessionID).Pending.ID, "A is untouched")
	require.Equal(t, []string{"requested", "rejected:session_mismatch", "rejected:session_mismatch"}, e.trace(b.sessionID).actions(b.req.ID))
	require.Len(t, e.model.requests(), 2)

	e.model.push(turn{text: "B 完成"})
	evs := e.answer(body(b.sessionID, b.req.ID, []string{"implement"}, ""))
	require.Equal(t, "completed", doneStatus(t, evs))
	reqs := e.waitRequests(3)
	require.Equal(t, "call_b", reqs[2].last().toolCallID)
	require.True(t, reqs[2].hasText("会话 B"))
	require.False(t, reqs[2].hasText("会话 A"), "B's model request holds nothing of A")
	require.Equal(t, a.req.ID, e.pending(a.sessionID).Pending.ID)
}

// docs/design.md §3: a continue after expiresAt is 410 even before the sweeper ran;
// the request resolves as expired and the run ends expired.
func TestExpiredBeforeSweeper(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *lubantest.Options) { o.TTL = time.Hour; o.SweepInterval = 24 * time.Hour })
	e.model.push(turn{calls: []call{{id: "call_e", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "改代码")
	require.WithinDuration(t, p.req.CreatedAt.Add(time.Hour), p.req.ExpiresAt, time.Second)

	e.clock.advance(time.Hour + time.Second)
	e.reject(body(p.sessionID, p.req.ID, []string{"safe"}, ""), http.StatusGone, "interaction_expired")
	evs := e.replay(p.sessionID, p.events[len(p.events)-1].ID, doneOf(p.runID))
	rc := decode[api.Receipt](t, one(t, evs, "user_input_resolved"))
	require.Equal(t, api.StatusExpired, rc.Status)
	require.Equal(t, askContent{Selections: []string{}, Cancelled: true, Expired: true}, content(t, results(t, evs)[0].Content))
	require.Equal(t, "expired", doneStatus(t, evs))

	e.reject(body(p.sessionID, p.req.ID, []string{"safe"}, ""), http.StatusGone, "interaction_expired")
	pv := e.pending(p.sessionID)
	require.Nil(t, pv.Pending)
	require.Equal(t, api.StatusExpired, pv.Last.Status, "a timeout never disappears silently")
	require.Equal(t, []string{"requested", "expired", "rejected:expired", "rejected:expired"}, e.trace(p.sessionID).actions(p.req.ID))
	e.barrier(1)
}

// docs/design.md §3: the sweeper resolves a request past expiresAt: subscribers get
// user_input_resolved with status expired, the run ends expired, and the
// model is not called again.
func TestExpiredBySweeper(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *lubantest.Options) { o.TTL = time.Hour })
	e.model.push(turn{calls: []call{{id: "call_e", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "改代码")
	sub := e.srv.Events(p.sessionID, p.events[len(p.events)-1].ID)
	defer sub.Close()

	e.clock.advance(2 * time.Hour)
	evs, err := sub.Until("done", waitFor)
	require.NoError(t, err)
	checkSSE(t, sub, evs)
	require.Equal(t, []string{"user_input_resolved", "tool_result", "done"}, lubantest.Names(evs))
	rc := decode[api.Receipt](t, evs[0])
	require.Equal(t, api.StatusExpired, rc.Status)
	require.Equal(t, p.req.ID, rc.RequestID)
	require.True(t, content(t, results(t, evs)[0].Content).Expired)
	require.Equal(t, "expired", doneStatus(t, evs))

	ae := e.reject(body(p.sessionID, p.req.ID, []string{"safe"}, ""), http.StatusGone, "interaction_expired")
	require.Equal(t, api.StatusExpired, ae.Error.Receipt.Status, "410 carries the expired receipt")
	require.Equal(t, []string{"requested", "expired", "rejected:expired"}, e.trace(p.sessionID).actions(p.req.ID))
	require.Equal(t, "expired", e.transcript(p.sessionID).Session.Status)
	e.barrier(1)
}
