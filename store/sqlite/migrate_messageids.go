package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// messageIDsVersion is the migration that stores a message's ids compactly
// and drops the message-id index:
//
//   - id and parent_id are idMessage's, run_id idRun's (a 16-byte blob for
//     an id of agent.NewID's form, else the text), in columns declared
//     BLOB;
//   - id is no longer UNIQUE: nothing finds a message by its id but an
//     event's reference, which reads the session's range
//     (rowBuf.messageRef), so the index sqlite_autoindex_messages_1 cost
//     a b-tree written by every message and read by nothing. Ids stay
//     unique as agent.NewID makes them (16 random bytes).
//
// It rebuilds the table in goose's transaction, with the version's record:
// a process killed during it leaves the old table. Down restores the text
// columns and the UNIQUE id.
const messageIDsVersion = 26

func messageIDsMigration() *goose.Migration {
	return goose.NewGoMigration(messageIDsVersion,
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error {
			return messageIDsCopy(ctx, tx, messagesCompactSchema, true)
		}},
		&goose.GoFunc{RunTx: func(ctx context.Context, tx *sql.Tx) error { return messageIDsCopy(ctx, tx, messagesTextSchema, false) }})
}

const messagesCompactSchema = `
CREATE TABLE messages_new (
    seq           INTEGER PRIMARY KEY,
    id            BLOB NOT NULL,
    sk            INTEGER NOT NULL REFERENCES sessions (k),
    run_id        BLOB NOT NULL DEFAULT '',
    role          TEXT NOT NULL,
    content       TEXT NOT NULL DEFAULT '',
    tool_calls    TEXT,
    tool_call_id  TEXT NOT NULL DEFAULT '',
    name          TEXT NOT NULL DEFAULT '',
    is_error      INTEGER NOT NULL DEFAULT 0,
    metadata      TEXT,
    parent_id     BLOB NOT NULL DEFAULT '',
    call_index    INTEGER NOT NULL DEFAULT 0,
    created_at    INTEGER NOT NULL
)`

const messagesTextSchema = `
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
)`

// messageIDsCopy copies messages into schema's messages_new with their
// ids encoded (enc) or decoded, and puts it in messages' place.
func messageIDsCopy(ctx context.Context, tx *sql.Tx, schema string, enc bool) error {
	const cols = `seq, id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at`
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("message ids: %w", err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT seq, id, run_id, parent_id FROM messages ORDER BY seq`)
	if err != nil {
		return fmt.Errorf("message ids: %w", err)
	}
	type row struct {
		seq               int64
		id, run, parentID any
	}
	var out []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.seq, &r.id, &r.run, &r.parentID); err != nil {
			rows.Close()
			return fmt.Errorf("message ids: %w", err)
		}
		for _, c := range []struct {
			v     *any
			codec idCodec
		}{{&r.id, idMessage}, {&r.run, idRun}, {&r.parentID, idMessage}} {
			s, err := c.codec.dec(*c.v)
			if err != nil {
				rows.Close()
				return err
			}
			if *c.v = s; enc {
				*c.v = c.codec.enc(s)
			}
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("message ids: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO messages_new (`+cols+`) SELECT `+cols+` FROM messages ORDER BY seq`); err != nil {
		return fmt.Errorf("message ids: %w", err)
	}
	st, err := tx.PrepareContext(ctx, `UPDATE messages_new SET id = ?, run_id = ?, parent_id = ? WHERE seq = ?`)
	if err != nil {
		return fmt.Errorf("message ids: %w", err)
	}
	defer st.Close()
	for _, r := range out {
		if _, err := st.ExecContext(ctx, r.id, r.run, r.parentID, r.seq); err != nil {
			return fmt.Errorf("message ids: %w", err)
		}
	}
	for _, q := range []string{`DROP TABLE messages`, `ALTER TABLE messages_new RENAME TO messages`,
		// Exactly one ToolResult per tool call (docs/design.md §3).
		`CREATE UNIQUE INDEX messages_one_result ON messages (sk, tool_call_id) WHERE role = 'tool'`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("message ids: %w", err)
		}
	}
	return nil
}
