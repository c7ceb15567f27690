package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/pressly/goose/v3"
)

// logsVersion is the migration that gives the trace and the audit a
// compact shape:
//
//   - a trace entry's rowid is its session's key (sessions.k) times 2^32
//     plus its number in the session (traceID): a session's entries sit
//     together, found by a rowid range without an index (trace_session and
//     the sk column are gone), and the newest session's entries append to
//     the end of the table. An entry's number is one past the session's
//     last (nextTrace); the entries written before keep their ids as
//     their numbers;
//   - the audit's id is no longer AUTOINCREMENT, so a commit no longer
//     rewrites sqlite_sequence: the writer gives the ids (nextAudit), one
//     past the larger of the last row's and log_seqs.last of 'audit', which
//     keeps the largest id Prune deleted (and sqlite_sequence's value at
//     the migration), so an id is never given twice;
//   - run, session, question and tool call ids of agent.NewID's form are
//     16-byte blobs (idCodec), a trace entry's data may be packed
//     (packTrace; entries written before stay text), trace kinds, audit
//     actions and reasons small
//     integers (enum; the columns have no type, so that a value the enum
//     does not name is kept as the text it is).
//
// Written in Go because ids are re-encoded. It runs in goose's transaction,
// which records the version: a process killed before the commit leaves the
// old shape, after it the new one recorded. Down restores the previous
// shape with the same rows (trace entries renumbered in each session's
// order: ids are no longer unique across sessions).
const logsVersion = 17

func logsMigration() *goose.Migration {
	return goose.NewGoMigration(logsVersion, &goose.GoFunc{RunTx: logsUp}, &goose.GoFunc{RunTx: logsDown})
}

// logTables are the tables logsMigration rebuilds.
var logTables = []string{"trace", "audit"}

const logsSchema = `
CREATE TABLE trace (
    id      INTEGER PRIMARY KEY,
    run_id  BLOB NOT NULL DEFAULT '',
    kind    NOT NULL,
    data    TEXT NOT NULL,
    at      INTEGER NOT NULL
);

CREATE TABLE audit (
    id            INTEGER PRIMARY KEY,
    session_id    BLOB NOT NULL,
    request_id    BLOB NOT NULL,
    tool_call_id  BLOB NOT NULL DEFAULT '',
    run_id        BLOB NOT NULL DEFAULT '',
    action        NOT NULL,
    reason        NOT NULL DEFAULT 0,
    summary       TEXT,
    at            INTEGER NOT NULL
);
CREATE INDEX audit_session ON audit (session_id, id);

CREATE TABLE log_seqs (
    name  TEXT PRIMARY KEY,
    last  INTEGER NOT NULL
) WITHOUT ROWID;
`

const logsTextSchema = `
CREATE TABLE trace (
    id          INTEGER PRIMARY KEY,
    sk          INTEGER NOT NULL,
    run_id      TEXT NOT NULL DEFAULT '',
    kind        TEXT NOT NULL,
    data        TEXT NOT NULL,
    at          INTEGER NOT NULL
);
CREATE INDEX trace_session ON trace (sk, id);

CREATE TABLE audit (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id    TEXT NOT NULL,
    request_id    TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    run_id        TEXT NOT NULL DEFAULT '',
    action        TEXT NOT NULL,
    reason        TEXT NOT NULL DEFAULT '',
    summary       TEXT,
    at            INTEGER NOT NULL
);
CREATE INDEX audit_session ON audit (session_id, id);
`

func logsUp(ctx context.Context, tx *sql.Tx) error {
	// The audit's AUTOINCREMENT high-water mark (ids of deleted rows).
	var hwm int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'audit'), 0)`).Scan(&hwm); err != nil {
		return fmt.Errorf("compact trace and audit: %w", err)
	}
	copies := []tableCopy{
		{"trace", `sk, id, run_id, kind, data, at FROM trace_old`, `id, run_id, kind, data, at`,
			func(v []any) ([]any, error) {
				sk, _ := v[0].(int64)
				n, _ := v[1].(int64)
				if n < 0 || n > traceMax {
					return nil, fmt.Errorf("trace entry %d: more than a session's entries can number", n)
				}
				return []any{traceID(sk, n), idRun.enc(str(v[2])), traceKinds.enc(str(v[3])), v[4], v[5]}, nil
			}},
		{"audit", `id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at FROM audit_old`,
			`id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at`,
			func(v []any) ([]any, error) {
				v[1], v[2], v[3], v[4] = idSession.enc(str(v[1])), idAsk.enc(str(v[2])), idCall.enc(str(v[3])), idRun.enc(str(v[4]))
				v[5], v[6] = auditActions.enc(str(v[5])), auditReasons.enc(str(v[6]))
				return v, nil
			}},
	}
	if err := rebuild(ctx, tx, logTables, logsSchema, copies); err != nil {
		return fmt.Errorf("compact trace and audit: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO log_seqs (name, last) VALUES ('audit', ?)`, hwm); err != nil {
		return fmt.Errorf("compact trace and audit: %w", err)
	}
	return nil
}

func logsDown(ctx context.Context, tx *sql.Tx) error {
	var hwm int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE((SELECT last FROM log_seqs WHERE name = 'audit'), 0)`).Scan(&hwm); err != nil {
		return fmt.Errorf("restore trace and audit: %w", err)
	}
	copies := []tableCopy{
		// Renumbered (the rowid), in each session's order.
		{"trace", `id >> 32, run_id, kind, data, at FROM trace_old ORDER BY id`, `sk, run_id, kind, data, at`,
			func(v []any) (out []any, err error) {
				if v[1], err = idRun.dec(v[1]); err == nil {
					if v[2], err = traceKinds.dec(v[2]); err == nil {
						var data json.RawMessage
						data, err = unpackTrace(v[3])
						v[3] = string(data)
					}
				}
				return v, err
			}},
		{"audit", `id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at FROM audit_old`,
			`id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at`,
			func(v []any) (out []any, err error) {
				for i, c := range []idCodec{idSession, idAsk, idCall, idRun} {
					if v[i+1], err = c.dec(v[i+1]); err != nil {
						return nil, err
					}
				}
				if v[5], err = auditActions.dec(v[5]); err == nil {
					if v[6], err = auditReasons.dec(v[6]); err == nil && v[7] != nil {
						var sum json.RawMessage
						sum, err = unpackSummary(v[7])
						v[7] = string(sum)
					}
				}
				return v, err
			}},
	}
	if err := rebuild(ctx, tx, logTables, logsTextSchema, copies); err != nil {
		return fmt.Errorf("restore trace and audit: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `DROP TABLE log_seqs`); err != nil {
		return fmt.Errorf("restore trace and audit: %w", err)
	}
	for _, q := range []string{
		// The copy left sqlite_sequence at the largest id; the deleted
		// ones count too.
		`UPDATE sqlite_sequence SET seq = MAX(seq, ?1) WHERE name = 'audit'`,
		`INSERT INTO sqlite_sequence (name, seq) SELECT 'audit', ?1 WHERE ?1 > 0 AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'audit')`,
	} {
		if _, err := tx.ExecContext(ctx, q, hwm); err != nil {
			return fmt.Errorf("restore trace and audit: %s: %w", q, err)
		}
	}
	return nil
}

// str is a stored text value as a string ("" for NULL and other types).
func str(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}
