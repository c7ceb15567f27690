package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Migration 00008 renumbers nothing: a database with messages and trace
// rows from before it keeps them, in order, with their numbers; new rows
// come after them; and the tables no longer use AUTOINCREMENT (no
// sqlite_sequence row to rewrite per insert). Down restores AUTOINCREMENT
// with the rows.
func TestMigrationRowidNumbering(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, 7)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('sess_a', 'o', 't', 'idle', 1, 1)`,
		`INSERT INTO messages (seq, id, session_id, role, content, created_at) VALUES (7, 'msg_1', 'sess_a', 'user', 'one', 1), (9, 'msg_2', 'sess_a', 'assistant', 'two', 2)`,
		`INSERT INTO trace (id, session_id, kind, data, at) VALUES (4, 'sess_a', 'model_call', '{}', 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	autoinc := func(table string) bool {
		var q string
		require.NoError(t, db.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?`, table).Scan(&q))
		return strings.Contains(q, "AUTOINCREMENT")
	}
	require.True(t, autoinc("messages"))

	s, err := Open(ctx, path, nil) // applies 00008
	require.NoError(t, err)
	msgs, err := s.MessageList(ctx, "sess_a")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.Equal(t, []int64{7, 9}, []int64{msgs[0].Seq, msgs[1].Seq})
	require.Equal(t, "two", msgs[1].Content)
	m, err := s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_3", SessionID: "sess_a", Role: "user", Content: "three", Now: time.UnixMicro(3)})
	require.NoError(t, err)
	require.Equal(t, int64(10), m.Seq, "after the rows present")
	require.NoError(t, s.TraceInsert(ctx, &store.TraceInsertParams{SessionID: "sess_a", Kind: "tool_call", Data: []byte(`{}`), Now: time.UnixMicro(3)}))
	tr, err := s.TraceList(ctx, "sess_a")
	require.NoError(t, err)
	require.Len(t, tr, 2)
	require.Equal(t, []int64{4, 5}, []int64{tr[0].ID, tr[1].ID})
	require.NoError(t, s.Close())
	require.False(t, autoinc("messages"))
	require.False(t, autoinc("trace"))
	require.True(t, autoinc("audit"), "the audit keeps its never-reused numbers")
	var idx int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name IN
		('sqlite_autoindex_messages_1', 'messages_session', 'messages_one_result', 'trace_session')`).Scan(&idx))
	require.Equal(t, 4, idx, "the indexes are back under their names")

	_, err = p.DownTo(ctx, 7)
	require.NoError(t, err)
	require.True(t, autoinc("messages"))
	require.True(t, autoinc("trace"))
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE session_id = 'sess_a'`).Scan(&n))
	require.Equal(t, 3, n)
}

// Migration 00009 gives the events written before it their run id: from
// the payload's runId for the events that name one, from the interaction
// for a request stored by reference; none for the rest or for data that is
// not JSON.
func TestMigrationEventRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, 8)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('sess_a', 'o', 't', 'idle', 1, 1)`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, created_at, expires_at) VALUES ('ask_1', 'sess_a', 'run_i', 'call_1', 'ask_user', '{"id":"ask_1"}', 1, 2)`,
		`INSERT INTO events (session_id, seq, name, data, ref, created_at) VALUES
			('sess_a', 1, 'session', '{"sessionId":"sess_a","runId":"run_s"}', NULL, 1),
			('sess_a', 2, 'user_input_required', '', 'ask_1', 1),
			('sess_a', 3, 'user_input_required', '{"id":"elic_1","runId":"run_e"}', NULL, 1),
			('sess_a', 4, 'error', '{"code":"x","message":"\"runId\":\"no\"","runId":"run_x"}', NULL, 1),
			('sess_a', 5, 'done', 'not json', NULL, 1),
			('sess_a', 6, 'message', '{"messageId":"m","runId":"run_m"}', NULL, 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	s, err := Open(ctx, path, nil) // applies 00009
	require.NoError(t, err)
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess_a"})
	require.NoError(t, err)
	var runs []string
	for _, ev := range evs {
		runs = append(runs, ev.RunID)
	}
	require.Equal(t, []string{"run_s", "run_i", "run_e", "run_x", "", ""}, runs)
	require.NoError(t, s.Close())
	_, err = p.DownTo(ctx, 8)
	require.NoError(t, err)
}

// migratedTo opens a new SQLite file (at path) with the embedded
// migrations up to version, on one connection; the test's cleanup closes it.
func migratedTo(t *testing.T, version int64) (db *sql.DB, p *goose.Provider, path string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "m.db")
	db, err := sql.Open(DriverName, "file:"+path+"?_pragma=foreign_keys(1)")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	fsys, err := fsSub(migrations, "migrations")
	require.NoError(t, err)
	p, err = goose.NewProvider(goose.DialectSQLite3, db, fsys)
	require.NoError(t, err)
	_, err = p.UpTo(context.Background(), version)
	require.NoError(t, err)
	return db, p, path
}
