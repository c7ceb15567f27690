package sqlite

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// Migration 00027 (run_insert_status): a run inserted open sets its
// session's status to running and updated_at to the run's, in the
// trigger runs_one_active; the rows already stored do not change, and
// Down gives back the trigger that leaves the session's status alone.
func TestMigrationRunInsertStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := sqlMigration(t, "run_insert_status")
	db, p, _ := migratedTo(t, v-1)
	exec := func(q string) {
		t.Helper()
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	session := func(id string) string {
		t.Helper()
		var s string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT status || '@' || updated_at || '@' || COALESCE(active_run, '-') FROM sessions WHERE id = ?`, id).Scan(&s))
		return s
	}
	run := func(id, session string, at int) string {
		return `INSERT INTO runs (id, session_id, agent, status, open, lease_owner, lease_until, created_at, updated_at)
			VALUES ('` + id + `', '` + session + `', 'x', 1, 1, '', 0, 1, ` + strconv.Itoa(at) + `)`
	}
	exec(`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES
		('sess_a', 'o', 'a', 'completed', 1, 2), ('sess_b', 'o', 'b', 'completed', 1, 2), ('sess_c', 'o', 'c', 'idle', 1, 2)`)
	exec(run("run_a", "sess_a", 4))
	require.Equal(t, "completed@2@run_a", session("sess_a"), "before: the run leaves the status")

	_, err := p.UpTo(ctx, v)
	require.NoError(t, err)
	require.Equal(t, "completed@2@run_a", session("sess_a"), "the migration changes no row")
	exec(run("run_b", "sess_b", 6))
	require.Equal(t, "running@6@run_b", session("sess_b"))
	_, err = db.ExecContext(ctx, run("run_b2", "sess_b", 7))
	require.ErrorContains(t, err, "UNIQUE constraint failed", "one active run per session, as before")
	require.Equal(t, "running@6@run_b", session("sess_b"))

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	require.Equal(t, "running@6@run_b", session("sess_b"), "Down changes no row")
	exec(run("run_c", "sess_c", 8))
	require.Equal(t, "idle@2@run_c", session("sess_c"), "after Down the run leaves the status again")
}
