package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// auditTraceVersion is the migration that stores a session's new audit
// entries in the trace's b-tree (rowbuf.go, auditInTrace): a commit that
// writes both a trace entry and an audit entry (a question, its answer)
// writes one table, one statement and one leaf fewer. It adds the audit's
// own columns to trace (request_id, tool_call_id, action, reason; NULL in
// a trace entry); an audit entry there has kind auditKind and its summary
// in data. Rows stay where they are: the audit entries stored before,
// those of no session and those of a deleted session stay in audit.
//
// Down moves the entries of trace back into audit with their ids (a
// session's range numbers its trace and audit entries from one counter, so
// no id is taken in audit) and drops the columns; it runs in goose's
// transaction, with the version's record.
const auditTraceVersion = 33

func auditTraceMigration() *goose.Migration {
	return goose.NewGoMigration(auditTraceVersion, &goose.GoFunc{RunTx: auditTraceUp}, &goose.GoFunc{RunTx: auditTraceDown})
}

// auditTraceColumns are the columns the migration adds to trace.
var auditTraceColumns = []string{"request_id", "tool_call_id", "action", "reason"}

func auditTraceUp(ctx context.Context, tx *sql.Tx) error {
	for _, c := range auditTraceColumns {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE trace ADD COLUMN `+c); err != nil {
			return fmt.Errorf("audit in trace: %w", err)
		}
	}
	return nil
}

func auditTraceDown(ctx context.Context, tx *sql.Tx) error {
	// audit names the session by its id (idSession's form), trace by its
	// key: the ids are encoded here.
	rows, err := tx.QueryContext(ctx, `SELECT t.id, COALESCE(s.id, '') FROM trace t LEFT JOIN sessions s ON s.k = t.id >> 32 WHERE t.kind = `+auditKind)
	if err != nil {
		return fmt.Errorf("audit in trace: down: %w", err)
	}
	var ids []int64
	var sessions []string
	for rows.Next() {
		var id int64
		var s string
		if err := rows.Scan(&id, &s); err != nil {
			rows.Close()
			return fmt.Errorf("audit in trace: down: %w", err)
		}
		ids, sessions = append(ids, id), append(sessions, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("audit in trace: down: %w", err)
	}
	for i, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at)
			SELECT id, ?, request_id, tool_call_id, run_id, action, reason, NULLIF(data, ''), at FROM trace WHERE id = ?`, idSession.enc(sessions[i]), id); err != nil {
			return fmt.Errorf("audit in trace: down: %w", err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM trace WHERE kind = `+auditKind); err != nil {
		return fmt.Errorf("audit in trace: down: %w", err)
	}
	for _, c := range auditTraceColumns {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE trace DROP COLUMN `+c); err != nil {
			return fmt.Errorf("audit in trace: down: %w", err)
		}
	}
	return nil
}
