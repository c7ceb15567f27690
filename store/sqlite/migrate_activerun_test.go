package sqlite

import (
	"context"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// sqlMigration is the version of the embedded SQL migration whose file
// name ends in _name.sql.
func sqlMigration(t *testing.T, name string) int64 {
	t.Helper()
	files, err := fs.Glob(migrations, "migrations/*_"+name+".sql")
	require.NoError(t, err)
	require.Len(t, files, 1, name)
	v, err := strconv.ParseInt(strings.SplitN(strings.TrimPrefix(files[0], "migrations/"), "_", 2)[0], 10, 64)
	require.NoError(t, err)
	return v
}

// Migration 00023 (session_active_run) names a session's active run in
// its row instead of the unique index runs_one_active: the open run of a
// session migrated with one is its active run, a second run is refused as
// before (store.ErrRunActive), the run's end frees the session, a session
// without an open run has none, and Down gives back the index and the
// sessions' rows exactly.
func TestMigrationSessionActiveRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := sqlMigration(t, "session_active_run")
	db, p, path := migratedTo(t, v-1)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES
			('sess_a', 'o', 'a', 'waiting_input', 1, 5), ('sess_b', 'o', 'b', 'completed', 2, 6), ('sess_c', 'o', 'c', 'idle', 3, 3)`,
		`INSERT INTO runs (id, session_id, agent, status, open, lease_owner, lease_until, created_at, updated_at) VALUES
			('run_1', 'sess_a', 'x', 3, NULL, '', 0, 1, 2), ('run_2', 'sess_a', 'x', 2, 1, '', 0, 3, 5),
			('run_3', 'sess_b', 'x', 3, NULL, '', 0, 2, 6)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	dump := func(table string) []string {
		rs, err := db.QueryContext(ctx, `SELECT * FROM `+table+` ORDER BY 1`)
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
				if c == "active_run" {
					continue
				}
				fmt.Fprintf(&b, "%s=%#v;", c, vals[i])
			}
			out = append(out, b.String())
		}
		require.NoError(t, rs.Err())
		return out
	}
	sessions, runs := dump("sessions"), dump("runs")

	s, err := Open(ctx, path, nil) // applies the migration
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name = 'runs_one_active'`).Scan(&n))
	require.Zero(t, n, "the index is gone")
	r, err := s.RunGetActive(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, store.RunWaitingInput, r.Status)
	require.Equal(t, time.UnixMicro(3).UTC(), r.CreatedAt, "the open run, not the finished one")
	for _, id := range []string{"sess_b", "sess_c"} {
		_, err = s.RunGetActive(ctx, id)
		require.ErrorIs(t, err, store.ErrNotFound, id)
	}
	now := time.UnixMicro(10).UTC()
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run_new", SessionID: "sess_a", Agent: "x", Now: now})
	require.ErrorIs(t, err, store.ErrRunActive, "one active run per session")
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run_b", SessionID: "sess_b", Agent: "x", Now: now})
	require.NoError(t, err, "a session whose run ended takes a new one")
	r, err = s.RunGetActive(ctx, "sess_b")
	require.NoError(t, err)
	require.Equal(t, "run_b", r.ID)
	won, err := s.RunFinish(ctx, &store.RunFinishParams{ID: "run_2", To: store.RunCancelled, Now: now})
	require.NoError(t, err)
	require.True(t, won)
	_, err = s.RunGetActive(ctx, "sess_a")
	require.ErrorIs(t, err, store.ErrNotFound, "the run's end frees the session")
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run_a", SessionID: "sess_a", Agent: "x", Now: now})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name = 'runs_one_active'`).Scan(&n))
	require.Equal(t, 1, n, "Down gives the index back")
	for _, q := range []string{
		`DELETE FROM runs WHERE id IN ('run_a', 'run_b')`,
		`UPDATE runs SET status = 2, open = 1, updated_at = 5 WHERE id = 'run_2'`,
		`UPDATE sessions SET status = 'waiting_input', updated_at = 5 WHERE id = 'sess_a'`,
		// run_b set its session running (migration 00027).
		`UPDATE sessions SET status = 'completed', updated_at = 6 WHERE id = 'sess_b'`,
	} {
		_, err = db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	require.Equal(t, sessions, dump("sessions"), "Down gives back the sessions' rows")
	require.Equal(t, runs, dump("runs"))
	_, err = db.ExecContext(ctx, `INSERT INTO runs (id, session_id, agent, status, open, created_at, updated_at) VALUES ('run_4', 'sess_a', 'x', 1, 1, 7, 7)`)
	require.ErrorContains(t, err, "UNIQUE constraint failed", "the index enforces the rule again")
}
