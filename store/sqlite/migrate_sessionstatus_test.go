package sqlite

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Migration 00031 (session_status_ends): a run's pause and resume leave
// its session's row alone (the status is read through the waiting run),
// its start and end write it as before. Sessions stored before it read as
// they were, a pause after it shows waiting_input with the row's
// updated_at unchanged, and Down stores what the read showed and gives
// back the trigger that writes the row at every status change.
func TestMigrationSessionStatusEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := sqlMigration(t, "session_status_ends")
	db, p, _ := migratedTo(t, v-1)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES
			('sess_a', 'o', 'a', 'idle', 1, 1), ('sess_b', 'o', 'b', 'idle', 2, 2), ('sess_c', 'o', 'c', 'idle', 3, 3)`,
		`INSERT INTO runs (id, session_id, agent, status, open, lease_owner, lease_until, created_at, updated_at) VALUES
			('run_a', 'sess_a', 'x', 1, 1, 'inst_a', 100, 4, 4), ('run_b', 'sess_b', 'x', 1, 1, 'inst_a', 100, 5, 5),
			('run_c', 'sess_c', 'x', 1, 1, 'inst_a', 100, 6, 6)`,
		// Before: the pause and the end write the session's row.
		`UPDATE runs SET status = 2, lease_owner = '', lease_until = 0, updated_at = 7 WHERE id = 'run_a'`,
		`UPDATE runs SET status = 3, open = NULL, lease_owner = '', lease_until = 0, updated_at = 8 WHERE id = 'run_c'`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	row := func(id string) string {
		t.Helper()
		var s string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT status || '@' || updated_at || '@' || COALESCE(active_run, '-') FROM sessions WHERE id = ?`, id).Scan(&s))
		return s
	}
	require.Equal(t, "waiting_input@7@run_a", row("sess_a"))
	require.Equal(t, "running@5@run_b", row("sess_b"))
	require.Equal(t, "completed@8@-", row("sess_c"))
	sessions := dumpTable(t, db, "sessions")

	_, err := p.UpTo(ctx, v)
	require.NoError(t, err)
	require.Equal(t, sessions, dumpTable(t, db, "sessions"), "the migration changes no row")
	exec := func(q string) {
		t.Helper()
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	// What the store reads (sessionStatus) and when the row moved.
	read := func(id string) string {
		t.Helper()
		var s string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT `+sessionStatus+` || '@' || updated_at FROM sessions WHERE id = ?`, id).Scan(&s))
		return s
	}
	require.Equal(t, "waiting_input@7", read("sess_a"), "a session stored while its run waited")
	require.Equal(t, "running@5", read("sess_b"))
	require.Equal(t, "completed@8", read("sess_c"))

	// sess_b's run pauses: the session reads waiting_input, its row and
	// its place in the listing stay; the resume reads running; the end
	// writes the row.
	exec(`UPDATE runs SET status = 2, lease_owner = '', lease_until = 0, updated_at = 9 WHERE id = 'run_b'`)
	require.Equal(t, "waiting_input@5", read("sess_b"))
	require.Equal(t, "running@5@run_b", row("sess_b"))
	exec(`UPDATE runs SET status = 1, lease_owner = 'inst_a', lease_until = 100, updated_at = 10 WHERE id = 'run_b'`)
	require.Equal(t, "running@5", read("sess_b"))
	require.Equal(t, "running@5@run_b", row("sess_b"))
	// sess_a's run, paused before the migration, resumes: its row said
	// waiting_input, the resume sets it running (updated_at stays).
	exec(`UPDATE runs SET status = 1, lease_owner = 'inst_a', lease_until = 100, updated_at = 11 WHERE id = 'run_a'`)
	require.Equal(t, "running@7@run_a", row("sess_a"))
	exec(`UPDATE runs SET status = 3, open = NULL, lease_owner = '', lease_until = 0, updated_at = 12 WHERE id = 'run_b'`)
	require.Equal(t, "completed@12@-", row("sess_b"), "the end writes the row and frees the session")
	exec(`UPDATE runs SET status = 2, lease_owner = '', lease_until = 0, updated_at = 13 WHERE id = 'run_a'`)
	require.Equal(t, "running@7@run_a", row("sess_a"))
	require.Equal(t, "waiting_input@7", read("sess_a"))

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	require.Equal(t, "waiting_input@7@run_a", row("sess_a"), "Down stores the status the read showed")
	require.Equal(t, "completed@12@-", row("sess_b"))
	_, err = db.ExecContext(ctx, `UPDATE runs SET status = 1, updated_at = 14 WHERE id = 'run_a'`)
	require.NoError(t, err)
	require.Equal(t, "running@14@run_a", row("sess_a"), "after Down the resume writes the row again")
}
