package sqlite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Migration 00026 (messageIDsMigration) keeps every message: messages
// stored with text ids (of agent.NewID's form and not, with and without a
// run and a parent) read the same through MessageList and the events that
// reference them through EventList afterwards, the ids of agent.NewID's
// form are 16-byte blobs, the message-id index is gone, new messages and
// events go on working, and Down restores the rows exactly.
func TestMigrationMessageIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, messageIDsVersion-1)
	sa, run, m1, m2, call := newFormID("sess", 'b'), newFormID("run", 'c'), newFormID("msg", 'd'), newFormID("msg", 'e'), newFormID("call", 'f')
	calls := `[{"id":"` + call + `","name":"ask_user","arguments":"{\"q\":1}"}]`
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, last_seq, created_at, updated_at) VALUES (1, '` + sa + `', 'o', 'a', 'idle', 0, 1, 5)`,
		`INSERT INTO messages (seq, id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at) VALUES
			(4294967297, '` + m1 + `', 1, '` + run + `', 'user', 'hi', NULL, '', '', 0, NULL, '', 0, 1),
			(4294967298, '` + m2 + `', 1, '` + run + `', 'assistant', '', '` + calls + `', '', '', 0, NULL, '', 0, 2),
			(4294967299, 'msg_x', 1, 'run_x', 'tool', 'done', NULL, '` + call + `', 'ask_user', 1, '{"k":1}', '` + m2 + `', 0, 3),
			(4294967300, 'msg_y', 1, '', 'user', 'no run', NULL, '', '', 0, NULL, 'msg_x', 2, 4)`,
		`INSERT INTO events (k, name, data, ref, run_id, created_at) VALUES
			(4294967297, 3, '{"messageId":"` + m1 + `","role":"user","content":""}', 1, NULL, 1),
			(4294967298, 4, '{"toolCallId":"` + call + `","name":"ask_user","arguments":""}', 2, NULL, 2)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	dump := func() []string {
		rs, err := db.QueryContext(ctx, `SELECT quote(seq), quote(id), quote(sk), quote(run_id), quote(role), quote(content), quote(tool_calls), quote(tool_call_id),
			quote(name), quote(is_error), quote(metadata), quote(parent_id), quote(call_index), quote(created_at) FROM messages ORDER BY seq`)
		require.NoError(t, err)
		defer rs.Close()
		var out []string
		for rs.Next() {
			v := make([]string, 14)
			dest := make([]any, 14)
			for i := range v {
				dest[i] = &v[i]
			}
			require.NoError(t, rs.Scan(dest...))
			out = append(out, strings.Join(v, "|"))
		}
		require.NoError(t, rs.Err())
		return out
	}
	before := dump()

	s, err := Open(ctx, path, nil) // applies 00026
	require.NoError(t, err)
	msgs, err := s.MessageList(ctx, sa)
	require.NoError(t, err)
	type msg struct{ id, run, role, content, calls, callID, name, meta, parent string }
	var got []msg
	for _, m := range msgs {
		got = append(got, msg{m.ID, m.RunID, m.Role, m.Content, string(m.ToolCalls), m.ToolCallID, m.Name, string(m.Metadata), m.ParentID})
	}
	require.Equal(t, []msg{{m1, run, "user", "hi", "", "", "", "", ""}, {m2, run, "assistant", "", calls, "", "", "", ""},
		{"msg_x", "run_x", "tool", "done", "", call, "ask_user", `{"k":1}`, m2}, {"msg_y", "", "user", "no run", "", "", "", "", "msg_x"}}, got)
	require.True(t, msgs[2].IsError)
	require.Equal(t, 2, msgs[3].CallIndex)
	require.Equal(t, time.UnixMicro(4).UTC(), msgs[3].CreatedAt)
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: sa})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, `{"messageId":"`+m1+`","role":"user","content":"hi"}`, string(evs[0].Data))
	require.Equal(t, `{"toolCallId":"`+call+`","name":"ask_user","arguments":"{\"q\":1}"}`, string(evs[1].Data))
	var types string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT group_concat(typeof(id) || ',' || typeof(run_id) || ',' || typeof(parent_id), ';') FROM (SELECT * FROM messages ORDER BY seq)`).Scan(&types))
	require.Equal(t, "blob,blob,text;blob,blob,text;text,text,blob;text,text,text", types)
	var idx int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sqlite_autoindex_messages_1'`).Scan(&idx))
	require.Zero(t, idx, "no message-id index")

	// New messages and events that reference them, in one transaction and
	// across two.
	m3 := newFormID("msg", 'g')
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: m3, SessionID: sa, RunID: run, Role: "assistant", Content: "新", ParentID: m1, Now: time.UnixMicro(7)}); err != nil {
			return err
		}
		_, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: sa, Name: "message", Data: []byte(`{"messageId":"` + m3 + `","role":"assistant","content":""}`), MessageRef: m3, Now: time.UnixMicro(7)})
		return err
	}))
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: sa, Name: "message", Data: []byte(`{"messageId":"msg_x","role":"tool","content":""}`), MessageRef: "msg_x", Now: time.UnixMicro(8)})
		return err
	}))
	evs, err = s.EventList(ctx, &store.EventListParams{SessionID: sa, AfterSeq: 2})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, `{"messageId":"`+m3+`","role":"assistant","content":"新"}`, string(evs[0].Data))
	require.Equal(t, `{"messageId":"msg_x","role":"tool","content":"done"}`, string(evs[1].Data), "a message of an earlier transaction, found in the session's range")
	var refs string
	require.NoError(t, db.QueryRowContext(ctx, `SELECT group_concat(quote(ref), ',') FROM (SELECT ref FROM events ORDER BY k)`).Scan(&refs))
	require.Equal(t, "1,2,5,3", refs)
	msgs, err = s.MessageList(ctx, sa)
	require.NoError(t, err)
	require.Len(t, msgs, 5)
	require.Equal(t, []string{m3, run, m1}, []string{msgs[4].ID, msgs[4].RunID, msgs[4].ParentID})
	require.NoError(t, s.Close())

	_, err = p.DownTo(ctx, messageIDsVersion-1)
	require.NoError(t, err)
	after := dump()
	require.Equal(t, before, after[:len(before)], "Down gives back the rows exactly")
	require.Contains(t, after[4], `'`+m3+`'|1|'`+run+`'|'assistant'`)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_schema WHERE name = 'sqlite_autoindex_messages_1'`).Scan(&idx))
	require.Equal(t, 1, idx, "the message-id index is back")
}
