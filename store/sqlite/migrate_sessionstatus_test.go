package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
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
	db, p, path := migratedTo(t, v-1)
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

	s, err := Open(ctx, path, nil) // applies the migration
	require.NoError(t, err)
	require.Equal(t, sessions, dumpTable(t, db, "sessions"), "the migration changes no row")
	read := func(id string) string {
		t.Helper()
		got, err := s.SessionGet(ctx, id)
		require.NoError(t, err)
		return got.Status + "@" + got.UpdatedAt.Format(time.RFC3339Nano)
	}
	at := func(us int64) string { return time.UnixMicro(us).UTC().Format(time.RFC3339Nano) }
	require.Equal(t, "waiting_input@"+at(7), read("sess_a"), "a session stored while its run waited")
	require.Equal(t, "running@"+at(5), read("sess_b"))
	require.Equal(t, "completed@"+at(8), read("sess_c"))

	// sess_b's run pauses: the session reads waiting_input, its row and
	// its place in the listing stay; the resume reads running; the end
	// writes the row.
	won, err := s.RunPause(ctx, &store.RunPauseParams{ID: "run_b", LeaseOwner: "inst_a", Now: time.UnixMicro(9)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, "waiting_input@"+at(5), read("sess_b"))
	require.Equal(t, "running@5@run_b", row("sess_b"))
	list, err := s.SessionList(ctx, &store.SessionListParams{Owner: "o"})
	require.NoError(t, err)
	require.Equal(t, []string{"sess_c", "sess_a", "sess_b"}, []string{list[0].ID, list[1].ID, list[2].ID})
	require.Equal(t, string(store.RunWaitingInput), list[2].Status)
	won, err = s.RunResume(ctx, &store.RunResumeParams{ID: "run_b", LeaseOwner: "inst_a", LeaseUntil: time.UnixMicro(100), Now: time.UnixMicro(10)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, "running@"+at(5), read("sess_b"))
	// sess_a's run, paused before the migration, resumes: its row said
	// waiting_input, the resume sets it running (updated_at stays).
	won, err = s.RunResume(ctx, &store.RunResumeParams{ID: "run_a", LeaseOwner: "inst_a", LeaseUntil: time.UnixMicro(100), Now: time.UnixMicro(11)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, "running@"+at(7), read("sess_a"))
	won, err = s.RunFinish(ctx, &store.RunFinishParams{ID: "run_b", To: store.RunCompleted, Now: time.UnixMicro(12)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, "completed@12@-", row("sess_b"), "the end writes the row and frees the session")
	won, err = s.RunPause(ctx, &store.RunPauseParams{ID: "run_a", LeaseOwner: "inst_a", Now: time.UnixMicro(13)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, "running@7@run_a", row("sess_a"))
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	require.Equal(t, "waiting_input@7@run_a", row("sess_a"), "Down stores the status the read showed")
	require.Equal(t, "completed@12@-", row("sess_b"))
	_, err = db.ExecContext(ctx, `UPDATE runs SET status = 1, updated_at = 14 WHERE id = 'run_a'`)
	require.NoError(t, err)
	require.Equal(t, "running@14@run_a", row("sess_a"), "after Down the resume writes the row again")
}
