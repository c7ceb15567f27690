package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Migration 00022 (timeoutsMigration) moves each interaction's timeout
// into its row: DeadlineList, DeadlineListDue and DeadlineNextDue read
// what they read before (a fired timeout stays fired, a timeout not due at
// its interaction's expiry stays a row, an interaction without one has
// none), a timeout fires once, and Down restores the rows exactly.
func TestMigrationTimeouts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, timeoutsVersion-1)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('sess_a', 'o', 'a', 'idle', 1, 1)`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at) VALUES
			('ask_1', 'sess_a', 'run_a', 'call_1', 'ask_user', '{}', 0, 1, 100),
			('ask_2', 'sess_a', 'run_a', 'call_2', 'ask_user', '{}', 1, 1, 200),
			('ask_3', 'sess_a', 'run_a', 'call_3', 'ask_user', '{}', 0, 1, 300),
			('ask_4', 'sess_a', 'run_a', 'call_4', 'ask_user', '{}', 0, 1, 400)`,
		`INSERT INTO interaction_deadlines (request_id, seq, kind, due_at, fired_at, data) VALUES
			('ask_1', 0, 0, 100, NULL, '{"onTimeout":"reject"}'), ('ask_1', 1, 1, 50, NULL, NULL),
			('ask_2', 0, 0, 200, 150, '{"onTimeout":"expire"}'),
			('ask_3', 0, 0, 250, NULL, NULL)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	dump := func() []string {
		rs, err := db.QueryContext(ctx, `SELECT quote(request_id), seq, kind, due_at, quote(fired_at), quote(data) FROM interaction_deadlines ORDER BY request_id, seq`)
		require.NoError(t, err)
		defer rs.Close()
		var out []string
		for rs.Next() {
			v := make([]string, 6)
			require.NoError(t, rs.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]))
			out = append(out, strings.Join(v, "|"))
		}
		require.NoError(t, rs.Err())
		return out
	}
	before := dump()

	s, err := Open(ctx, path, nil) // applies 00022
	require.NoError(t, err)
	var rows int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM interaction_deadlines`).Scan(&rows))
	require.Equal(t, 2, rows, "the reminder and the timeout not due at its expiry stay rows")
	at := func(us int64) time.Time { return time.UnixMicro(us).UTC() }
	ds, err := s.DeadlineList(ctx, "ask_1")
	require.NoError(t, err)
	require.Equal(t, []store.Deadline{
		{RequestID: "ask_1", SessionID: "sess_a", Seq: 0, Kind: store.DeadlineTimeout, DueAt: at(100), Data: json.RawMessage(`{"onTimeout":"reject"}`)},
		{RequestID: "ask_1", SessionID: "sess_a", Seq: 1, Kind: store.DeadlineRemind, DueAt: at(50)},
	}, []store.Deadline{*ds[0], *ds[1]})
	ds, err = s.DeadlineList(ctx, "ask_2")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, at(150), ds[0].FiredAt, "a fired timeout stays fired")
	require.Equal(t, `{"onTimeout":"expire"}`, string(ds[0].Data))
	var code any
	require.NoError(t, db.QueryRowContext(ctx, `SELECT timeout_data FROM interactions WHERE id = 'ask_2'`).Scan(&code))
	require.Equal(t, int64(0), code, "the data luban writes is a small integer")
	ds, err = s.DeadlineList(ctx, "ask_3")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, at(250), ds[0].DueAt)
	ds, err = s.DeadlineList(ctx, "ask_4")
	require.NoError(t, err)
	require.Empty(t, ds, "no timeout before, none after")

	next, err := s.DeadlineNextDue(ctx)
	require.NoError(t, err)
	require.Equal(t, at(50), next)
	due, err := s.DeadlineListDue(ctx, &store.DeadlineListDueParams{Now: at(1000)})
	require.NoError(t, err)
	var got []string
	for _, d := range due {
		got = append(got, fmt.Sprint(d.RequestID, "/", d.Seq))
	}
	require.Equal(t, []string{"ask_1/1", "ask_1/0", "ask_3/0"}, got, "earliest first")
	won, err := s.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: "ask_1", Seq: 0, Pending: true, Now: at(101)})
	require.NoError(t, err)
	require.True(t, won)
	won, err = s.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: "ask_1", Seq: 0, Now: at(102)})
	require.NoError(t, err)
	require.False(t, won, "once")
	won, err = s.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: "ask_3", Seq: 0, Pending: true, Now: at(251)})
	require.NoError(t, err)
	require.True(t, won, "the timeout kept as a row fires there")
	due, err = s.DeadlineListDue(ctx, &store.DeadlineListDueParams{Now: at(1000)})
	require.NoError(t, err)
	require.Len(t, due, 1)
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, timeoutsVersion-1)
	require.NoError(t, err)
	after := dump()
	require.Equal(t, strings.Replace(strings.Replace(strings.Join(before, "\n"),
		`'ask_1'|0|0|100|NULL`, `'ask_1'|0|0|100|101`, 1),
		`'ask_3'|0|0|250|NULL`, `'ask_3'|0|0|250|251`, 1), strings.Join(after, "\n"), "Down gives back the rows, with what fired since")
}
