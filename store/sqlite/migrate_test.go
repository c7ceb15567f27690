package sqlite

import (
	"context"
	"database/sql"
	"fmt"
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
	require.Less(t, msgs[0].Seq, msgs[1].Seq, "in their order (rowsMigration numbers them in their session)")
	require.Equal(t, "two", msgs[1].Content)
	m, err := s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_3", SessionID: "sess_a", Role: "user", Content: "three", Now: time.UnixMicro(3)})
	require.NoError(t, err)
	require.Greater(t, m.Seq, msgs[1].Seq, "after the rows present")
	require.NoError(t, s.TraceInsert(ctx, &store.TraceInsertParams{SessionID: "sess_a", Kind: "tool_call", Data: []byte(`{}`), Now: time.UnixMicro(3)}))
	tr, err := s.TraceList(ctx, "sess_a")
	require.NoError(t, err)
	require.Len(t, tr, 2)
	require.Equal(t, []int64{4, 5}, []int64{tr[0].ID, tr[1].ID})
	require.NoError(t, s.Close())
	require.False(t, autoinc("messages"))
	require.False(t, autoinc("trace"))
	require.False(t, autoinc("audit"), "migration 00017 keeps the audit's never-reused numbers in log_seqs")
	var idx int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE type = 'index' AND name IN
		('sqlite_autoindex_messages_1', 'messages_one_result')`).Scan(&idx))
	require.Equal(t, 1, idx, "the index is back under its name (migration 00026 drops the message-id index)")

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
	db.SetMaxOpenConns(2) // as migrate: goose holds one while sessionKeyMigration runs
	fsys, err := fsSub(migrations, "migrations")
	require.NoError(t, err)
	p, err = goose.NewProvider(goose.DialectSQLite3, db, fsys, migrationOptions()...)
	require.NoError(t, err)
	_, err = p.UpTo(context.Background(), version)
	require.NoError(t, err)
	return db, p, path
}

// Migration 00015 (compactMigration) keeps every row: a database with runs,
// interactions (one of them with a request of the agent's shape), their
// deadlines, assignees, notification messages and MCP tasks, and events
// and feed entries that reference a question, reads the same through the
// store afterwards, stores ids of agent.NewID's form as blobs and the
// request without its row's columns, and goes on working (a question
// resolved once, a new run). Down restores the text rows exactly.
func TestMigrationCompact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, compactVersion-1)
	sess, run, ask, call, task := newID("sess"), newID("run"), newID("ask"), newID("call"), newID("task")
	now := time.Date(2026, 12, 4, 23, 45, 1, 123456000, time.UTC)
	req := `{"id":"` + ask + `","toolCallId":"` + call + `","sessionId":"` + sess + `","runId":"` + run + `","tool":"ask_user","title":"Which?","mode":"single","options":[{"id":"a","label":"A"}],"createdAt":"2026-12-04T23:45:01.123456Z","expiresAt":"2026-12-05T00:45:01Z","resumable":true}`
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('` + sess + `', 'o', 't', 'waiting_input', 1, 1), ('sess_b', 'o', 'b', 'idle', 1, 1)`,
		`INSERT INTO runs (id, session_id, agent, status, steps, lease_until, created_at, updated_at) VALUES
			('` + run + `', '` + sess + `', 'default', 'waiting_input', 2, 0, 1, 2),
			('run_old', '` + sess + `', 'default', 'completed', 1, 0, 0, 1),
			('run_b', 'sess_b', 'default', 'running', 1, 5, 1, 1)`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at, route) VALUES
			('` + ask + `', '` + sess + `', '` + run + `', '` + call + `', 'ask_user', '` + req + `', 'pending', ` + fmt.Sprint(now.UnixMicro()) + `, ` + fmt.Sprint(now.Add(time.Hour).Truncate(time.Second).UnixMicro()) + `, '{"quorum":2}'),
			('ask_1', '` + sess + `', 'run_old', 'call_1', 'approval', '{"id":"ask_1"}', 'answered', 1, 2, NULL)`,
		`UPDATE interactions SET answer = '{"cancelled":false}', resolved_at = 3, receipt_jws = 'jws', decided_by = '{"by":"x"}' WHERE id = 'ask_1'`,
		`INSERT INTO interaction_deadlines (request_id, seq, session_id, kind, due_at, fired_at, data) VALUES
			('` + ask + `', 0, '` + sess + `', 'timeout', 9, NULL, NULL), ('` + ask + `', 1, '` + sess + `', 'remind', 5, 4, '{"n":1}')`,
		`INSERT INTO interaction_assignees (request_id, person, pos, via, decision, added_at, decided_at) VALUES
			('` + ask + `', 'bob', 1, 'route', 'approve', 1, 2), ('` + ask + `', 'carol', 2, 'delegate', '', 1, 0)`,
		`INSERT INTO notify_messages (request_id, channel, person, session_id, address, ref, created_at) VALUES ('` + ask + `', 'slack', 'bob', '` + sess + `', 'C1', '1.2', 1)`,
		`INSERT INTO mcp_tasks (id, owner, session_id, request_id, protocol, ttl_ms, created_at) VALUES ('` + task + `', 'o', '` + sess + `', '` + ask + `', 'tasks', 1000, 1)`,
		`INSERT INTO events (session_id, seq, name, data, ref, run_id, created_at) VALUES ('` + sess + `', 1, 'user_input_required', '', '` + ask + `', '` + run + `', 1)`,
		`INSERT INTO feed (owner, seq, session_id, session_seq, name, data, ref, created_at) VALUES ('o', 1, '` + sess + `', 1, 'user_input_required', '', '` + ask + `', 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	dump := func() string {
		var b strings.Builder
		for _, tb := range compactTables {
			rows, err := db.QueryContext(ctx, `SELECT * FROM `+tb+` ORDER BY 1, 2`)
			require.NoError(t, err)
			cols, _ := rows.Columns()
			for rows.Next() {
				v := make([]any, len(cols))
				ptr := make([]any, len(cols))
				for i := range v {
					ptr[i] = &v[i]
				}
				require.NoError(t, rows.Scan(ptr...))
				fmt.Fprintf(&b, "%s %q\n", tb, v)
			}
			rows.Close()
		}
		for _, q := range []string{`SELECT typeof(ref), ref FROM events`, `SELECT typeof(ref), ref FROM feed`} {
			var ty string
			var v any
			require.NoError(t, db.QueryRowContext(ctx, q).Scan(&ty, &v))
			fmt.Fprintf(&b, "%s %q\n", ty, v)
		}
		return b.String()
	}
	before := dump()

	s, err := Open(ctx, path, nil) // applies compactVersion
	require.NoError(t, err)
	it, err := s.InteractionGet(ctx, ask)
	require.NoError(t, err)
	require.Equal(t, req, string(it.Request), "the request reads back byte for byte")
	require.Equal(t, "pending", it.Status)
	require.Equal(t, run, it.RunID)
	require.Equal(t, call, it.ToolCallID)
	require.JSONEq(t, `{"quorum":2}`, string(it.Route))
	old, err := s.InteractionGet(ctx, "ask_1")
	require.NoError(t, err)
	require.Equal(t, "answered", old.Status)
	require.Equal(t, `{"id":"ask_1"}`, string(old.Request))
	require.Equal(t, "jws", old.ReceiptJWS)
	var ty string
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT typeof(id), length(request) FROM interactions WHERE id = ?`, idAsk.enc(ask)).Scan(&ty, &n))
	require.Equal(t, "blob", ty)
	require.Less(t, n, len(req)-200, "the request without its row's columns")
	r, err := s.RunGetActive(ctx, sess)
	require.NoError(t, err)
	require.Equal(t, run, r.ID)
	require.Equal(t, store.RunWaitingInput, r.Status)
	require.Equal(t, 2, r.Steps)
	ds, err := s.DeadlineList(ctx, ask)
	require.NoError(t, err)
	require.Len(t, ds, 2)
	require.Equal(t, []string{"timeout", "remind"}, []string{ds[0].Kind, ds[1].Kind})
	require.Equal(t, sess, ds[1].SessionID)
	require.JSONEq(t, `{"n":1}`, string(ds[1].Data))
	as, err := s.AssigneeList(ctx, ask)
	require.NoError(t, err)
	require.Len(t, as, 2)
	require.Equal(t, []string{"bob", "route", "approve", "carol", "delegate", ""}, []string{as[0].Person, as[0].Via, as[0].Decision, as[1].Person, as[1].Via, as[1].Decision})
	nm, err := s.NotifyMessageList(ctx, ask)
	require.NoError(t, err)
	require.Len(t, nm, 1)
	require.Equal(t, ask, nm[0].RequestID)
	mt, err := s.MCPTaskGet(ctx, task)
	require.NoError(t, err)
	require.Equal(t, ask, mt.RequestID)
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: sess})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, req, string(evs[0].Data), "the event reads its question")
	fd, err := s.FeedList(ctx, &store.FeedListParams{Owner: "o"})
	require.NoError(t, err)
	require.Len(t, fd, 1)
	require.Equal(t, req, string(fd[0].Data))
	recov, err := s.RunListRecoverable(ctx, &store.RunListRecoverableParams{Now: time.UnixMicro(10)})
	require.NoError(t, err)
	require.Len(t, recov, 1)
	require.Equal(t, "run_b", recov[0].ID)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), st.PendingInteractions)
	require.Equal(t, map[store.RunStatus]int64{store.RunWaitingInput: 1, store.RunCompleted: 1, store.RunRunning: 1}, st.Runs)

	// In use: one active run per session still holds; the question is
	// resolved once.
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: newID("run"), SessionID: sess, Agent: "default", Now: now})
	require.ErrorIs(t, err, store.ErrRunActive)
	won, err := s.InteractionResolve(ctx, &store.InteractionResolveParams{ID: ask, SessionID: sess, Status: "answered", Answer: []byte(`{}`), Now: now})
	require.NoError(t, err)
	require.True(t, won)
	won, err = s.InteractionResolve(ctx, &store.InteractionResolveParams{ID: ask, SessionID: sess, Status: "answered", Answer: []byte(`{}`), Now: now})
	require.NoError(t, err)
	require.False(t, won)
	ok, err := s.RunFinish(ctx, &store.RunFinishParams{ID: run, To: store.RunCompleted, Now: now})
	require.NoError(t, err)
	require.True(t, ok)
	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: newID("run"), SessionID: sess, Agent: "default", Now: now})
	require.NoError(t, err)
	require.NoError(t, s.Close())

	// Down: the text shape with the rows as they were (those changed
	// above set back first).
	for _, q := range []string{
		`DELETE FROM runs WHERE created_at = ` + fmt.Sprint(now.UnixMicro()),
		`UPDATE runs SET status = 2, open = 1, updated_at = 2 WHERE session_id = '` + sess + `' AND steps = 2`,
		`UPDATE interactions SET status = 0, answer = NULL, resolved_at = 0, decided_by = NULL WHERE created_at = ` + fmt.Sprint(now.UnixMicro()),
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = p.DownTo(ctx, compactVersion-1)
	require.NoError(t, err)
	require.Equal(t, before, dump())
}

// Migration 00016 keys a session's rows by the session's integer key: a
// database with sessions, messages, events (with references), trace and
// feed rows from before it reads back the same (numbers kept), new rows
// take up the numbers after them, the tables that name sessions(id) still
// do, and Down gives back the rows with their session ids.
func TestMigrationSessionKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, 16-1)
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, last_seq, created_at, updated_at) VALUES
			('sess_a', 'o', 'a', 'waiting_input', 0, 1, 5), ('sess_b', 'o', 'b', 'idle', 9, 2, 2)`,
		`INSERT INTO runs (id, session_id, agent, status, created_at, updated_at) VALUES ('run_a', 'sess_a', '', 'waiting_input', 1, 1)`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, created_at, expires_at) VALUES
			('ask_1', 'sess_a', 'run_a', 'call_1', 'ask_user', '{"id":"ask_1"}', 1, 9999999999999)`,
		`INSERT INTO messages (seq, id, session_id, run_id, role, content, tool_calls, tool_call_id, created_at) VALUES
			(3, 'msg_1', 'sess_a', 'run_a', 'user', 'hi', NULL, '', 1),
			(4, 'msg_x', 'sess_b', '', 'user', 'other', NULL, '', 1),
			(8, 'msg_2', 'sess_a', 'run_a', 'assistant', 'ask', '[{"id":"call_1","name":"ask_user","arguments":"{}"}]', '', 2)`,
		`INSERT INTO events (session_id, seq, name, data, ref, run_id, created_at) VALUES
			('sess_a', 1, 'session', '{"sessionId":"sess_a","runId":"run_a"}', NULL, 'run_a', 1),
			('sess_a', 2, 'message', '{"messageId":"msg_1","content":""}', 'msg_1', NULL, 1),
			('sess_a', 5, 'user_input_required', '', 'ask_1', 'run_a', 2)`,
		`INSERT INTO trace (id, session_id, run_id, kind, data, at) VALUES (6, 'sess_a', 'run_a', 'model_call', '{}', 1), (7, 'sess_b', '', 'x', '{}', 1)`,
		`INSERT INTO feed (owner, seq, session_id, session_seq, name, data, ref, created_at) VALUES
			('o', 4, 'sess_a', 5, 'user_input_required', '', 'ask_1', 2), ('bob', 2, 'sess_a', 5, 'user_input_required', '', 'ask_1', 2)`,
		`INSERT INTO audit (session_id, request_id, action, at) VALUES ('sess_a', 'ask_1', 'asked', 2)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	s, err := Open(ctx, path, nil) // applies 00016
	require.NoError(t, err)
	sess, err := s.SessionGet(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, int64(5), sess.LastSeq)
	sb, err := s.SessionGet(ctx, "sess_b")
	require.NoError(t, err)
	require.Equal(t, int64(9), sb.LastSeq, "the kept number of pruned events")
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess_a"})
	require.NoError(t, err)
	require.Len(t, evs, 3)
	require.Equal(t, []int64{1, 2, 5}, []int64{evs[0].Seq, evs[1].Seq, evs[2].Seq})
	require.JSONEq(t, `{"messageId":"msg_1","content":"hi"}`, string(evs[1].Data), "a message reference reads the message")
	require.JSONEq(t, `{"id":"ask_1"}`, string(evs[2].Data), "a request reference reads the interaction")
	require.Equal(t, "run_a", evs[2].RunID)
	msgs, err := s.MessageList(ctx, "sess_a")
	require.NoError(t, err)
	require.Len(t, msgs, 2)
	require.Less(t, msgs[0].Seq, msgs[1].Seq)
	require.Equal(t, []string{"msg_1", "msg_2"}, []string{msgs[0].ID, msgs[1].ID})
	require.Equal(t, "sess_a", msgs[1].SessionID)
	require.Len(t, msgs[1].Calls, 1)
	tr, err := s.TraceList(ctx, "sess_a")
	require.NoError(t, err)
	require.Len(t, tr, 1)
	require.Equal(t, int64(6), tr[0].ID)
	require.Equal(t, "sess_a", tr[0].SessionID)
	feed, err := s.FeedList(ctx, &store.FeedListParams{Owner: "o"})
	require.NoError(t, err)
	require.Len(t, feed, 1)
	require.Equal(t, int64(4), feed[0].Seq)
	require.Equal(t, "sess_a", feed[0].SessionID)
	require.JSONEq(t, `{"id":"ask_1"}`, string(feed[0].Data))
	au, err := s.AuditList(ctx, "sess_a")
	require.NoError(t, err)
	require.Len(t, au, 1)
	st, err := s.InteractionGetState(ctx, &store.InteractionGetStateParams{ID: "ask_1", Messages: true})
	require.NoError(t, err)
	require.Len(t, st.Messages, 2)

	// New rows take up the numbers after the old ones.
	ev, err := s.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_a", Name: "done", Data: []byte(`{}`), RunID: "run_a", Now: time.UnixMicro(3)})
	require.NoError(t, err)
	require.Equal(t, int64(6), ev.Seq)
	ev, err = s.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_b", Name: "session", Data: []byte(`{}`), Now: time.UnixMicro(3)})
	require.NoError(t, err)
	require.Equal(t, int64(10), ev.Seq)
	feed, err = s.FeedList(ctx, &store.FeedListParams{Owner: "o"})
	require.NoError(t, err)
	require.Equal(t, int64(5), feed[len(feed)-1].Seq)
	m, err := s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_3", SessionID: "sess_a", Role: "user", Content: "three", Now: time.UnixMicro(3)})
	require.NoError(t, err)
	require.Greater(t, m.Seq, msgs[1].Seq)
	_, err = s.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_c", Owner: "o", Now: time.UnixMicro(4)})
	require.NoError(t, err)
	var kc, kmax int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT k FROM sessions WHERE id = 'sess_c'`).Scan(&kc))
	require.NoError(t, db.QueryRowContext(ctx, `SELECT MAX(k) FROM sessions WHERE id <> 'sess_c'`).Scan(&kmax))
	require.Greater(t, kc, kmax, "a new session's key comes after every other")
	_, err = s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_4", SessionID: "nope", Role: "user", Now: time.UnixMicro(3)})
	require.Error(t, err, "no message of a session that does not exist")

	// The tables that name sessions(id) still do, and nothing dangles.
	var runsSQL string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'runs'`).Scan(&runsSQL))
	require.Contains(t, runsSQL, "REFERENCES sessions (id)")
	rows, err := db.QueryContext(ctx, `PRAGMA foreign_key_check`)
	require.NoError(t, err)
	require.False(t, rows.Next(), "foreign_key_check finds nothing")
	rows.Close()
	_, err = db.ExecContext(ctx, `INSERT INTO runs (id, session_id, agent, status, created_at, updated_at) VALUES ('run_z', 'sess_none', '', 'failed', 1, 1)`)
	require.Error(t, err, "runs still references sessions")
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, 16-1)
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE session_id = 'sess_a'`).Scan(&n))
	require.Equal(t, 4, n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE session_id = 'sess_a'`).Scan(&n))
	require.Equal(t, 3, n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM feed WHERE session_id = 'sess_a'`).Scan(&n))
	require.Equal(t, 3, n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM trace WHERE session_id = 'sess_b'`).Scan(&n))
	require.Equal(t, 1, n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&n))
	require.Equal(t, 3, n)
}

// A process killed after migration 00016's own transaction committed and
// before goose recorded the version leaves a migrated database that goose
// has not marked: the next Open records it and goes on, the rows intact
// (sessionKeyMigration looks at the schema first).
func TestMigrationSessionKeyKilledBeforeRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, sessionKeyVersion-1)
	_, err := db.ExecContext(ctx, `INSERT INTO sessions (id, owner, title, status, created_at, updated_at) VALUES ('sess_a', 'o', 'a', 'idle', 1, 1)`)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, sessionKeyVersion)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `DELETE FROM goose_db_version WHERE version_id = ?`, sessionKeyVersion)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	s, err := Open(ctx, path, nil)
	require.NoError(t, err)
	sess, err := s.SessionGet(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, "a", sess.Title)
	_, err = s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_1", SessionID: "sess_a", Role: "user", Content: "hi", Now: time.UnixMicro(2)})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	ms, err := Migrations(ctx, path)
	require.NoError(t, err)
	for _, m := range ms {
		require.True(t, m.Applied, "%d recorded", m.Version)
	}
}

// A database a newer luban migrated past this binary's newest migration
// is refused at Open (store.ErrSchemaTooNew), naming both versions,
// before anything reads its rows; one at this binary's version opens.
// Migrations lists such a database's known migrations with the same error.
func TestOpenRefusesANewerSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "luban.db")
	s, err := Open(ctx, path, nil)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	known, err := Migrations(ctx, path)
	require.NoError(t, err, "a database at this binary's version")
	require.True(t, known[len(known)-1].Applied)
	db, err := sql.Open(DriverName, "file:"+path)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	_, err = Open(ctx, path, nil)
	require.ErrorIs(t, err, store.ErrSchemaTooNew)
	require.ErrorContains(t, err, "version 9999")
	ms, err := Migrations(ctx, path)
	require.ErrorIs(t, err, store.ErrSchemaTooNew)
	require.ErrorContains(t, err, "version 9999")
	require.Equal(t, known, ms, "the known migrations are still listed")
}

// Migration 00017 (logsMigration) keeps every trace and audit row: read
// through the store afterwards they are the same (ids, run and request ids
// of agent.NewID's form and other forms, kinds, actions and reasons the
// enums name and others, a reason that looks like a number); new trace
// entries are numbered after the session's last, and no audit id is given
// twice, neither one AUTOINCREMENT had given and deleted nor one Prune
// deleted. Down restores the text shape and AUTOINCREMENT's mark.
func TestMigrationLogs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, logsVersion-1)
	const (
		sessA = "sess_abcdefghijklmnopqrstuvwx2a"
		runA  = "run_abcdefghijklmnopqrstuvwx2a"
		askA  = "ask_abcdefghijklmnopqrstuvwx2a"
		callA = "call_abcdefghijklmnopqrstuvwx2a"
	)
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES (3, '` + sessA + `', 'o', 'a', 'idle', 1, 1), (4, 'sess_b', 'o', 'b', 'idle', 1, 1)`,
		`INSERT INTO trace (id, sk, run_id, kind, data, at) VALUES (5, 3, '` + runA + `', 'model_call', '{"a":1}', 1), (6, 4, '', 'webhook', '{}', 2), (9, 3, 'run_x', 'weird', '{"b":2}', 3)`,
		`INSERT INTO audit (session_id, request_id, tool_call_id, run_id, action, reason, summary, at) VALUES
			('` + sessA + `', '` + askA + `', '` + callA + `', '` + runA + `', 'requested', '', '{"mode":"single"}', 1),
			('` + sessA + `', 'ask_1', 'call_1', 'run_x', 'rejected', '42', NULL, 2),
			('sess_b', 'ask_2', '', '', 'delegated', 'not_assignee', NULL, 3)`,
		`DELETE FROM audit WHERE id = 3`, // AUTOINCREMENT's mark stays 3
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	s, err := Open(ctx, path, nil) // applies 00017
	require.NoError(t, err)
	trace := func(id string) []store.TraceEntry {
		tr, err := s.TraceList(ctx, id)
		require.NoError(t, err)
		out := make([]store.TraceEntry, len(tr))
		for i, e := range tr {
			out[i] = *e
			out[i].At = out[i].At.UTC()
		}
		return out
	}
	at := func(us int64) time.Time { return time.UnixMicro(us).UTC() }
	require.Equal(t, []store.TraceEntry{
		{ID: 5, SessionID: sessA, RunID: runA, Kind: "model_call", Data: []byte(`{"a":1}`), At: at(1)},
		{ID: 9, SessionID: sessA, RunID: "run_x", Kind: "weird", Data: []byte(`{"b":2}`), At: at(3)},
	}, trace(sessA))
	require.Equal(t, []store.TraceEntry{{ID: 6, SessionID: "sess_b", Kind: "webhook", Data: []byte(`{}`), At: at(2)}}, trace("sess_b"))
	audit := func(id string) []store.AuditEntry {
		au, err := s.AuditList(ctx, id)
		require.NoError(t, err)
		out := make([]store.AuditEntry, len(au))
		for i, e := range au {
			out[i] = *e
			out[i].At = out[i].At.UTC()
		}
		return out
	}
	require.Equal(t, []store.AuditEntry{
		{ID: 1, SessionID: sessA, RequestID: askA, ToolCallID: callA, RunID: runA, Action: "requested", Summary: []byte(`{"mode":"single"}`), At: at(1)},
		{ID: 2, SessionID: sessA, RequestID: "ask_1", ToolCallID: "call_1", RunID: "run_x", Action: "rejected", Reason: "42", At: at(2)},
	}, audit(sessA))
	var blobs int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM audit WHERE typeof(session_id) = 'blob' AND typeof(request_id) = 'blob' AND typeof(action) = 'integer'`).Scan(&blobs))
	require.Equal(t, 1, blobs, "ids of agent.NewID's form are blobs, known actions codes")
	var schema string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT group_concat(sql, ';') FROM sqlite_schema WHERE tbl_name IN ('trace', 'audit')`).Scan(&schema))
	require.NotContains(t, schema, "AUTOINCREMENT")
	require.NotContains(t, schema, "trace_session")

	// New entries: the trace after the session's last; audit ids after
	// the largest ever given (3, deleted), in and outside a transaction.
	toolCall := `{"argumentsBytes":2,"argumentsSha256":"44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a","name":"ask_user","toolCallId":"` + callA + `"}`
	require.NoError(t, s.TraceInsert(ctx, &store.TraceInsertParams{SessionID: sessA, RunID: runA, Kind: "tool_call", Data: []byte(toolCall), Now: at(4)}))
	require.JSONEq(t, toolCall, string(trace(sessA)[2].Data))
	require.Equal(t, toolCall, string(trace(sessA)[2].Data), "packed, read back byte for byte")
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, Action: "answered", Now: at(4)}))
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		if err := tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: sessA, Kind: "tool_result", Data: []byte(`{}`), Now: at(5)}); err != nil {
			return err
		}
		if err := tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: "sess_b", Kind: "x", Data: []byte(`{}`), Now: at(5)}); err != nil {
			return err
		}
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess_b", RequestID: "ask_2", Action: "answered", Now: at(5)})
	}))
	ids := func(tr []store.TraceEntry) (out []int64) {
		for _, e := range tr {
			out = append(out, e.ID)
		}
		return out
	}
	// Since migration 00033 a session's new audit entries are rows of
	// trace numbered with its trace entries (11 is sessA's "answered").
	require.Equal(t, []int64{5, 9, 10, 12}, ids(trace(sessA)))
	require.Equal(t, []int64{6, 7}, ids(trace("sess_b")))
	// Since migration 00025 a session's new entries are a range of ids
	// (its key << 32 plus a number).
	require.Equal(t, int64(3<<32|11), audit(sessA)[2].ID)
	require.Equal(t, int64(4<<32|8), audit("sess_b")[0].ID)
	// Prune deletes every audit row; the next id still comes after them.
	res, err := s.Prune(ctx, &store.PruneParams{AuditBefore: at(100)})
	require.NoError(t, err)
	require.Equal(t, int64(4), res.Audit)
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, Action: "expired", Now: at(6)})
	}))
	summary := `{"mode":"single","selections":["safe"],"selectionCount":1,"customInputLen":0}`
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, Action: "expired", Summary: []byte(summary), Now: at(7)}))
	require.Equal(t, summary, string(audit(sessA)[1].Summary), "packed, read back byte for byte")
	require.Equal(t, []int64{3<<32 | 13, 3<<32 | 14}, []int64{audit(sessA)[0].ID, audit(sessA)[1].ID})
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM trace WHERE kind IS NOT -1 AND typeof(data) = 'blob'`).Scan(&blobs))
	require.Equal(t, 1, blobs, "the tool_call entry's data is packed")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM trace WHERE kind = -1 AND typeof(data) = 'blob'`).Scan(&blobs))
	require.Equal(t, 1, blobs, "the summary is packed")
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, logsVersion-1)
	require.NoError(t, err)
	var n, seq int64
	var run, kind string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM trace WHERE sk = 3`).Scan(&n))
	require.Equal(t, int64(4), n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT run_id, kind FROM trace WHERE sk = 3 ORDER BY id LIMIT 1`).Scan(&run, &kind))
	require.Equal(t, []string{runA, "model_call"}, []string{run, kind})
	var data string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT data FROM trace WHERE sk = 3 AND kind = 'tool_call'`).Scan(&data))
	require.Equal(t, toolCall, data, "Down unpacks the data")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT seq FROM sqlite_sequence WHERE name = 'audit'`).Scan(&seq))
	require.Equal(t, int64(4<<32|8), seq, "the largest id given: sess_b's, pruned")
	var sess, action string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT session_id, action FROM audit WHERE id = ?`, 3<<32|14).Scan(&sess, &action))
	require.Equal(t, []string{sessA, "expired"}, []string{sess, action})
	var sum string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT summary FROM audit WHERE id = ?`, 3<<32|14).Scan(&sum))
	require.Equal(t, summary, sum, "Down unpacks the summary")
	_, err = db.ExecContext(ctx, `INSERT INTO audit (session_id, request_id, action, at) VALUES ('s', 'a', 'x', 1)`)
	require.NoError(t, err)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT MAX(id) FROM audit`).Scan(&n))
	require.Equal(t, int64(4<<32|9), n)
}

// Migration 00018 drops feed_session: a session delete still removes the
// session's feed entries (its owner's and an audience's) and keeps each
// owner's numbers; Down brings the index back.
func TestMigrationFeedSession(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, 17)
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES (1, 'sess_a', 'o', 'a', 'idle', 1, 1), (2, 'sess_b', 'o', 'b', 'idle', 1, 1)`,
		`INSERT INTO feed (owner, seq, sk, session_seq, name, data, created_at, fanned) VALUES
			('o', 1, 2, 1, 'done', '{}', 1, 1), ('o', 2, 1, 1, 'done', '{}', 1, 1), ('bob', 7, 1, 1, 'done', '{}', 1, 1), ('o', 3, 1, 2, 'done', '{}', 2, 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	s, err := Open(ctx, path, nil) // applies 00018
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'feed_session'`).Scan(&n))
	require.Equal(t, 0, n)
	require.NoError(t, s.SessionDelete(ctx, "sess_a"))
	feed, err := s.FeedList(ctx, &store.FeedListParams{Owner: "o"})
	require.NoError(t, err)
	require.Len(t, feed, 1)
	require.Equal(t, "sess_b", feed[0].SessionID)
	bob, err := s.FeedList(ctx, &store.FeedListParams{Owner: "bob"})
	require.NoError(t, err)
	require.Empty(t, bob)
	for owner, want := range map[string]int64{"o": 3, "bob": 7} {
		last, err := s.FeedLastSeq(ctx, owner)
		require.NoError(t, err)
		require.Equal(t, want, last, "%s's numbers are kept", owner)
	}
	require.NoError(t, s.Close())
	_, err = p.DownTo(ctx, 17)
	require.NoError(t, err)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'feed_session'`).Scan(&n))
	require.Equal(t, 1, n)
}

// Migration 00020 (rowsMigration) keeps every message: a database with the
// messages of two sessions interleaved reads them the same afterwards, each
// session's in its order (MessageList, InteractionGetState, a message
// reference of an event), numbered in its session's range, with the index
// by session gone; new messages come after a session's last, deleting a
// session deletes its messages and no other's, and pausing and resuming a
// run set its session's status. Down restores the index and the rows.
// Run again over a migrated database whose version goose did not record
// (a kill between the two), it changes nothing.
func TestMigrationRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, rowsVersion-1)
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES
			(1, 'sess_a', 'o', 'a', 'waiting_input', 1, 5), (2, 'sess_b', 'o', 'b', 'idle', 2, 2)`,
		`INSERT INTO runs (id, session_id, agent, status, open, created_at, updated_at) VALUES ('run_a', 'sess_a', '', 2, 1, 1, 1)`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, created_at, expires_at) VALUES
			('ask_1', 'sess_a', 'run_a', 'call_1', 'ask_user', '{"id":"ask_1"}', 1, 9999999999999)`,
		`INSERT INTO messages (seq, id, sk, run_id, role, content, tool_calls, tool_call_id, created_at) VALUES
			(3, 'msg_1', 1, 'run_a', 'user', 'hi', NULL, '', 1),
			(4, 'msg_x', 2, '', 'user', 'other', NULL, '', 1),
			(8, 'msg_2', 1, 'run_a', 'assistant', 'ask', '[{"id":"call_1","name":"ask_user","arguments":"{}"}]', '', 2),
			(9, 'msg_y', 2, '', 'tool', 'r', NULL, 'call_9', 3)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}

	s, err := Open(ctx, path, nil) // applies rowsMigration
	require.NoError(t, err)
	ids := func(ms []*store.Message) (out []string) {
		for i, m := range ms {
			if i > 0 {
				require.Less(t, ms[i-1].Seq, m.Seq)
			}
			out = append(out, m.ID)
		}
		return out
	}
	msgs, err := s.MessageList(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, []string{"msg_1", "msg_2"}, ids(msgs))
	require.Equal(t, "sess_a", msgs[1].SessionID)
	require.Equal(t, "ask", msgs[1].Content)
	require.Len(t, msgs[1].Calls, 1)
	mb, err := s.MessageList(ctx, "sess_b")
	require.NoError(t, err)
	require.Equal(t, []string{"msg_x", "msg_y"}, ids(mb))
	require.Equal(t, int64(2)<<32+1, mb[0].Seq, "the session's key, then its number")
	st, err := s.InteractionGetState(ctx, &store.InteractionGetStateParams{ID: "ask_1", Messages: true})
	require.NoError(t, err)
	require.Equal(t, []string{"msg_1", "msg_2"}, ids(st.Messages))
	_, err = s.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_a", Name: "message", Data: []byte(`{"messageId":"msg_2","content":""}`), MessageRef: "msg_2", Now: time.UnixMicro(3)})
	require.NoError(t, err)
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess_a"})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.JSONEq(t, `{"messageId":"msg_2","content":"ask"}`, string(evs[0].Data))
	_, err = s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_z", SessionID: "sess_b", Role: "tool", ToolCallID: "call_9", Now: time.UnixMicro(4)})
	require.ErrorIs(t, err, store.ErrDuplicate, "one result per call still holds")
	m, err := s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_3", SessionID: "sess_a", Role: "user", Content: "three", Now: time.UnixMicro(4)})
	require.NoError(t, err)
	msgs, err = s.MessageList(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, []string{"msg_1", "msg_2", "msg_3"}, ids(msgs))
	require.Equal(t, m.Seq, msgs[2].Seq)
	_, err = s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_4", SessionID: "nope", Role: "user", Now: time.UnixMicro(4)})
	require.ErrorIs(t, err, store.ErrNotFound, "no message of a session that does not exist")
	_, err = db.ExecContext(ctx, `INSERT INTO messages (seq, id, sk, role, created_at) VALUES ((2 << 32) + 4294967295, 'msg_last', 2, 'user', 4)`)
	require.NoError(t, err)
	_, err = s.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_5", SessionID: "sess_b", Role: "user", Now: time.UnixMicro(4)})
	require.Error(t, err, "a session's last number used: refused, not numbered in the next session's range")
	_, err = db.ExecContext(ctx, `DELETE FROM messages WHERE id = 'msg_last'`)
	require.NoError(t, err)

	won, err := s.RunResume(ctx, &store.RunResumeParams{ID: "run_a", LeaseOwner: "i", LeaseUntil: time.UnixMicro(100), Now: time.UnixMicro(7)})
	require.NoError(t, err)
	require.True(t, won)
	sa, err := s.SessionGet(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, "running", sa.Status)
	// A resume and a pause set the status, not updated_at (migration
	// 00031: the session's last run started or ended).
	require.Equal(t, time.UnixMicro(5).UTC(), sa.UpdatedAt)
	won, err = s.RunPause(ctx, &store.RunPauseParams{ID: "run_a", LeaseOwner: "i", Now: time.UnixMicro(8)})
	require.NoError(t, err)
	require.True(t, won)
	sa, err = s.SessionGet(ctx, "sess_a")
	require.NoError(t, err)
	require.Equal(t, "waiting_input", sa.Status)
	require.Equal(t, time.UnixMicro(5).UTC(), sa.UpdatedAt)
	require.NoError(t, s.SessionDelete(ctx, "sess_b"))
	msgs, err = s.MessageList(ctx, "sess_a")
	require.NoError(t, err)
	require.Len(t, msgs, 3, "deleting a session leaves the others' messages")
	require.NoError(t, s.Close())

	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages`).Scan(&n))
	require.Equal(t, 3, n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('messages_session', 'runs_session_status')`).Scan(&n))
	require.Equal(t, 1, n, "the trigger, not the index")

	// Killed before goose recorded the version (the later migrations not
	// yet run): the next run records it.
	_, err = p.DownTo(ctx, rowsVersion)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `DELETE FROM goose_db_version WHERE version_id = ?`, rowsVersion)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, rowsVersion)
	require.NoError(t, err)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages`).Scan(&n))
	require.Equal(t, 3, n)

	_, err = p.DownTo(ctx, rowsVersion-1)
	require.NoError(t, err)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name IN ('messages_session', 'runs_session_status')`).Scan(&n))
	require.Equal(t, 1, n, "the index, not the trigger")
	rows, err := db.QueryContext(ctx, `SELECT id FROM messages WHERE sk = 1 ORDER BY seq`)
	require.NoError(t, err)
	var got []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		got = append(got, id)
	}
	require.NoError(t, rows.Err())
	rows.Close()
	require.Equal(t, []string{"msg_1", "msg_2", "msg_3"}, got)
}

// Migration 00021 drops feed_prune: retention prunes each owner's old
// entries that were fanned out on the primary key, up to the owner's first
// recent entry, and keeps the owner's numbers; an entry not fanned out
// stays whatever its age. Down brings the index back.
func TestMigrationFeedPrunePK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, 20)
	cutoff := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	old, recent := ts(cutoff.Add(-time.Hour)), ts(cutoff.Add(time.Hour))
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES (1, 'sess_a', 'o', 'a', 'idle', 1, 1), (2, 'sess_b', 'bob', 'b', 'idle', 1, 1)`,
		fmt.Sprintf(`INSERT INTO feed (owner, seq, sk, session_seq, name, data, created_at, fanned) VALUES
			('o', 1, 1, 1, 'done', '{}', %[1]d, 1), ('o', 2, 1, 2, 'done', '{}', %[1]d, 0), ('o', 3, 1, 3, 'done', '{}', %[1]d, 1),
			('o', 4, 1, 4, 'done', '{}', %[2]d, 1), ('o', 5, 1, 5, 'done', '{}', %[1]d, 1), ('bob', 7, 2, 1, 'done', '{}', %[1]d, 1)`, old, recent),
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	s, err := Open(ctx, path, nil) // applies 00021
	require.NoError(t, err)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'feed_prune'`).Scan(&n))
	require.Equal(t, 0, n)
	res, err := s.Prune(ctx, &store.PruneParams{EventsBefore: cutoff, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, int64(3), res.Feed, "o 1 and 3, bob 7")
	seqs := func(owner string) []int64 {
		t.Helper()
		feed, err := s.FeedList(ctx, &store.FeedListParams{Owner: owner})
		require.NoError(t, err)
		var out []int64
		for _, f := range feed {
			out = append(out, f.Seq)
		}
		return out
	}
	require.Equal(t, []int64{2, 4, 5}, seqs("o"), "not fanned out: 2; recent: 4; past the first recent one: 5")
	require.Empty(t, seqs("bob"))
	for owner, want := range map[string]int64{"o": 5, "bob": 7} {
		last, err := s.FeedLastSeq(ctx, owner)
		require.NoError(t, err)
		require.Equal(t, want, last, "%s's numbers are kept", owner)
	}
	require.NoError(t, s.Close())
	_, err = p.DownTo(ctx, 20)
	require.NoError(t, err)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'feed_prune'`).Scan(&n))
	require.Equal(t, 1, n)
}

// SetOutbox(false) writes an owner's feed entry fanned out: the feed lists
// it, the outbox (FeedListUnfanned) does not; SetOutbox(true) makes the
// next entries outbox rows again, and an entry committed before keeps its
// state.
func TestSetOutbox(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _, path := migratedTo(t, 21)
	_, err := db.ExecContext(ctx, `INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES (1, 'sess_a', 'o', 'a', 'idle', 1, 1)`)
	require.NoError(t, err)
	s, err := Open(ctx, path, nil)
	require.NoError(t, err)
	defer s.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	appendDone := func() {
		t.Helper()
		_, err := s.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_a", Name: "done", Data: []byte(`{}`), Now: now})
		require.NoError(t, err)
	}
	unfanned := func() []int64 {
		t.Helper()
		un, err := s.FeedListUnfanned(ctx, 10)
		require.NoError(t, err)
		var out []int64
		for _, f := range un {
			out = append(out, f.Seq)
		}
		return out
	}
	appendDone()
	s.SetOutbox(false)
	appendDone()
	appendDone()
	require.Equal(t, []int64{1}, unfanned(), "the entry committed before SetOutbox(false) stays an outbox row")
	s.SetOutbox(true)
	appendDone()
	require.Equal(t, []int64{1, 4}, unfanned())
	feed, err := s.FeedList(ctx, &store.FeedListParams{Owner: "o"})
	require.NoError(t, err)
	require.Len(t, feed, 4, "the feed lists every entry")
}
