package postgres_test

import (
	"context"
	"database/sql"
	"os"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// Migration 00008 gives the events written before it their run id: from
// the payload's runId for the events that name one (a pattern: a row that
// is not JSON neither stops the upgrade nor gets one), from the interaction
// for a request stored by reference; none for the rest.
func TestMigrationEventRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Schema(t)
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("migrations"))
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 7)
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('sess_a', 'o', 't', 'idle', now(), now())`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, created_at, expires_at) VALUES ('ask_1', 'sess_a', 'run_i', 'call_1', 'ask_user', '{"id":"ask_1"}', now(), now())`,
		`INSERT INTO events (session_id, seq, name, data, ref, created_at) VALUES
			('sess_a', 1, 'session', '{"sessionId":"sess_a","runId":"run_s"}', NULL, now()),
			('sess_a', 2, 'user_input_required', '', 'ask_1', now()),
			('sess_a', 3, 'user_input_required', '{"id":"elic_1","runId":"run_e"}', NULL, now()),
			('sess_a', 4, 'error', '{"code":"x","message":"\"runId\":\"no\"","runId":"run_x"}', NULL, now()),
			('sess_a', 5, 'done', 'not json', NULL, now()),
			('sess_a', 6, 'message', '{"messageId":"m","runId":"run_m"}', NULL, now())`,
		`UPDATE sessions SET last_seq = 6`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	s, err := postgres.Open(ctx, url, nil) // applies 00008
	require.NoError(t, err)
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess_a"})
	require.NoError(t, err)
	var runs []string
	for _, ev := range evs {
		runs = append(runs, ev.RunID)
	}
	require.Equal(t, []string{"run_s", "run_i", "run_e", "run_x", "", ""}, runs)
	require.NoError(t, s.Close())
	_, err = p.DownTo(ctx, 7)
	require.NoError(t, err)
}

// A database a newer luban migrated past this binary's newest migration
// is refused at Open (store.ErrSchemaTooNew), naming both versions; one at
// this binary's version opens.
func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.Schema(t)
	s, err := postgres.Open(ctx, url, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`)
	require.NoError(t, err)
	_, err = postgres.Open(ctx, url, nil)
	require.ErrorIs(t, err, store.ErrSchemaTooNew)
	require.ErrorContains(t, err, "version 9999")
	ms, err := postgres.Migrations(ctx, url)
	require.ErrorIs(t, err, store.ErrSchemaTooNew, "migrate status tells the database is ahead")
	require.ErrorContains(t, err, "version 9999")
	require.NotEmpty(t, ms, "the known migrations are still listed")
	require.True(t, ms[len(ms)-1].Applied)
}
