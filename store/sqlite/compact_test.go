package sqlite

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// A request is stored without the members its row's columns give byte for
// byte and read back as the same bytes, whatever members it has; members
// that differ from the columns stay in it.
func TestRequestPacking(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 4, 23, 45, 1, 123456000, time.UTC)
	row := &reqRow{id: newID("ask"), toolCallID: newID("call"), sessionID: newID("sess"), runID: newID("run"), tool: "ask_user",
		created: ts(now), expires: ts(now.Add(time.Hour).Truncate(time.Second))}
	req := api.InputRequest{ID: row.id, ToolCallID: row.toolCallID, SessionID: row.sessionID, RunID: row.runID,
		Prompt: api.Prompt{Tool: "ask_user", Title: `Which "one" <b>&</b>?`, Mode: "single", Options: []api.Option{{Label: "A"}},
			Arguments: json.RawMessage(`{"x":1,"createdAt":"2026-12-04T23:45:01.123456Z","id":"` + row.id + `"}`)},
		CreatedAt: now, ExpiresAt: now.Add(time.Hour).Truncate(time.Second), Resumable: true}
	full, err := json.Marshal(req)
	require.NoError(t, err)
	other := *row
	other.tool = "approval"
	differs, err := json.Marshal(func() api.InputRequest { r := req; r.CreatedAt = now.Add(time.Second); r.RunID = "run_x"; return r }())
	require.NoError(t, err)
	for _, c := range []struct {
		name  string
		req   string
		row   *reqRow
		saves int // bytes at least
	}{
		{"every member", string(full), row, 250},
		{"the tool differs", string(full), &other, 180},
		{"createdAt and runId differ", string(differs), row, 120},
		{"only the id", `{"id":"` + row.id + `"}`, row, 20},
		{"the id last", `{"a":[1,{"b":"}"}],"id":"` + row.id + `"}`, row, 20},
		{"first and second", `{"id":"` + row.id + `","tool":"ask_user","z":null}`, row, 30},
		{"times a little apart, resumable", `{"createdAt":"2026-12-04T23:45:01.123Z","expiresAt":"2026-12-04T23:45:00Z","resumable":true}`, row, 70},
		{"times the columns cannot give", `{"createdAt":"2026-12-04T23:45:01.123456789Z","expiresAt":"2026-12-05T07:45:01+08:00","resumable":false}`, row, 0},
		{"nothing to leave out", `{"id":"ask_1","a":true}`, row, 0},
		{"not compact", `{"id": "` + row.id + `"}`, row, 0},
		{"not an object", `[1,2]`, row, 0},
		{"empty", `{}`, row, 0},
	} {
		v := packRequest([]byte(c.req), c.row)
		if c.saves == 0 {
			require.Equal(t, c.req, v, c.name)
			continue
		}
		b, ok := v.([]byte)
		require.True(t, ok, c.name)
		require.LessOrEqual(t, len(b), len(c.req)-c.saves, c.name)
		back, err := unpackRequest(b, c.row)
		require.NoError(t, err, c.name)
		require.Equal(t, c.req, string(back), c.name)
	}
	_, err = unpackRequest([]byte{reqPacked, 3, 0}, row)
	require.Error(t, err)
}

// Ids of agent.NewID's form (stored as blobs) go through the paths the
// conformance suites walk with short text ids: an interaction with its
// deadlines, assignees, notification message and MCP task, a quorum
// decision, the assignee's inbox, resolving a run's questions in creation
// order, and deleting the session with everything that names it.
func TestCompactIDsEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := Open(ctx, MigratedPath(t), nil)
	require.NoError(t, err)
	defer s.Close()
	now := time.Date(2026, 12, 4, 23, 45, 1, 0, time.UTC)
	sess, run := newID("sess"), newID("run")
	_, err = s.SessionCreate(ctx, &store.SessionCreateParams{ID: sess, Owner: "alice", Title: "t", Now: now})
	require.NoError(t, err)
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: run, SessionID: sess, Agent: "a", LeaseOwner: "inst", LeaseUntil: now.Add(time.Minute), Now: now})
	require.NoError(t, err)
	var asks []string
	for range 5 {
		asks = append(asks, newID("ask"))
	}
	for _, ask := range asks {
		req := `{"id":"` + ask + `","toolCallId":"c` + ask + `","sessionId":"` + sess + `","runId":"` + run + `","tool":"approval","createdAt":"2026-12-04T23:45:01Z","expiresAt":"2026-12-04T23:46:01Z","resumable":true}`
		_, err = s.InteractionInsert(ctx, &store.InteractionInsertParams{ID: ask, SessionID: sess, RunID: run, ToolCallID: "c" + ask, Tool: "approval", Request: []byte(req),
			Now: now, ExpiresAt: now.Add(time.Minute), Deadlines: []store.DeadlineSpec{{Kind: store.DeadlineRemind, DueAt: now.Add(time.Second)}}})
		require.NoError(t, err)
		it, err := s.InteractionGet(ctx, ask)
		require.NoError(t, err)
		require.Equal(t, req, string(it.Request))
	}
	ask := asks[0]
	require.NoError(t, s.AssigneeAdd(ctx, &store.AssigneeAddParams{RequestID: ask, Persons: []string{"bob", "carol"}, Via: store.AssigneeRoute, Now: now}))
	n, won, err := s.AssigneeDecide(ctx, &store.AssigneeDecideParams{RequestID: ask, Person: "bob", Decision: "approve", Now: now})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, 1, n)
	_, won, err = s.AssigneeDecide(ctx, &store.AssigneeDecideParams{RequestID: ask, Person: "bob", Decision: "reject", Now: now})
	require.NoError(t, err)
	require.False(t, won, "one decision each")
	inbox, err := s.InboxList(ctx, &store.InboxListParams{Owner: "carol", Status: store.InboxPending})
	require.NoError(t, err)
	require.Len(t, inbox, 1)
	require.Equal(t, ask, inbox[0].ID)
	require.Equal(t, store.RunRunning, inbox[0].RunStatus)
	require.NoError(t, s.NotifyMessagePut(ctx, &store.NotifyMessage{RequestID: ask, Channel: "slack", Person: "bob", SessionID: sess, Address: "D", Ref: "1", CreatedAt: now}))
	task := newID("task")
	_, err = s.MCPTaskInsert(ctx, &store.MCPTaskInsertParams{ID: task, Owner: "alice", SessionID: sess, RequestID: ask, Protocol: "p", TTL: time.Minute, Now: now})
	require.NoError(t, err)
	due, err := s.DeadlineListDue(ctx, &store.DeadlineListDueParams{Now: now.Add(2 * time.Second)})
	require.NoError(t, err)
	require.Len(t, due, 5)
	require.Equal(t, sess, due[0].SessionID)

	all, err := s.InteractionResolveRun(ctx, &store.InteractionResolveRunParams{SessionID: sess, RunID: run, Status: "cancelled", Now: now})
	require.NoError(t, err)
	list, err := s.InteractionList(ctx, sess)
	require.NoError(t, err)
	require.Len(t, all, 5)
	for i := range all {
		require.Equal(t, list[i].ID, all[i].ID, "the order InteractionList reads")
		require.Equal(t, "cancelled", list[i].Status)
	}
	won, err = s.RunFinish(ctx, &store.RunFinishParams{ID: run, To: store.RunCancelled, Now: now})
	require.NoError(t, err)
	require.True(t, won)

	require.NoError(t, s.SessionDelete(ctx, sess))
	for _, q := range []string{`SELECT COUNT(*) FROM interactions`, `SELECT COUNT(*) FROM interaction_assignees`, `SELECT COUNT(*) FROM interaction_deadlines`,
		`SELECT COUNT(*) FROM notify_messages`, `SELECT COUNT(*) FROM mcp_tasks`, `SELECT COUNT(*) FROM runs`} {
		var c int
		require.NoError(t, s.rdb.QueryRowContext(ctx, q).Scan(&c))
		require.Zero(t, c, q)
	}
}
