package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// auditLines are a session's audit entries as AuditList gives them.
func auditLines(t *testing.T, au []*store.AuditEntry) (out []string) {
	t.Helper()
	for _, a := range au {
		out = append(out, fmt.Sprint(a.ID, " ", a.SessionID, " ", a.RequestID, " ", a.ToolCallID, " ", a.RunID, " ", a.Action, " ", a.Reason, " ", string(a.Summary), " ", a.At.UnixMicro()))
	}
	return out
}

// auditListBefore00033 is AuditList as the release before migration 00033
// read it: the session's range and the entries below 2³² of audit.
func auditListBefore00033(t *testing.T, db *sql.DB, sessionID string) []string {
	t.Helper()
	const cols = `SELECT id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at FROM audit`
	rows, err := db.Query(cols+` WHERE `+auditOf(`(SELECT k FROM sessions WHERE id = ?2)`)+` AND session_id = ?1
		UNION ALL `+cols+` WHERE session_id = ?1 AND `+auditOld+` ORDER BY id`, idSession.enc(sessionID), sessionID)
	require.NoError(t, err)
	defer rows.Close()
	var au []*store.AuditEntry
	for rows.Next() {
		a := &store.AuditEntry{}
		var sum any
		var at int64
		require.NoError(t, rows.Scan(&a.ID, idSession.into(&a.SessionID), idAsk.into(&a.RequestID), idCall.into(&a.ToolCallID), idRun.into(&a.RunID),
			auditActions.into(&a.Action), auditReasons.into(&a.Reason), &sum, &at))
		a.Summary, err = unpackSummary(sum)
		require.NoError(t, err)
		a.At = tm(at)
		au = append(au, a)
	}
	require.NoError(t, rows.Err())
	return auditLines(t, au)
}

// Migration 00033 (auditTraceMigration) stores a session's new audit
// entries in trace, numbered with its trace entries: the entries stored
// before (a range of audit, below 2³², of no session) read back as they
// were and before the new ones; TraceList lists no audit entry; Prune of
// a session's trace keeps its audit entries, Prune of the audit removes
// them from both tables and no id is given twice; a session delete keeps
// them readable; Down moves them back into audit, where the release before
// reads them, and Up again reads the same.
func TestMigrationAuditTrace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, p, path := migratedTo(t, auditTraceVersion-1)
	const (
		sessA = "sess_abcdefghijklmnopqrstuvwx2a"
		runA  = "run_abcdefghijklmnopqrstuvwx2a"
		askA  = "ask_abcdefghijklmnopqrstuvwx2a"
		callA = "call_abcdefghijklmnopqrstuvwx2a"
	)
	at := func(us int64) time.Time { return time.UnixMicro(us).UTC() }
	// As the release before stored them: two trace entries and two audit
	// entries of sessA's range (numbered apart), an audit entry of sessA
	// from before its range, one of no session.
	for _, q := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO sessions (k, id, owner, title, status, created_at, updated_at) VALUES (1, ?, 'o', 'a', 'idle', 1, 1), (2, 'sess_b', 'o', 'b', 'idle', 1, 1)`, []any{sessA}},
		{`INSERT INTO trace (id, run_id, kind, data, at) VALUES (?, ?, ?, ?, 1), (?, ?, ?, ?, 2)`, []any{1<<32 | 1, idRun.enc(runA), traceKinds.enc("model_call"), `{"a":1}`,
			1<<32 | 2, idRun.enc(runA), traceKinds.enc("interaction"), `{"b":2}`}},
		{`INSERT INTO audit (id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at) VALUES
			(1, ?1, ?2, ?3, ?4, ?5, 0, ?6, 1), (?7, ?1, ?2, ?3, ?4, ?5, 0, NULL, 2), (?8, ?1, ?2, '', ?4, ?9, ?10, NULL, 3), (2, 'sess_none', 'ask_x', '', '', ?9, 0, NULL, 4)`,
			[]any{idSession.enc(sessA), idAsk.enc(askA), idCall.enc(callA), idRun.enc(runA), auditActions.enc("requested"), packSummary([]byte(`{"mode":"single"}`)),
				1<<32 | 1, 1<<32 | 2, auditActions.enc("rejected"), auditReasons.enc("duplicate")}},
	} {
		_, err := db.ExecContext(ctx, q.q, q.args...)
		require.NoError(t, err, q.q)
	}
	old := auditListBefore00033(t, db, sessA)
	require.Len(t, old, 3)

	s, err := Open(ctx, path, nil) // applies the migration
	require.NoError(t, err)
	list := func(id string) []string {
		au, err := s.AuditList(ctx, id)
		require.NoError(t, err)
		return auditLines(t, au)
	}
	traceIDs := func(id string) (out []string) {
		tr, err := s.TraceList(ctx, id)
		require.NoError(t, err)
		for _, e := range tr {
			out = append(out, fmt.Sprint(e.ID, " ", e.Kind))
		}
		return out
	}
	require.Equal(t, old, list(sessA), "the entries stored before read back as they were")
	require.Equal(t, []string{"1 model_call", "2 interaction"}, traceIDs(sessA))

	// New entries in and outside a transaction: one counter past the
	// range's last trace entry and its last audit entry.
	summary := `{"mode":"single","selections":["safe"],"selectionCount":1,"customInputLen":0}`
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		if err := tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: sessA, RunID: runA, Kind: "interaction", Data: []byte(`{}`), Now: at(5)}); err != nil {
			return err
		}
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, ToolCallID: callA, RunID: runA, Action: "answered", Summary: []byte(summary), Now: at(5)})
	}))
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, Action: "rejected", Reason: "duplicate", Now: at(6)}))
	require.NoError(t, s.TraceInsert(ctx, &store.TraceInsertParams{SessionID: sessA, Kind: "tool_result", Data: []byte(`{}`), Now: at(7)}))
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess_none", RequestID: "ask_y", Action: "rejected", Now: at(8)}))
	newA := []string{
		fmt.Sprint(1<<32|4, " ", sessA, " ", askA, " ", callA, " ", runA, " answered  ", summary, " 5"),
		fmt.Sprint(1<<32|5, " ", sessA, " ", askA, "   rejected duplicate  6"),
	}
	require.Equal(t, append(append([]string{}, old...), newA...), list(sessA), "old entries first, then the range")
	require.Equal(t, []string{"1 model_call", "2 interaction", "3 interaction", "6 tool_result"}, traceIDs(sessA), "no audit entry in the trace")
	require.Equal(t, []string{"2 sess_none ask_x   rejected   4", "3 sess_none ask_y   rejected   8"}, list("sess_none"), "an entry of no session stays in audit")
	var n int
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM trace WHERE kind = -1`).Scan(&n))
	require.Equal(t, 2, n, "a session's new audit entries are rows of trace")

	// A session's trace pruned: its audit entries stay, and the numbers go
	// on past them (a trace entry's number may be given again once all
	// the session's trace entries are deleted, as before).
	res, err := s.Prune(ctx, &store.PruneParams{EventsBefore: at(100)})
	require.NoError(t, err)
	require.Equal(t, int64(4), res.Trace)
	require.Empty(t, traceIDs(sessA))
	require.Equal(t, append(append([]string{}, old...), newA...), list(sessA))
	res, err = s.Prune(ctx, &store.PruneParams{EventsBefore: at(100)})
	require.NoError(t, err)
	require.Zero(t, res.Trace, "a session with only audit entries is not pruned again")
	require.NoError(t, s.TraceInsert(ctx, &store.TraceInsertParams{SessionID: sessA, Kind: "model_call", Data: []byte(`{}`), Now: at(9)}))
	require.Equal(t, []string{"6 model_call"}, traceIDs(sessA))

	// A session delete keeps sess_b's entries readable, below 2³².
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess_b", RequestID: "ask_b", Action: "requested", Now: at(10)})
	}))
	require.Equal(t, []string{fmt.Sprint(2<<32|1, " sess_b ask_b   requested   10")}, list("sess_b"))
	require.NoError(t, s.SessionDelete(ctx, "sess_b"))
	require.Equal(t, []string{"4 sess_b ask_b   requested   10"}, list("sess_b"))

	// Prune of the audit deletes from both tables; the next id comes after.
	res, err = s.Prune(ctx, &store.PruneParams{AuditBefore: at(6)})
	require.NoError(t, err)
	require.Equal(t, int64(5), res.Audit, "audit's four before 6 and sessA's answer")
	require.Equal(t, []string{newA[1]}, list(sessA))
	res, err = s.Prune(ctx, &store.PruneParams{AuditBefore: at(7)})
	require.NoError(t, err)
	require.Equal(t, int64(1), res.Audit)
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, Action: "expired", Now: at(11)}))
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, Action: "cancelled", Now: at(12)})
	}))
	lastA := list(sessA)
	require.Equal(t, []string{fmt.Sprint(1<<32|7, " ", sessA, " ", askA, "   expired   11"), fmt.Sprint(1<<32|8, " ", sessA, " ", askA, "   cancelled   12")}, lastA,
		"after the largest deleted (5, Prune's mark) and the trace's last (6)")
	noneB := list("sess_b")
	require.NoError(t, s.Close())

	// Down: the entries back in audit with their ids, read by the release
	// before; the trace as it was.
	_, err = p.DownTo(ctx, auditTraceVersion-1)
	require.NoError(t, err)
	require.Equal(t, lastA, auditListBefore00033(t, db, sessA))
	require.Equal(t, noneB, auditListBefore00033(t, db, "sess_b"))
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pragma_table_info('trace')`).Scan(&n))
	require.Equal(t, 5, n, "trace's own columns")
	require.NoError(t, db.QueryRowContext(ctx, `SELECT COUNT(*) FROM trace`).Scan(&n))
	require.Equal(t, 1, n)

	// Up again reads the same.
	s, err = Open(ctx, path, nil)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, lastA, list(sessA))
	require.Equal(t, []string{"6 model_call"}, traceIDs(sessA))
	require.NoError(t, s.AuditInsert(ctx, &store.AuditInsertParams{SessionID: sessA, RequestID: askA, Action: "answered", Now: at(13)}))
	require.Equal(t, fmt.Sprint(1<<32|9, " ", sessA, " ", askA, "   answered   13"), list(sessA)[2])
}
