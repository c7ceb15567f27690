package sqlite

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// oldEventList is what EventList read before migration 00024 (the query and
// the decoding of that release): a message reference is the message's id,
// found by the message-id index in any session.
func oldEventList(t *testing.T, db *sql.DB, session string) []string {
	t.Helper()
	rows, err := db.Query(`SELECT (e.k & 4294967295), e.name, e.data, i.request, m.content, m.tool_calls, e.ref, e.run_id, e.created_at
		FROM sessions s JOIN events e ON e.k > s.k * 4294967296 AND e.k < (s.k + 1) * 4294967296
		LEFT JOIN interactions i ON i.id = e.ref LEFT JOIN messages m ON m.id = e.ref AND i.id IS NULL
		WHERE s.id = ? ORDER BY e.k`, session)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var seq, at int64
		var name, data, request, ref, runID any
		var content, calls sql.NullString
		require.NoError(t, rows.Scan(&seq, &name, &data, &request, &content, &calls, &ref, &runID, &at))
		run, err := idRun.dec(runID)
		require.NoError(t, err)
		var b []byte
		if request != nil {
			b = []byte("request") // not read here: the same column before and after
		} else {
			mref, _ := ref.(string)
			b, err = unpackEventData(data, session, run, mref)
			require.NoError(t, err)
		}
		if content.Valid {
			b = store.SpliceMessage(b, content.String, []byte(calls.String))
		}
		n, err := eventNames.dec(name)
		require.NoError(t, err)
		out = append(out, strings.Join([]string{n, string(b), run, time.UnixMicro(at).UTC().String()}, "|"))
	}
	require.NoError(t, rows.Err())
	return out
}

// Migration 00024 (eventRefsMigration) keeps every event's bytes: events
// stored as the release before stored them (message references as ids, to a
// message of the session, of another session and of none; data packed
// without eventDict) read the same through EventList (what the SSE replay
// and the transcript send) after it; new events store a message's number
// and eventDict's bytes and read back; and Down restores the old rows
// exactly and gives the new ones the old form, read the same by the old
// query.
func TestMigrationEventRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, eventRefsVersion-1)
	sa, run, msg, call := newFormID("sess", 'b'), newFormID("run", 'c'), newFormID("msg", 'd'), newFormID("call", 'e')
	calls := `[{"id":"` + call + `","name":"ask_user","arguments":"{\"q\":1}"}]`
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, last_seq, created_at, updated_at) VALUES
			(1, '` + sa + `', 'o', 'a', 'idle', 0, 1, 5), (2, 'sess_b', 'o', 'b', 'idle', 0, 2, 2)`,
		`INSERT INTO messages (seq, id, sk, run_id, role, content, tool_calls, created_at) VALUES
			(4294967297, '` + msg + `', 1, '', 'user', 'hi "there"', NULL, 1), (4294967298, 'msg_2', 1, '', 'assistant', '', '` + calls + `', 1),
			(8589934593, 'msg_b', 2, '', 'user', 'in b', NULL, 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	rows := []struct {
		k               int64
		name, data, ref string
		runID           string
	}{
		{1<<32 + 1, "session", `{"sessionId":"` + sa + `","runId":"` + run + `"}`, "", run},
		{1<<32 + 2, "message", `{"messageId":"` + msg + `","role":"user","content":""}`, msg, ""},
		{1<<32 + 3, "tool_call", `{"toolCallId":"` + call + `","name":"ask_user","arguments":""}`, "msg_2", ""},
		{1<<32 + 4, "message", `{"messageId":"msg_b","role":"user","content":""}`, "msg_b", ""},       // another session's
		{1<<32 + 5, "message", `{"messageId":"msg_gone","role":"user","content":""}`, "msg_gone", ""}, // none
		{1<<32 + 6, "done", `{"runId":"` + run + `","status":"completed"}`, "", run},
		{2<<32 + 1, "message", `{"messageId":"msg_b","role":"user","content":""}`, "msg_b", ""},
	}
	for _, r := range rows {
		var ref, runID any
		if r.ref != "" {
			ref = r.ref
		}
		if r.runID != "" {
			runID = idRun.enc(r.runID)
		}
		_, err := db.ExecContext(ctx, `INSERT INTO events (k, name, data, ref, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
			r.k, eventNames.enc(r.name), packEvent([]byte(r.data), text(map[int64]string{1: sa, 2: "sess_b"}[r.k>>32]), r.runID, r.ref, false), ref, runID, r.k&0xff)
		require.NoError(t, err)
	}
	dump := func() []string {
		rs, err := db.QueryContext(ctx, `SELECT quote(k), quote(name), quote(data), quote(ref), quote(run_id), quote(created_at) FROM events ORDER BY k`)
		require.NoError(t, err)
		defer rs.Close()
		var out []string
		for rs.Next() {
			v := make([]string, 6)
			require.NoError(t, rs.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5]))
			out = append(out, strings.Join(v, "|"))
		}
		require.NoError(t, rs.Err())
		return out
	}
	before := dump()
	old := map[string][]string{sa: oldEventList(t, db, sa), "sess_b": oldEventList(t, db, "sess_b")}
	require.Contains(t, old[sa][1], `hi \"there\"`, "the old read splices the message")

	list := func(s *Store, session string) []string {
		evs, err := s.EventList(ctx, &store.EventListParams{SessionID: session})
		require.NoError(t, err)
		var out []string
		for _, ev := range evs {
			out = append(out, strings.Join([]string{ev.Name, string(ev.Data), ev.RunID, ev.CreatedAt.String()}, "|"))
		}
		return out
	}
	s, err := Open(ctx, path, nil) // applies 00024
	require.NoError(t, err)
	for session, want := range old {
		require.Equal(t, want, list(s, session), "%s reads byte for byte as before", session)
	}
	var refs string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT group_concat(quote(ref), ',') FROM (SELECT ref FROM events ORDER BY k)`).Scan(&refs))
	require.Equal(t, `NULL,1,2,8589934593,'msg_gone',NULL,1`, refs, "a message of the session is referenced by its number, another session's by its seq")

	// New events: a message of this transaction, one of before, none.
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: "msg_new", SessionID: sa, Role: "assistant", Content: "新", Now: time.UnixMicro(7)}); err != nil {
			return err
		}
		for _, ref := range []string{"msg_new", msg, "msg_none"} {
			if _, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: sa, Name: "message",
				Data: []byte(`{"messageId":"` + ref + `","role":"assistant","content":""}`), MessageRef: ref, Now: time.UnixMicro(7)}); err != nil {
				return err
			}
		}
		return nil
	}))
	newList := list(s, sa)
	require.Len(t, newList, 9)
	require.Equal(t, []string{`message|{"messageId":"msg_new","role":"assistant","content":"新"}||1970-01-01 00:00:00.000007 +0000 UTC`,
		`message|{"messageId":"` + msg + `","role":"assistant","content":"hi \"there\""}||1970-01-01 00:00:00.000007 +0000 UTC`,
		`message|{"messageId":"msg_none","role":"assistant","content":""}||1970-01-01 00:00:00.000007 +0000 UTC`}, newList[6:])
	require.NoError(t, db.QueryRowContext(ctx, `SELECT group_concat(quote(ref), ',') FROM (SELECT ref FROM events WHERE k > ? AND k < ? ORDER BY k)`, 1<<32+6, 2<<32).Scan(&refs))
	require.Equal(t, `3,1,'msg_none'`, refs)
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT length(data) FROM events WHERE k = ?`, 1<<32+7).Scan(&n))
	require.Equal(t, 3, n, "the new message event is three bytes: eventDict's, the reference's, eventDict's")
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, eventRefsVersion-1)
	require.NoError(t, err)
	after := dump()
	require.Equal(t, before[:len(before)-1], after[:len(before)-1], "Down gives back the old rows exactly")
	require.Equal(t, before[len(before)-1], after[len(after)-1])
	require.Equal(t, newList, oldEventList(t, db, sa), "the old query reads the new events as they were")
	var dict int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE typeof(data) = 'blob' AND (instr(data, x'04') OR instr(data, x'17'))`).Scan(&dict))
	require.Zero(t, dict, "no eventDict byte after Down")
}
