package sqlite

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// newFormID is an id of agent.NewID's form: prefix, "_" and 26 base32
// characters (c repeated, then a valid last one).
func newFormID(prefix string, c byte) string {
	return prefix + "_" + strings.Repeat(string(c), idChars-1) + "a"
}

// Migration 00019 (eventsMigration) keeps every event: a database with
// events of every kind (ids the row names, other ids, references to a
// message and to a question, data that is not JSON, a name the store does
// not know) reads back the same bytes through EventList afterwards, new
// events take up the numbers after them, and Down restores the rows
// exactly.
func TestMigrationEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, eventsVersion-1)
	sa, run, msg, call, ask := newFormID("sess", 'b'), newFormID("run", 'c'), newFormID("msg", 'd'), newFormID("call", 'e'), newFormID("ask", 'f')
	calls := `[{"id":"` + call + `","name":"ask_user","arguments":"{\"q\":1}"}]`
	rows := []struct {
		sk, seq                int64
		name, data, ref, runID string
	}{
		{1, 1, "session", `{"sessionId":"` + sa + `","runId":"` + run + `"}`, "", run},
		{1, 2, "message", `{"messageId":"` + msg + `","role":"user","content":""}`, msg, ""},
		{1, 3, "tool_call", `{"toolCallId":"` + call + `","name":"ask_user","arguments":""}`, "msg_2", ""},
		{1, 4, "user_input_required", ``, "ask_1", run},
		{1, 6, "user_input_resolved", `{"requestId":"` + ask + `","toolCallId":"` + call + `","status":"answered","selections":["safe"]}`, "", ""},
		{1, 7, "custom", `{"t":"say \"` + run + `\" and \"` + sa + `\"` + "\n" + `"}`, "", run},
		{1, 8, "done", `{"runId":"` + run + `","status":"completed"}`, "", run},
		{1, 9, "not_json", "\x01\"" + run + "\"", "", run},
		{1, 10, "message_delta", `{"messageId":"msg_x","delta":"` + sa + `"}`, "", ""},
		{2, 3, "session", `{"sessionId":"sess_b"}`, "", ""},
	}
	for _, q := range []string{
		`INSERT INTO sessions (id, owner, title, status, last_seq, created_at, updated_at) VALUES
			('` + sa + `', 'o', 'a', 'idle', 0, 1, 5), ('sess_b', 'o', 'b', 'idle', 0, 2, 2)`,
		`INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, created_at, expires_at) VALUES
			('ask_1', '` + sa + `', 'run_a', 'call_1', 'ask_user', '{"id":"ask_1"}', 1, 9999999999999)`,
		`INSERT INTO messages (seq, id, sk, run_id, role, content, tool_calls, created_at) VALUES
			(3, '` + msg + `', 1, '', 'user', 'hi "there"', NULL, 1), (4, 'msg_2', 1, '', 'assistant', '', '` + calls + `', 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	for _, r := range rows {
		var ref, runID any
		if r.ref != "" {
			ref = r.ref
		}
		if r.runID != "" {
			runID = r.runID
		}
		_, err := db.ExecContext(ctx, `INSERT INTO events (sk, seq, name, data, created_at, ref, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			r.sk, r.seq, r.name, r.data, r.seq*10, ref, runID)
		require.NoError(t, err)
	}
	dump := func() []string {
		rs, err := db.QueryContext(ctx, `SELECT quote(sk), quote(seq), quote(name), quote(data), quote(created_at), quote(ref), quote(run_id) FROM events ORDER BY sk, seq`)
		require.NoError(t, err)
		defer rs.Close()
		var out []string
		for rs.Next() {
			v := make([]string, 7)
			require.NoError(t, rs.Scan(&v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6]))
			out = append(out, strings.Join(v, "|"))
		}
		require.NoError(t, rs.Err())
		return out
	}
	before := dump()

	s, err := Open(ctx, path, nil) // applies 00019
	require.NoError(t, err)
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: sa})
	require.NoError(t, err)
	require.Len(t, evs, 9)
	for i, ev := range evs {
		r := rows[i]
		want := []byte(r.data)
		switch r.ref {
		case msg:
			want = store.SpliceMessage(want, `hi "there"`, nil)
		case "msg_2":
			want = store.SpliceMessage(want, "", []byte(calls))
		case "ask_1":
			want = []byte(`{"id":"ask_1"}`)
		}
		require.Equal(t, r.seq, ev.Seq)
		require.Equal(t, r.name, ev.Name)
		require.Equal(t, string(want), string(ev.Data), "event %d, byte for byte", r.seq)
		require.Equal(t, r.runID, ev.RunID)
		require.Equal(t, time.UnixMicro(r.seq*10).UTC(), ev.CreatedAt)
	}
	require.True(t, json.Valid(evs[2].Data))
	evs, err = s.EventList(ctx, &store.EventListParams{SessionID: sa, AfterSeq: 6, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []int64{7, 8}, []int64{evs[0].Seq, evs[1].Seq})
	evs, err = s.EventList(ctx, &store.EventListParams{SessionID: "sess_b"})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, `{"sessionId":"sess_b"}`, string(evs[0].Data))

	var packed, ids int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE typeof(data) = 'blob'`).Scan(&packed))
	require.Equal(t, 7, packed, "data with a quoted id is packed; the empty, the one whose ids are inside escaped quotes and the one that is not JSON are text")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE typeof(run_id) = 'blob'`).Scan(&ids))
	require.Equal(t, 5, ids)
	var schema string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'events'`).Scan(&schema))
	require.NotContains(t, schema, "WITHOUT ROWID")

	// New events take up the numbers after the old ones, and read back.
	ev, err := s.EventAppend(ctx, &store.EventAppendParams{SessionID: sa, Name: "done", Data: []byte(`{"runId":"` + run + `"}`), RunID: run, Now: time.UnixMicro(3)})
	require.NoError(t, err)
	require.Equal(t, int64(11), ev.Seq)
	ev, err = s.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_b", Name: "session", Data: []byte(`{}`), Now: time.UnixMicro(3)})
	require.NoError(t, err)
	require.Equal(t, int64(4), ev.Seq)
	evs, err = s.EventList(ctx, &store.EventListParams{SessionID: sa, AfterSeq: 10})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, `{"runId":"`+run+`"}`, string(evs[0].Data))
	sess, err := s.SessionGet(ctx, sa)
	require.NoError(t, err)
	require.Equal(t, int64(11), sess.LastSeq)
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, eventsVersion-1)
	require.NoError(t, err)
	after := dump()
	require.Len(t, after, len(before)+2)
	require.Equal(t, before[:len(before)-1], after[:len(before)-1], "Down gives back the rows exactly")
	require.Equal(t, before[len(before)-1], after[len(after)-2])
	require.Contains(t, after[len(before)-1], `'{"runId":"`+run+`"}'`)
}

// packEventData and unpackEventData are inverse on any data: JSON with
// ids in every place, escaped quotes around ids, ids cut short, and bytes
// that are not JSON.
func TestEventDataRoundTrip(t *testing.T) {
	t.Parallel()
	sess, run, msg := newFormID("sess", 'b'), newFormID("run", 'c'), newFormID("msg", 'd')
	for _, d := range []string{
		``, `{}`, `"`, `""`, `"` + run, `"` + run + `"`, `""` + run + `""`,
		`{"a":"` + sess + `","b":["` + run + `","` + msg + `","` + newFormID("task", 'z') + `"]}`,
		`{"a":"\"` + sess + `\"","b":"` + run[:10] + `"}`,
		`{"a":"` + newFormID("ask", '7') + `x"}`, `{"a":"` + newFormID("call", '2') + `"}`,
		"\x02\"" + run + "\"", "{\t\"a\":\r\n\"" + msg + "\"}",
		`{"a":"` + strings.ToUpper(run) + `"}`, `{"a":"run_` + strings.Repeat("c", 26) + `"}`,
		// The agent's events (eventDict), and strings that only look like
		// their parts.
		`{"sessionId":"` + sess + `","runId":"` + run + `"}`,
		`{"messageId":"` + msg + `","role":"user","content":""}`, `{"messageId":"` + msg + `","role":"assistant","content":""}`,
		`{"messageId":"` + msg + `","role":"tool","content":"","reasoning":"r"}`,
		`{"toolCallId":"` + newFormID("call", '2') + `","name":"ask_user","arguments":""}`,
		`{"toolCallId":"call_1","name":"x","content":"","isError":false,"metadata":{"a":1}}`,
		`{"toolCallId":"call_1","name":"x","content":"","isError":true}`,
		`{"messageId":"` + msg + `","delta":"{\"sessionId\":,\"runId\":"}`,
		`{"runId":"` + run + `","status":"completed"}`, `{"requestId":"` + newFormID("ask", '7') + `","toolCallId":"` + newFormID("call", '2') + `","status":"answered","selections":["safe"]}`,
		`{"sessionId":`, `,"runId":`, `"ask_user"`, `{"a":",\"name\":"}`, `,,{{""`,
	} {
		for _, dict := range []bool{true, false} {
			v := packEvent([]byte(d), sess, run, msg, dict)
			got, err := unpackEventData(v, sess, run, msg)
			require.NoError(t, err, "%q", d)
			require.Equal(t, d, string(got), "%q", d)
			if b, ok := v.([]byte); ok {
				require.Less(t, len(b), len(d), "%q packed only when shorter", d)
				if !dict {
					for _, c := range b {
						require.True(t, c >= 0x20 || evDictEntry[c] == "", "%q: no eventDict byte without dict", d)
					}
				}
			}
		}
	}
	// The agent's message event: the id and the rest a byte each.
	require.Equal(t, []byte{evDictCode[2], evRef, evDictCode[3]}, packEventData([]byte(`{"messageId":"`+msg+`","role":"user","content":""}`), sess, run, msg))
	_, err := unpackEventData([]byte{evID, 1, 2}, "", "", "")
	require.Error(t, err)
}
