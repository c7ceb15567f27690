package sqlite

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
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
