package sqlite

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Migration 00034 (session_last_run): a run's end leaves its session's
// row alone; sessions.active_run names the session's last run, active
// while open, whose status the session reads once it ended. Sessions
// stored before it read as they were, one active run per session holds,
// and Down writes into the rows what the run's end used to (status,
// updated_at, active_run cleared).
func TestMigrationSessionLastRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := sqlMigration(t, "session_last_run")
	db, p, path := migratedTo(t, v-1)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES
			('sess_a', 'o', 'a', 'idle', 1, 1), ('sess_b', 'o', 'b', 'idle', 2, 2), ('sess_c', 'o', 'c', 'idle', 3, 3)`,
		`INSERT INTO runs (id, session_id, agent, status, open, lease_owner, lease_until, created_at, updated_at) VALUES
			('run_a', 'sess_a', 'x', 1, 1, 'inst_a', 100, 4, 4), ('run_b', 'sess_b', 'x', 1, 1, 'inst_a', 100, 5, 5)`,
		// Before: the end writes the session's row and frees it.
		`UPDATE runs SET status = 3, open = NULL, lease_owner = '', lease_until = 0, updated_at = 8 WHERE id = 'run_a'`,
		`UPDATE runs SET status = 2, lease_owner = '', lease_until = 0, updated_at = 9 WHERE id = 'run_b'`,
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
	require.Equal(t, "completed@8@-", row("sess_a"))
	require.Equal(t, "running@5@run_b", row("sess_b"))
	sessions := dumpTable(t, db, "sessions")

	s, err := Open(ctx, path, nil) // applies the migration
	require.NoError(t, err)
	require.Equal(t, sessions, dumpTable(t, db, "sessions"), "the migration changes no row")
	at := func(us int64) time.Time { return time.UnixMicro(us).UTC() }
	read := func(id string) (string, time.Time) {
		t.Helper()
		got, err := s.SessionGet(ctx, id)
		require.NoError(t, err)
		return got.Status, got.UpdatedAt
	}
	st, upd := read("sess_a")
	require.Equal(t, []any{"completed", at(8)}, []any{st, upd}, "a session whose run ended before")
	st, _ = read("sess_b")
	require.Equal(t, "waiting_input", st)

	// sess_b's run ends: the row stays, the session reads the run's end,
	// it has no active run and takes a new one.
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run_b2", SessionID: "sess_b", Agent: "x", Now: at(10)})
	require.ErrorIs(t, err, store.ErrRunActive, "one active run per session")
	require.NoError(t, s.SessionDelete(ctx, "sess_c"))
	require.ErrorIs(t, s.SessionDelete(ctx, "sess_b"), store.ErrRunActive)
	won, err := s.RunFinish(ctx, &store.RunFinishParams{ID: "run_b", To: store.RunExpired, Now: at(11)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, "running@5@run_b", row("sess_b"), "the end leaves the row")
	st, upd = read("sess_b")
	require.Equal(t, []any{"expired", at(5)}, []any{st, upd})
	_, err = s.RunGetActive(ctx, "sess_b")
	require.ErrorIs(t, err, store.ErrNotFound, "an ended run is not active")
	list, err := s.SessionList(ctx, &store.SessionListParams{Owner: "o"})
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.Equal(t, []string{"sess_a", "sess_b"}, []string{list[0].ID, list[1].ID}, "the list's order is the last runs' starts")
	require.Equal(t, "expired", list[1].Status)
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run_b2", SessionID: "sess_b", Agent: "x", Now: at(12)})
	require.NoError(t, err, "a session whose run ended takes a new one")
	require.Equal(t, "running@12@run_b2", row("sess_b"))
	r, err := s.RunGetActive(ctx, "sess_b")
	require.NoError(t, err)
	require.Equal(t, "run_b2", r.ID)
	won, err = s.RunFinish(ctx, &store.RunFinishParams{ID: "run_b2", To: store.RunCompleted, Now: at(13)})
	require.NoError(t, err)
	require.True(t, won)
	// A status set once the run ended is what the session reads.
	require.NoError(t, s.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: "sess_a", Status: "idle", Now: at(14)}))
	st, upd = read("sess_a")
	require.Equal(t, []any{"idle", at(14)}, []any{st, upd})
	require.NoError(t, s.SessionDelete(ctx, "sess_b"), "a session whose run ended can be deleted")
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run_a2", SessionID: "sess_a", Agent: "x", Now: at(15)})
	require.NoError(t, err)
	won, err = s.RunFinish(ctx, &store.RunFinishParams{ID: "run_a2", To: store.RunFailed, Error: "boom", Now: at(16)})
	require.NoError(t, err)
	require.True(t, won)
	require.Equal(t, "running@15@run_a2", row("sess_a"))
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	require.Equal(t, "failed@16@-", row("sess_a"), "Down writes what the run's end wrote")
	_, err = db.ExecContext(ctx, `INSERT INTO runs (id, session_id, agent, status, open, created_at, updated_at) VALUES ('run_a3', 'sess_a', 'x', 1, 1, 17, 17)`)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `UPDATE runs SET status = 4, open = NULL, updated_at = 18 WHERE id = 'run_a3'`)
	require.NoError(t, err)
	require.Equal(t, "cancelled@18@-", row("sess_a"), "after Down the end writes the row again")
}
