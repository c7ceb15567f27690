package acceptance

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/when"
)

// team is the people of the routing tests (docs/design.md §16): alice owns
// the sessions (her token is the env's), bob, carol and erin are finance,
// dave is on call, mallory is nobody's assignee.
func team(t *testing.T) *principal.Directory {
	t.Helper()
	dir, err := principal.NewDirectory([]principal.Person{
		{ID: "alice", Name: "Alice", Tokens: []string{"alice-token"}},
		{ID: "bob", Name: "Bob", Tokens: []string{"bob-token"}, Groups: []string{"finance"}},
		{ID: "carol", Name: "Carol", Tokens: []string{"carol-token"}, Groups: []string{"finance"}},
		{ID: "erin", Name: "Erin", Tokens: []string{"erin-token"}, Groups: []string{"finance"}},
		{ID: "dave", Name: "Dave", Tokens: []string{"dave-token"}, Groups: []string{"oncall"}},
		{ID: "mallory", Name: "Mallory", Tokens: []string{"mallory-token"}},
	})
	require.NoError(t, err)
	return dir
}

// routedEnv is approvalEnv with the team and routes: alice's token is the
// env's own.
func routedEnv(t *testing.T, routes ...agent.Route) *env {
	t.Helper()
	e, _, _ := approvalEnv(t, func(o *lubantest.Options) {
		o.People = team(t)
		o.Tokens = []string{"alice-token"}
		o.Routes = routes
	})
	return e
}

func mustWhen(t *testing.T, src string) *when.Expr {
	t.Helper()
	x, err := when.Compile(src)
	require.NoError(t, err)
	return x
}

// getAs decodes a GET made with token that must answer 200.
func (e *env) getAs(token, path string, out any) {
	e.t.Helper()
	resp := e.srv.Request("GET", path, nil, token)
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusOK, resp.StatusCode, "GET %s as %s", path, token)
	require.NoError(e.t, decodeBody(resp, out))
}

// docs/design.md §16: the first matching route assigns a question when the
// run pauses: its people (a group expanded, in the directory's order) are
// stored, the request names them and whom it waits for, the route's
// settings are kept for the deadline keeper, and a question no route
// matches is the owner's as before (no assignees at all).
func TestRoutesAssignAtPause(t *testing.T) {
	t.Parallel()
	e := routedEnv(t,
		agent.Route{Kind: agent.RouteApproval, Tool: "count", Assignees: []string{"dave"}},
		agent.Route{Kind: agent.RouteApproval, Tool: "write_*", When: mustWhen(t, `args.path.startsWith("notes/")`), Assignees: []string{"group:finance", "owner"},
			Quorum: 2, Timeout: 2 * time.Minute, Remind: []time.Duration{time.Minute}, OnTimeout: "reject", Line: 12},
	)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")

	want := []api.Actor{{ID: "bob", Name: "Bob"}, {ID: "carol", Name: "Carol"}, {ID: "erin", Name: "Erin"}, {ID: "alice", Name: "Alice"}}
	require.Equal(t, want, p.req.Assignees, "the second route: finance, then the owner")
	require.Equal(t, &api.WaitingFor{Names: []string{"finance", "Alice"}, Awaiting: want, Quorum: 2, Approvals: []api.Actor{}}, p.req.WaitingFor)
	require.Equal(t, p.req.CreatedAt.Add(2*time.Minute).Truncate(time.Second), p.req.ExpiresAt, "the route's timeout")

	ctx := context.Background()
	ids, err := e.srv.Runner.Assignees(ctx, p.req.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"bob", "carol", "erin", "alice"}, ids)
	rt, err := e.srv.Runner.InteractionRoute(ctx, p.req.ID)
	require.NoError(t, err)
	require.Equal(t, &agent.AssignedRoute{Agent: e.agentName(), Index: 1, Line: 12, Kind: agent.RouteApproval, Owner: "alice",
		Assignees: []string{"group:finance", "owner"}, Quorum: 2, SelfApproval: true, Timeout: 2 * time.Minute,
		Remind: []time.Duration{time.Minute}, OnTimeout: "reject"}, rt)
	_, err = e.srv.Runner.Assignees(ctx, "ask_nope")
	require.ErrorIs(t, err, agent.ErrInteractionNotFound)

	// The pending view shows the same.
	require.Equal(t, want, e.pending(p.sessionID).Pending.Assignees)

	// An ask no route matches: the owner's, with no assignees.
	e2 := routedEnv(t, agent.Route{Kind: agent.RouteApproval, Assignees: []string{"dave"}})
	e2.model.push(turn{calls: []call{{id: "call_a", name: "ask_user", args: `{"title":"哪个?","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`}}}, turn{text: "ok"})
	q := e2.ask("", "问")
	require.Nil(t, q.req.Assignees)
	require.Nil(t, q.req.WaitingFor)
	require.NotContains(t, q.raw, "assignees")
	require.NotContains(t, q.raw, "waitingFor")
	ids, err = e2.srv.Runner.Assignees(ctx, q.req.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"alice"}, ids, "without a route the owner is the only assignee")
	rt, err = e2.srv.Runner.InteractionRoute(ctx, q.req.ID)
	require.NoError(t, err)
	require.Nil(t, rt)
}

// docs/design.md §16: an assignee sees the question in their inbox and on
// GET /api/events although the session is not theirs; nobody else does.
func TestRoutesAssigneeInboxAndFeed(t *testing.T) {
	t.Parallel()
	e := routedEnv(t, agent.Route{Kind: agent.RouteApproval, Assignees: []string{"group:finance"}, Quorum: 2})
	bobFeed := e.srv.Request("GET", "/api/events", nil, "bob-token")
	bobEvents := e.srv.Open(bobFeed, "bob-events")
	defer bobEvents.Close()
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")

	var inbox api.InteractionList
	e.getAs("bob-token", "/api/interactions?status=pending", &inbox)
	require.Len(t, inbox.Interactions, 1)
	item := inbox.Interactions[0]
	require.Equal(t, p.req.ID, item.ID)
	require.Equal(t, "write_file", item.ToolName)
	require.Equal(t, []api.Actor{{ID: "bob", Name: "Bob"}, {ID: "carol", Name: "Carol"}, {ID: "erin", Name: "Erin"}}, item.Assignees)
	require.Equal(t, 2, item.WaitingFor.Quorum)

	e.getAs("alice-token", "/api/interactions?status=pending", &inbox)
	require.Len(t, inbox.Interactions, 1, "the owner sees her own session's question")
	for _, tok := range []string{"mallory-token", "dave-token"} {
		e.getAs(tok, "/api/interactions?status=pending", &inbox)
		require.Empty(t, inbox.Interactions, tok)
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	ev, err := bobEvents.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, "user_input_required", ev.Name)
	var req api.InputRequest
	require.NoError(t, ev.Decode(&req))
	require.Equal(t, p.req.ID, req.ID)
	require.Equal(t, "write_file", req.ToolName)
}

// continueAs posts a continue with token and decodes the JSON answer: the
// 202 body (an assignee who does not own the session gets JSON, not the
// session's stream) or the error's.
func (e *env) continueAs(token string, b map[string]any, status int, code ...string) (api.ContinueAccepted, apiError) {
	e.t.Helper()
	resp := e.srv.Request("POST", "/api/chat/continue", b, token, "Accept", "application/json")
	var ok api.ContinueAccepted
	var ae apiError
	if status != http.StatusAccepted {
		ae = e.expectError(resp, status, code[0])
		return ok, ae
	}
	defer resp.Body.Close()
	require.Equal(e.t, http.StatusAccepted, resp.StatusCode)
	require.NoError(e.t, decodeBody(resp, &ok))
	return ok, ae
}

// docs/design.md §16: only an assignee answers a routed question; the
// owner who is not one, and a stranger, get 403 not_assignee and consume
// nothing; the receipt names who decided.
func TestRoutesOnlyAssigneesAnswer(t *testing.T) {
	t.Parallel()
	e := routedEnv(t, agent.Route{Kind: agent.RouteApproval, Assignees: []string{"group:finance"}})
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")
	approve := decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil)
	for _, tok := range []string{"mallory-token", "alice-token", "dave-token"} {
		resp := e.srv.Request("POST", "/api/chat/continue", approve, tok)
		ae := e.expectError(resp, http.StatusForbidden, "not_assignee")
		require.Nil(t, ae.Error.Receipt, "%s: nothing of the question in the refusal", tok)
	}
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID, "still pending")

	ok, _ := e.continueAs("carol-token", approve, http.StatusAccepted)
	require.NotNil(t, ok.Receipt)
	require.Equal(t, api.DecisionApprove, ok.Receipt.Decision)
	require.Equal(t, &api.Actor{ID: "carol", Name: "Carol"}, ok.Receipt.By)
	require.Empty(t, ok.Receipt.Decisions, "no quorum: one decision")
	evs := e.replay(p.sessionID, 0, doneOf(p.runID))
	require.Len(t, named(evs, "tool_result"), 1, "the tool ran once")
	rc := decode[api.Receipt](t, named(evs, "user_input_resolved")[0])
	require.Equal(t, &api.Actor{ID: "carol", Name: "Carol"}, rc.By, "the event's receipt names the decider")
	// Read back (inbox), the receipt still names her.
	var inbox api.InteractionList
	e.getAs("bob-token", "/api/interactions?status=resolved", &inbox)
	require.Len(t, inbox.Interactions, 1)
	require.Equal(t, &api.Actor{ID: "carol", Name: "Carol"}, inbox.Interactions[0].Receipt.By)
	require.Nil(t, inbox.Interactions[0].WaitingFor)
	acts := e.trace(p.sessionID).actions(p.req.ID)
	require.Equal(t, []string{"requested", "rejected:not_assignee", "rejected:not_assignee", "rejected:not_assignee", "answered"}, acts)
}

// docs/design.md §16: a quorum of 2 of finance's 3: the first approval is
// recorded and the question stays pending, shown as 1 of 2 approved to the
// owner; the same person cannot approve twice (409 already_decided); the
// second approval runs the tool once and the receipt lists both
// decisions. On a second question one reject after an approval rejects.
func TestRoutesQuorum(t *testing.T) {
	t.Parallel()
	e := routedEnv(t, agent.Route{Kind: agent.RouteApproval, Assignees: []string{"group:finance"}, Quorum: 2})
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")
	approve := decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil)

	first, _ := e.continueAs("bob-token", approve, http.StatusAccepted)
	require.Nil(t, first.Receipt, "one approval of two resolves nothing")
	require.NotNil(t, first.Pending)
	require.Equal(t, []api.Actor{{ID: "bob", Name: "Bob"}}, first.Pending.WaitingFor.Approvals)
	require.Equal(t, []api.Actor{{ID: "carol", Name: "Carol"}, {ID: "erin", Name: "Erin"}}, first.Pending.WaitingFor.Awaiting)
	pv := e.pending(p.sessionID)
	require.Equal(t, p.req.ID, pv.Pending.ID)
	require.Equal(t, 2, pv.Pending.WaitingFor.Quorum)
	require.Equal(t, []api.Actor{{ID: "bob", Name: "Bob"}}, pv.Pending.WaitingFor.Approvals, "the owner sees 1 of 2 approved")
	// The owner's stream got the request again with its new waitingFor.
	evs := e.replay(p.sessionID, 0, func(ev lubantest.Event) bool {
		if ev.Name != "user_input_required" {
			return false
		}
		var r api.InputRequest
		_ = ev.Decode(&r)
		return r.WaitingFor != nil && len(r.WaitingFor.Approvals) == 1
	})
	require.Len(t, named(evs, "user_input_required"), 2)

	e.continueAs("bob-token", approve, http.StatusConflict, "already_decided")
	require.Empty(t, named(e.replay(p.sessionID, 0, func(lubantest.Event) bool { return true }), "tool_result"))

	done, _ := e.continueAs("erin-token", approve, http.StatusAccepted)
	require.NotNil(t, done.Receipt)
	require.Equal(t, api.StatusAnswered, done.Receipt.Status)
	require.Equal(t, &api.Actor{ID: "erin", Name: "Erin"}, done.Receipt.By)
	require.Len(t, done.Receipt.Decisions, 2)
	require.Equal(t, api.Actor{ID: "bob", Name: "Bob"}, done.Receipt.Decisions[0].By)
	require.Equal(t, api.DecisionApprove, done.Receipt.Decisions[0].Decision)
	require.Equal(t, api.Actor{ID: "erin", Name: "Erin"}, done.Receipt.Decisions[1].By)
	evs = e.replay(p.sessionID, 0, doneOf(p.runID))
	require.Len(t, named(evs, "tool_result"), 1, "the tool ran once, after the second approval")
	e.continueAs("carol-token", approve, http.StatusConflict, "already_resolved")
	require.Equal(t, []string{"requested", "approved", "rejected:already_decided", "answered", "rejected:duplicate"}, e.trace(p.sessionID).actions(p.req.ID))

	// One approval, then a reject: rejected, the tool never runs.
	e.model.push(turn{calls: []call{{id: "call_w2", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	q := e.ask(p.sessionID, "再写")
	e.continueAs("carol-token", decisionBody(q.sessionID, q.req.ID, api.DecisionApprove, nil), http.StatusAccepted)
	rej, _ := e.continueAs("bob-token", decisionBody(q.sessionID, q.req.ID, api.DecisionReject, map[string]any{"message": "too much"}), http.StatusAccepted)
	require.Equal(t, api.DecisionReject, rej.Receipt.Decision)
	require.Equal(t, &api.Actor{ID: "bob", Name: "Bob"}, rej.Receipt.By)
	require.Len(t, rej.Receipt.Decisions, 2)
	require.Equal(t, api.DecisionReject, rej.Receipt.Decisions[1].Decision)
	evs = e.replay(q.sessionID, 0, doneOf(q.runID))
	tr := results(t, evs)
	require.True(t, tr[len(tr)-1].IsError || tr[len(tr)-1].Content != "wrote 7 bytes to notes/plan.md", "the rejected call did not run: %+v", tr[len(tr)-1])
}

// docs/design.md §16: selfApproval: false keeps the owner, an assignee,
// from approving her own agent's call (she may still reject); another
// assignee approves.
func TestRoutesSelfApproval(t *testing.T) {
	t.Parallel()
	no := false
	e := routedEnv(t, agent.Route{Kind: agent.RouteApproval, Assignees: []string{"owner", "dave"}, SelfApproval: &no})
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")
	require.Equal(t, []api.Actor{{ID: "dave", Name: "Dave"}}, p.req.WaitingFor.Awaiting, "the owner is not awaited for an approval")
	e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil), http.StatusForbidden, "not_assignee")
	e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionEdit, map[string]any{"arguments": map[string]any{"path": "x.md", "content": "y"}}), http.StatusForbidden, "not_assignee")
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID)
	ok, _ := e.continueAs("dave-token", decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil), http.StatusAccepted)
	require.Equal(t, &api.Actor{ID: "dave", Name: "Dave"}, ok.Receipt.By)
}
