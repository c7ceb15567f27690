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
