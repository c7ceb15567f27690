package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Migration 00030 (runs_open): recovery finds the running runs whose lease
// expired among the open runs (the partial index runs_open) instead of
// through runs_recoverable; runs stored before it are found as they were
// (a paused run and an ended one are not), a run started after it is, and
// Down gives back runs_recoverable with the rows unchanged.
func TestMigrationRunsOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := sqlMigration(t, "runs_open")
	db, p, path := migratedTo(t, v-1)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES
			('sess_a', 'o', 'a', 'running', 1, 5), ('sess_b', 'o', 'b', 'waiting_input', 2, 6),
			('sess_c', 'o', 'c', 'completed', 3, 3), ('sess_d', 'o', 'd', 'running', 4, 4)`,
		// run_1 running, its lease expired at 8; run_2 paused; run_3 ended;
		// run_4 running, leased until 100.
		`INSERT INTO runs (id, session_id, agent, status, open, lease_owner, lease_until, created_at, updated_at) VALUES
			('run_1', 'sess_a', 'x', 1, 1, 'inst_a', 8, 5, 5), ('run_2', 'sess_b', 'x', 2, 1, '', 0, 2, 6),
			('run_3', 'sess_c', 'x', 3, NULL, '', 0, 3, 3), ('run_4', 'sess_d', 'x', 1, 1, 'inst_a', 100, 4, 4)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	runs := dumpTable(t, db, "runs")
	index := func(name string) int {
		t.Helper()
		var n int
		require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name = ?`, name).Scan(&n))
		return n
	}
	recoverable := func(s *Store, now int64) []string {
		t.Helper()
		rs, err := s.RunListRecoverable(ctx, &store.RunListRecoverableParams{Now: time.UnixMicro(now)})
		require.NoError(t, err)
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.ID)
		}
		return ids
	}

	s, err := Open(ctx, path, nil) // applies the migration
	require.NoError(t, err)
	require.Zero(t, index("runs_recoverable"))
	require.Equal(t, 1, index("runs_open"))
	require.Equal(t, []string{"run_1"}, recoverable(s, 10), "the running run whose lease expired, not the paused or the ended one")
	require.Equal(t, []string{"run_4", "run_1"}, recoverable(s, 200), "oldest run first")
	// A run started after the migration: found while it runs with an
	// expired lease, not while it waits, again once it runs, not once it
	// ended.
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run_5", SessionID: "sess_c", Agent: "x", LeaseOwner: "inst_a",
		LeaseUntil: time.UnixMicro(20), Now: time.UnixMicro(6)})
	require.NoError(t, err)
	require.Equal(t, []string{"run_1", "run_5"}, recoverable(s, 30))
	won, err := s.RunPause(ctx, &store.RunPauseParams{ID: "run_5", LeaseOwner: "inst_a", Now: time.UnixMicro(7)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, []string{"run_1"}, recoverable(s, 30))
	won, err = s.RunResume(ctx, &store.RunResumeParams{ID: "run_5", LeaseOwner: "inst_a", LeaseUntil: time.UnixMicro(25), Now: time.UnixMicro(8)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, []string{"run_1"}, recoverable(s, 24))
	require.Equal(t, []string{"run_1", "run_5"}, recoverable(s, 30))
	won, err = s.RunFinish(ctx, &store.RunFinishParams{ID: "run_5", To: store.RunCompleted, Now: time.UnixMicro(9)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, []string{"run_1"}, recoverable(s, 30))
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	require.Equal(t, 1, index("runs_recoverable"), "Down gives the index back")
	require.Zero(t, index("runs_open"))
	_, err = db.ExecContext(ctx, `DELETE FROM runs WHERE id = 'run_5'`)
	require.NoError(t, err)
	require.Equal(t, runs, dumpTable(t, db, "runs"), "no run's row changed")
	var plan, id string
	require.NoError(t, db.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT id FROM runs WHERE status = 1 AND lease_until < 10`).Scan(new(int), new(int), new(int), &plan))
	require.Contains(t, plan, "runs_recoverable", "the query before the migration uses its index again")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT id FROM runs WHERE status = 1 AND lease_until < 10`).Scan(&id))
	require.Equal(t, "run_1", id)
}

// dumpTable is every row of table, ordered by its first column, each as
// its columns' names and values.
func dumpTable(t *testing.T, db *sql.DB, table string) []string {
	t.Helper()
	rs, err := db.QueryContext(context.Background(), `SELECT * FROM `+table+` ORDER BY 1`)
	require.NoError(t, err)
	defer rs.Close()
	cols, err := rs.Columns()
	require.NoError(t, err)
	var out []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rs.Scan(ptrs...))
		var b strings.Builder
		for i, c := range cols {
			fmt.Fprintf(&b, "%s=%#v;", c, vals[i])
		}
		out = append(out, b.String())
	}
	require.NoError(t, rs.Err())
	return out
}
