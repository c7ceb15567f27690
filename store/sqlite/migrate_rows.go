package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// rowsVersion is the migration that clusters a session's messages in the
// messages table itself and lets a run's pause and resume set its
// session's status:
//
//   - a message's seq (its rowid) is its session's key shifted left by 32
//     bits plus its number in the session (messageSeqLo, messageSeqHi), so
//     a session's messages are one range of the table's own b-tree: the
//     index on (sk, seq) is gone, and a commit that adds a message no
//     longer rewrites a leaf of it. Numbers already stored are renumbered
//     in their order within each session (seq orders a session's
//     messages; nothing else names it);
//   - the trigger runs_session_status sets the session's status and
//     updated_at to the run's when a run's status changes (RunPause,
//     RunResume, RunFinish), in the run's statement: the session's row is
//     written as before, without a statement of its own. Its CASE is
//     runStatuses (compact.go) in order; a status stored as its text is
//     copied as it is.
//
// It runs in goose's transaction, which records the version in the same
// commit; each direction also looks at the schema first and does nothing
// when it is already there.
const rowsVersion = 20

func rowsMigration() *goose.Migration {
	return goose.NewGoMigration(rowsVersion,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return runRows(ctx, tx, rowsUp, false) }},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return runRows(ctx, tx, rowsDown, true) }})
}

// runRows runs script unless messages already lacks (up) or has (down) its
// index by session.
func runRows(ctx context.Context, tx *sql.Tx, script string, down bool) error {
	var indexed bool
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM sqlite_schema WHERE type = 'index' AND name = 'messages_session'`).Scan(&indexed); err != nil {
		return fmt.Errorf("rows: read the schema: %w", err)
	}
	if indexed == down {
		return nil
	}
	if _, err := tx.ExecContext(ctx, script); err != nil {
		return fmt.Errorf("rows: %w", err)
	}
	return nil
}

const rowsUp = `
CREATE TABLE messages_new (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    sk            INTEGER NOT NULL REFERENCES sessions (k),
    run_id        TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    tool_calls    TEXT,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    name          TEXT NOT NULL DEFAULT '',
    is_error      INTEGER NOT NULL DEFAULT 0,
    metadata      TEXT,
    parent_id     TEXT NOT NULL DEFAULT '',
    call_index    INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);
INSERT INTO messages_new (seq, id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at)
    SELECT (sk << 32) + ROW_NUMBER() OVER (PARTITION BY sk ORDER BY seq), id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at
    FROM messages ORDER BY sk, seq;
DROP TABLE messages;
ALTER TABLE messages_new RENAME TO messages;
-- Exactly one ToolResult per tool call (docs/design.md §3).
CREATE UNIQUE INDEX messages_one_result ON messages (sk, tool_call_id) WHERE role = 'tool';

CREATE TRIGGER runs_session_status AFTER UPDATE OF status ON runs WHEN NEW.status IS NOT OLD.status
BEGIN
    UPDATE sessions SET updated_at = NEW.updated_at, status = CASE NEW.status WHEN 1 THEN 'running' WHEN 2 THEN 'waiting_input'
        WHEN 3 THEN 'completed' WHEN 4 THEN 'cancelled' WHEN 5 THEN 'expired' WHEN 6 THEN 'failed' ELSE NEW.status END
        WHERE id = NEW.session_id;
END;
`

const rowsDown = `
DROP TRIGGER IF EXISTS runs_session_status;
CREATE TABLE messages_old (
    seq           INTEGER PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    sk            INTEGER NOT NULL REFERENCES sessions (k),
    run_id        TEXT NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    tool_calls    TEXT,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    name          TEXT NOT NULL DEFAULT '',
    is_error      INTEGER NOT NULL DEFAULT 0,
    metadata      TEXT,
    parent_id     TEXT NOT NULL DEFAULT '',
    call_index    INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
);
INSERT INTO messages_old (seq, id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at)
    SELECT ROW_NUMBER() OVER (ORDER BY seq), id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at
    FROM messages ORDER BY seq;
DROP TABLE messages;
ALTER TABLE messages_old RENAME TO messages;
CREATE INDEX messages_session ON messages (sk, seq);
CREATE UNIQUE INDEX messages_one_result ON messages (sk, tool_call_id) WHERE role = 'tool';
`
