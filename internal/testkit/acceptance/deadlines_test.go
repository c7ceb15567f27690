package acceptance

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// feedOf opens token's GET /api/events (the person's own stream).
func (e *env) feedOf(token string) *lubantest.Stream {
	e.t.Helper()
	st := e.srv.Open(e.srv.Request("GET", "/api/events", nil, token), token+"-events")
	e.t.Cleanup(st.Close)
	return st
}

// nextReminder reads st up to its next user_input_reminder.
func (e *env) nextReminder(st *lubantest.Stream) api.InputReminder {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	for {
		ev, err := st.Next(ctx)
		require.NoError(e.t, err)
		if ev.Name == api.EventUserInputReminder {
			return decode[api.InputReminder](e.t, ev)
		}
	}
}

// count of a session's events called name.
func countEvents(evs []lubantest.Event, name string) int {
	n := 0
	for _, ev := range evs {
		if ev.Name == name {
			n++
		}
	}
	return n
}

// docs/design.md §16 "Deadlines": a route's reminder tells the assignees
// again, its escalation adds its people (who may answer from then on) and
// tells them, each once, through their own feeds; the timeout then resolves
// the question, and no deadline fires again.
func TestDeadlineRemindEscalateOnce(t *testing.T) {
	t.Parallel()
	e := routedEnv(t, agent.Route{Kind: agent.RouteApproval, Assignees: []string{"bob"}, Remind: []time.Duration{time.Minute},
		Escalate: &agent.Escalate{After: 2 * time.Minute, To: []string{"dave"}}, Timeout: 10 * time.Minute, OnTimeout: "reject"})
	bob, dave := e.feedOf("bob-token"), e.feedOf("dave-token")
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")
	ids, err := e.srv.Runner.Assignees(context.Background(), p.req.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"bob"}, ids)

	e.clock.advance(time.Minute + time.Second)
	rm := e.nextReminder(bob)
	require.Equal(t, api.InputReminder{RequestID: p.req.ID, SessionID: p.sessionID, RunID: p.runID, Reason: api.ReminderReminder,
		Notify: []string{"bob"}, ExpiresAt: p.req.ExpiresAt}, rm)

	e.clock.advance(time.Minute)
	rm = e.nextReminder(dave)
	require.Equal(t, api.ReminderEscalation, rm.Reason)
	require.Equal(t, []string{"dave"}, rm.Notify)
	ids, err = e.srv.Runner.Assignees(context.Background(), p.req.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"bob", "dave"}, ids, "the escalation target may answer too")

	sub := e.srv.Events(p.sessionID, 0)
	defer sub.Close()
	e.clock.advance(10 * time.Minute)
	evs, err := sub.Until("done", waitFor)
	require.NoError(t, err)
	require.Equal(t, "completed", doneStatus(t, evs), "a reject lets the run go on")
	require.Equal(t, 2, countEvents(evs, api.EventUserInputReminder), "one reminder, one escalation: %v", lubantest.Names(evs))
	require.Equal(t, 1, countEvents(evs, api.EventUserInputResolved))
	acts := e.trace(p.sessionID).actions(p.req.ID)
	require.Equal(t, []string{"requested", "reminded", "escalated", "expired"}, acts)
}

// docs/design.md §16 "Deadlines": the timeout resolves the question through
// the resolve transition with the route's onTimeout: status expired, by
// timeout, the decision the action took, and the run goes on (or ends, for
// cancel) accordingly: an approve runs the tool once, a reject declines it.
func TestDeadlineTimeoutActions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		onTimeout string
		decision  api.Decision
		done      string
		written   bool
	}{
		{"approve", api.DecisionApprove, "completed", true},
		{"reject", api.DecisionReject, "completed", false},
		{"default", api.DecisionReject, "completed", false},
		{"cancel", api.DecisionCancel, "expired", false},
	} {
		t.Run(tc.onTimeout, func(t *testing.T) {
			t.Parallel()
			e, ws, _ := approvalEnv(t, func(o *lubantest.Options) {
				o.People = team(t)
				o.Tokens = []string{"alice-token"}
				o.Routes = []agent.Route{{Kind: agent.RouteApproval, Assignees: []string{"owner"}, Timeout: time.Minute, OnTimeout: tc.onTimeout}}
			})
			e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
			p := e.ask("", "写")
			sub := e.srv.Events(p.sessionID, p.events[len(p.events)-1].ID)
			defer sub.Close()
			e.clock.advance(time.Minute + time.Second)
			evs, err := sub.Until("done", waitFor)
			require.NoError(t, err)
			require.Equal(t, tc.done, doneStatus(t, evs))
			rc := decode[api.Receipt](t, evs[0])
			require.Equal(t, api.StatusExpired, rc.Status)
			require.Equal(t, tc.decision, rc.Decision)
			require.NotNil(t, rc.By)
			require.Equal(t, agent.ByTimeout, rc.By.ID, "by: timeout")
			_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
			require.Equal(t, tc.written, written, "the tool ran only on approve")

			// The receipt reads back the same, and a late answer is 410 with it.
			late := e.expectError(e.srv.Continue(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil)), http.StatusGone, "interaction_expired")
			require.Equal(t, tc.decision, late.Error.Receipt.Decision)
		})
	}
}

// docs/design.md §16: onTimeout default answers a question with its
// recommended option; the model gets that answer and the run goes on.
func TestDeadlineTimeoutDefaultAnswer(t *testing.T) {
	t.Parallel()
	e := routedEnv(t, agent.Route{Kind: agent.RouteAsk, Assignees: []string{"owner"}, Timeout: time.Minute})
	e.model.push(turn{calls: []call{{id: "call_q", name: "ask_user", args: singleArgs}}}, turn{text: "ok"})
	p := e.ask("", "问")
	sub := e.srv.Events(p.sessionID, p.events[len(p.events)-1].ID)
	defer sub.Close()
	e.clock.advance(time.Minute + time.Second)
	evs, err := sub.Until("done", waitFor)
	require.NoError(t, err)
	require.Equal(t, "completed", doneStatus(t, evs))
	rc := decode[api.Receipt](t, evs[0])
	require.Equal(t, api.StatusExpired, rc.Status)
	require.Equal(t, api.DecisionDefault, rc.Decision)
	require.Equal(t, []string{"safe"}, rc.Selections, "the recommended option")
	res := results(t, evs)
	require.Len(t, res, 1)
	require.Contains(t, res[0].Content, `"safe"`)
}

// docs/design.md §16 delegate: an assignee hands the question on; the new
// assignee is told and may answer, the old one may not; to oneself, to a
// stranger or to an assignee is 422, a non-assignee is 403 not_assignee.
func TestDelegate(t *testing.T) {
	t.Parallel()
	e := routedEnv(t, agent.Route{Kind: agent.RouteApproval, Assignees: []string{"bob", "carol"}})
	dave := e.feedOf("dave-token")
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")
	path := "/api/interactions/" + p.req.ID + "/delegate"
	post := func(token string, b map[string]any) *http.Response { return e.srv.Request("POST", path, b, token) }

	e.expectError(post("bob-token", map[string]any{"to": "bob"}), http.StatusUnprocessableEntity, "invalid_delegation")
	e.expectError(post("bob-token", map[string]any{"to": "zed"}), http.StatusUnprocessableEntity, "invalid_delegation")
	e.expectError(post("bob-token", map[string]any{"to": "carol"}), http.StatusUnprocessableEntity, "invalid_delegation")
	e.expectError(post("alice-token", map[string]any{"to": "dave"}), http.StatusForbidden, "not_assignee")
	e.expectError(post("bob-token", map[string]any{"to": "dave", "extra": 1}), http.StatusBadRequest, "invalid_request")

	resp := post("bob-token", map[string]any{"to": "dave", "message": "你熟悉这个客户"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var res api.DelegateResult
	require.NoError(t, decodeBody(resp, &res))
	resp.Body.Close()
	require.Equal(t, api.DelegateResult{RequestID: p.req.ID, From: api.Actor{ID: "bob", Name: "Bob"}, To: api.Actor{ID: "dave", Name: "Dave"},
		Assignees: []api.Actor{{ID: "carol", Name: "Carol"}, {ID: "dave", Name: "Dave"}}}, res)
	rm := e.nextReminder(dave)
	require.Equal(t, api.ReminderDelegation, rm.Reason)
	require.Equal(t, []string{"dave"}, rm.Notify)
	require.Equal(t, "bob", rm.From)
	require.Equal(t, "你熟悉这个客户", rm.Message)

	e.expectError(post("bob-token", map[string]any{"to": "erin"}), http.StatusForbidden, "not_assignee")
	require.Contains(t, e.trace(p.sessionID).actions(p.req.ID), "delegated")
}
