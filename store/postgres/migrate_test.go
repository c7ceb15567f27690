package postgres_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

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
	db, p, url := migratedTo(t, 7)
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

// Migration 00015 drops messages' unique id, feed_session and the trace's
// primary key on id (now (session_id, id)): rows written before it read
// back as before (an event's message reference, the trace in order, the
// feed), a session delete still removes the session's feed entries, and
// Down gives the indexes back with the rows.
func TestMigrationFewerIndexes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, url := migratedTo(t, 14)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, last_seq, created_at, updated_at) VALUES
			('sess_a', 'o', 't', 'idle', 2, now(), now()), ('sess_b', 'o', 't', 'idle', 1, now(), now())`,
		`INSERT INTO messages (id, session_id, role, content, created_at) VALUES
			('msg_1', 'sess_a', 'assistant', 'hello', now()), ('msg_2', 'sess_b', 'assistant', 'other', now())`,
		`INSERT INTO events (session_id, seq, name, data, ref, created_at) VALUES
			('sess_a', 1, 'message', '{"messageId":"msg_1","content":""}', 'msg_1', now()),
			('sess_a', 2, 'message', '{"messageId":"msg_2","content":""}', 'msg_2', now()),
			('sess_b', 1, 'message', '{"messageId":"msg_2","content":""}', 'msg_2', now())`,
		`INSERT INTO trace (session_id, kind, data, at) VALUES
			('sess_a', 'model_call', '{"n":1}', now()), ('sess_b', 'model_call', '{"n":2}', now()), ('sess_a', 'tool_call', '{"n":3}', now())`,
		`INSERT INTO principals (owner, last_seq) VALUES ('o', 2)`,
		`INSERT INTO feed (owner, seq, session_id, session_seq, name, data, created_at) VALUES
			('o', 1, 'sess_a', 1, 'done', '{}', now()), ('o', 2, 'sess_b', 1, 'done', '{}', now())`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	s, err := postgres.Open(ctx, url, nil) // applies 00015
	require.NoError(t, err)
	defer s.Close()
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess_a"})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.JSONEq(t, `{"messageId":"msg_1","content":"hello"}`, string(evs[0].Data))
	// A reference to another session's message is not followed.
	require.JSONEq(t, `{"messageId":"msg_2","content":""}`, string(evs[1].Data))
	evs, err = s.EventList(ctx, &store.EventListParams{SessionID: "sess_b"})
	require.NoError(t, err)
	require.JSONEq(t, `{"messageId":"msg_2","content":"other"}`, string(evs[0].Data))
	require.NoError(t, s.TraceInsert(ctx, &store.TraceInsertParams{SessionID: "sess_a", Kind: "tool_result", Data: []byte(`{"n":4}`), Now: time.Now()}))
	trace, err := s.TraceList(ctx, "sess_a")
	require.NoError(t, err)
	var datas []string
	for _, e := range trace {
		datas = append(datas, string(e.Data))
	}
	require.Equal(t, []string{`{"n":1}`, `{"n":3}`, `{"n":4}`}, datas)
	require.NoError(t, s.SessionDelete(ctx, "sess_b"))
	feed, err := s.FeedList(ctx, &store.FeedListParams{Owner: "o"})
	require.NoError(t, err)
	require.Len(t, feed, 1)
	require.Equal(t, "sess_a", feed[0].SessionID)
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, 14)
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM trace WHERE session_id = 'sess_a'`).Scan(&n))
	require.Equal(t, 3, n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema()
		AND indexname IN ('messages_id_key', 'feed_session', 'trace_session', 'trace_pkey')`).Scan(&n))
	require.Equal(t, 4, n)
	_, err = db.ExecContext(ctx, `INSERT INTO messages (id, session_id, role, created_at) VALUES ('msg_1', 'sess_a', 'user', now())`)
	require.Error(t, err, "the message id is unique again")
}

// Migration 00016 drops interactions_resolved: a session's last resolved
// interaction and the owner's resolved inbox read rows written before it
// as before, and Down gives the index back.
func TestMigrationInteractionsResolved(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, url := migratedTo(t, 15)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('sess_a', 'o', 't', 'idle', now(), now())`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at, resolved_at) VALUES
			('ask_1', 'sess_a', 'run_1', 'call_1', 'ask_user', '{}', 'answered', now() - interval '3 minutes', now(), now() - interval '2 minutes'),
			('ask_2', 'sess_a', 'run_1', 'call_2', 'ask_user', '{}', 'cancelled', now() - interval '2 minutes', now(), now() - interval '1 minute'),
			('ask_3', 'sess_a', 'run_1', 'call_3', 'ask_user', '{}', 'pending', now() - interval '1 minute', now(), NULL)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	s, err := postgres.Open(ctx, url, nil) // applies 00016
	require.NoError(t, err)
	defer s.Close()
	last, err := s.InteractionGetLastResolved(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, "ask_2", last.ID)
	inbox, err := s.InboxList(ctx, &store.InboxListParams{Owner: "o", Status: store.InboxResolved})
	require.NoError(t, err)
	require.Len(t, inbox, 2)
	require.Equal(t, []string{"ask_2", "ask_1"}, []string{inbox[0].Interaction.ID, inbox[1].Interaction.ID})
	require.NoError(t, s.Close())
	_, err = p.DownTo(ctx, 15)
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'interactions_resolved'`).Scan(&n))
	require.Equal(t, 1, n)
}

// Migration 00017 keeps an interaction's timeout in its row: the timeouts
// stored before it (pending, fired, one not due at its expiry, one of a
// resolved question) list, come due and fire as before, a new question's
// timeout is in its row, and Down puts every timeout back into
// interaction_deadlines.
func TestMigrationInteractionTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, url := migratedTo(t, 16)
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('sess_a', 'o', 't', 'waiting_input', $1, $1)`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at, resolved_at) VALUES
			('ask_p', 'sess_a', 'run_1', 'call_p', 'ask_user', '{}', 'pending', $1, $1::timestamptz + interval '1 hour', NULL),
			('ask_f', 'sess_a', 'run_1', 'call_f', 'ask_user', '{}', 'pending', $1, $1::timestamptz + interval '2 hours', NULL),
			('ask_x', 'sess_a', 'run_1', 'call_x', 'ask_user', '{}', 'pending', $1, $1::timestamptz + interval '3 hours', NULL),
			('ask_r', 'sess_a', 'run_1', 'call_r', 'ask_user', '{}', 'answered', $1, $1::timestamptz + interval '1 hour', $1)`,
		`INSERT INTO interaction_deadlines (request_id, seq, session_id, kind, due_at, fired_at, data) VALUES
			('ask_p', 0, 'sess_a', 'timeout', $1::timestamptz + interval '1 hour', NULL, '{"onTimeout":"reject"}'),
			('ask_p', 1, 'sess_a', 'remind', $1::timestamptz + interval '10 minutes', NULL, NULL),
			('ask_f', 0, 'sess_a', 'timeout', $1::timestamptz + interval '2 hours', $1::timestamptz + interval '2 hours', NULL),
			('ask_x', 0, 'sess_a', 'timeout', $1::timestamptz + interval '30 minutes', NULL, NULL),
			('ask_r', 0, 'sess_a', 'timeout', $1::timestamptz + interval '1 hour', NULL, NULL)`,
	} {
		var args []any
		if strings.Contains(q, "$1") {
			args = append(args, t0)
		}
		_, err := db.ExecContext(ctx, q, args...)
		require.NoError(t, err, q)
	}
	s, err := postgres.Open(ctx, url, nil) // applies 00017
	require.NoError(t, err)
	defer s.Close()
	var inRow int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM interactions WHERE timeout IS NOT NULL`).Scan(&inRow))
	require.Equal(t, 2, inRow, "the pending questions' timeouts due at their expiry moved into their rows")
	ds, err := s.DeadlineList(ctx, "ask_p")
	require.NoError(t, err)
	require.Equal(t, []store.Deadline{
		{RequestID: "ask_p", SessionID: "sess_a", Seq: 0, Kind: store.DeadlineTimeout, DueAt: t0.Add(time.Hour), Data: json.RawMessage(`{"onTimeout":"reject"}`)},
		{RequestID: "ask_p", SessionID: "sess_a", Seq: 1, Kind: store.DeadlineRemind, DueAt: t0.Add(10 * time.Minute)},
	}, []store.Deadline{*ds[0], *ds[1]})
	ds, err = s.DeadlineList(ctx, "ask_f")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, t0.Add(2*time.Hour), ds[0].FiredAt)
	next, err := s.DeadlineNextDue(ctx)
	require.NoError(t, err)
	require.Equal(t, t0.Add(10*time.Minute), next)
	due, err := s.DeadlineListDue(ctx, &store.DeadlineListDueParams{Now: t0.Add(3 * time.Hour)})
	require.NoError(t, err)
	var got []string
	for _, d := range due {
		got = append(got, fmt.Sprintf("%s/%d", d.RequestID, d.Seq))
	}
	require.Equal(t, []string{"ask_p/1", "ask_x/0", "ask_p/0", "ask_r/0"}, got, "earliest first; the fired one is not due")
	won, err := s.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: "ask_p", Seq: 0, Pending: true, Now: t0.Add(time.Hour)})
	require.NoError(t, err)
	require.True(t, won)
	won, err = s.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: "ask_x", Seq: 0, Pending: true, Now: t0.Add(time.Hour)})
	require.NoError(t, err)
	require.True(t, won, "a timeout left in interaction_deadlines fires there")
	won, err = s.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: "ask_r", Seq: 0, Pending: true, Now: t0.Add(time.Hour)})
	require.NoError(t, err)
	require.False(t, won, "a resolved question's timeout does not fire")
	// A new question's timeout is in its row; its resolution closes it.
	_, err = s.InteractionInsert(ctx, &store.InteractionInsertParams{ID: "ask_n", SessionID: "sess_a", RunID: "run_1", ToolCallID: "call_n", Tool: "ask_user",
		Request: json.RawMessage(`{}`), Now: t0, ExpiresAt: t0.Add(time.Hour)})
	require.NoError(t, err)
	won, err = s.InteractionResolve(ctx, &store.InteractionResolveParams{ID: "ask_n", SessionID: "sess_a", Status: "answered", Now: t0.Add(time.Minute)})
	require.NoError(t, err)
	require.True(t, won)
	ds, err = s.DeadlineList(ctx, "ask_n")
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, t0.Add(time.Minute), ds[0].FiredAt, "closed when its question was resolved")
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, 16)
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM interaction_deadlines WHERE seq = 0`).Scan(&n))
	require.Equal(t, 5, n, "every timeout is a row again")
	var fired sql.NullTime
	require.NoError(t, db.QueryRowContext(ctx, `SELECT fired_at FROM interaction_deadlines WHERE request_id = 'ask_p' AND seq = 0`).Scan(&fired))
	require.True(t, fired.Valid)
}

// migratedTo opens a fresh schema of LUBAN_TEST_POSTGRES (skipped when
// unset) migrated up to version, closed when t ends: the database, the
// goose provider of the migrations and the schema's URL.
func migratedTo(t *testing.T, version int64) (*sql.DB, *goose.Provider, string) {
	t.Helper()
	url := pgtest.Schema(t)
	db, err := sql.Open("pgx", url)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	p, err := goose.NewProvider(goose.DialectPostgres, db, os.DirFS("migrations"))
	require.NoError(t, err)
	_, err = p.UpTo(context.Background(), version)
	require.NoError(t, err)
	return db, p, url
}
