package sqlite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Migration 00025 (audit_session_range) gives a session's new audit
// entries ids of a range under its key: entries stored before read back as
// they were and before the new ones, in and outside a transaction; a
// deleted session's entries stay readable and a session that takes its key
// starts an empty range; a session is given no id twice after Prune; Down
// keeps every row and the ids go on from the largest given.
func TestMigrationAuditRange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	v := sqlMigration(t, "audit_session_range")
	db, p, path := migratedTo(t, v-1)
	const sessA = "sess_abcdefghijklmnopqrstuvwx2a"
	for _, q := range []string{
		`INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES (1, '` + sessA + `', 'o', 'a', 'idle', 1, 1), (2, 'sess_b', 'o', 'b', 'idle', 1, 1)`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	at := func(us int64) time.Time { return time.UnixMicro(us).UTC() }
	for i, sess := range []string{sessA, "sess_b", sessA} {
		_, err := db.ExecContext(ctx, `INSERT INTO audit (id, session_id, request_id, action, summary, at) VALUES (?, ?, ?, ?, ?, ?)`,
			i+1, idSession.enc(sess), idAsk.enc(fmt.Sprint("ask_", i)), auditActions.enc("requested"), packSummary([]byte(`{"mode":"single"}`)), i+1)
		require.NoError(t, err)
	}
	dump := func() []string {
		rs, err := db.QueryContext(ctx, `SELECT id, quote(session_id), quote(request_id), quote(action), quote(summary), at FROM audit ORDER BY id`)
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
	require.Len(t, before, 3)
	require.True(t, strings.HasPrefix(before[2], "3|"), "ids before: %v", before)

	s, err := Open(ctx, path, nil) // applies the migration
	require.NoError(t, err)
	list := func(id string) (out []string) {
		au, err := s.AuditList(ctx, id)
		require.NoError(t, err)
		for _, a := range au {
			out = append(out, fmt.Sprint(a.ID, " ", a.RequestID, " ", a.Action, " ", string(a.Summary), " ", a.At.UnixMicro()))
		}
		return out
	}
	require.Equal(t, []string{`1 ask_0 requested {"mode":"single"} 1`, `3 ask_2 requested {"mode":"single"} 3`}, list(sessA))
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: "ask_3", Action: "answered", Now: at(4)})
	}))
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: "ask_4", Action: "expired", Now: at(5)}))
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess_none", RequestID: "ask_5", Action: "rejected", Now: at(6)}))
	require.Equal(t, []string{`1 ask_0 requested {"mode":"single"} 1`, `3 ask_2 requested {"mode":"single"} 3`,
		fmt.Sprint(1<<32|1, " ask_3 answered  4"), fmt.Sprint(1<<32|2, " ask_4 expired  5")}, list(sessA), "old entries first, then the range")
	require.Equal(t, []string{`4 ask_5 rejected  6`}, list("sess_none"), "an entry of no session numbers on below 2³²")

	// A session delete keeps its entries readable; a session that takes
	// its key starts after them.
	sess, err := s.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_c", Owner: "o", Now: at(7)})
	require.NoError(t, err)
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sess.ID, RequestID: "ask_6", Action: "requested", Now: at(8)}))
	require.Equal(t, []string{fmt.Sprint(3<<32|1, " ask_6 requested  8")}, list("sess_c"))
	require.NoError(t, s.SessionDelete(ctx, "sess_c"))
	require.Equal(t, []string{`5 ask_6 requested  8`}, list("sess_c"), "kept, below 2³²")
	_, err = s.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_d", Owner: "o", Now: at(9)})
	require.NoError(t, err)
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess_d", RequestID: "ask_7", Action: "requested", Now: at(10)})
	}))
	require.Equal(t, []string{fmt.Sprint(3<<32|1, " ask_7 requested  10")}, list("sess_d"), "the key's range starts empty")

	// Prune deletes everything; the next ids come after the deleted ones.
	res, err := s.Prune(ctx, &store.PruneParams{AuditBefore: at(100)})
	require.NoError(t, err)
	require.Equal(t, int64(8), res.Audit)
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: "ask_8", Action: "requested", Now: at(11)})
	}))
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess_none", RequestID: "ask_9", Action: "rejected", Now: at(12)}))
	require.Equal(t, []string{fmt.Sprint(1<<32|3, " ask_8 requested  11")}, list(sessA))
	require.Equal(t, []string{`6 ask_9 rejected  12`}, list("sess_none"))
	require.NoError(t, s.Close())
	// Down of 00033 (auditInTrace) moves sessA's new entries back into
	// audit; 00025's Down changes no row.
	_, err = p.DownTo(ctx, v)
	require.NoError(t, err)
	after := dump()
	require.Len(t, after, 2)

	_, err = p.DownTo(ctx, v-1)
	require.NoError(t, err)
	require.Equal(t, after, dump(), "Down changes no row")
	var n int64
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM log_seqs WHERE name LIKE 'audit:%'`).Scan(&n))
	require.Zero(t, n)
	require.NoError(t, db.QueryRowContext(ctx, `SELECT last FROM log_seqs WHERE name = 'audit'`).Scan(&n))
	require.Equal(t, int64(3<<32|1), n, "the largest id given, sess_d's, pruned")
}
