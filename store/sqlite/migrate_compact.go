package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// compactVersion is the migration that gives the run and interaction
// tables (runs, interactions, interaction_assignees,
// interaction_deadlines, notify_messages, mcp_tasks) their compact shape:
// ids of agent.NewID's form as 16-byte blobs (idCodec), statuses and kinds
// as small integers (enum), an interaction's request without its row's
// columns (packRequest), and fewer indexes:
//
//   - runs and interactions are keyed by their id (WITHOUT ROWID): no
//     separate index from id to rowid;
//   - runs.open is 1 while a run is running or waiting for input and NULL
//     once it ended; the one-active-run index (docs/design.md §4) is on it,
//     so pausing and resuming a run no longer rewrite that index;
//   - interactions_resolved (every interaction by session) and
//     interactions_pending (pending ones by expiry) are gone: a session's
//     interactions are read through interactions_tool_call, the pending
//     ones through interactions_session_pending; only pending rows enter
//     an index on status;
//   - a deadline no longer copies its interaction's session (read from
//     the interaction), and has no index by session.
//
// Written in Go, not SQL, because ids and requests are re-encoded: every
// row is copied with its ids and numbers (events.ref and feed.ref that name
// an interaction follow its id). Down restores the previous shape with the
// same rows.
const compactVersion = 15

func compactMigration() *goose.Migration {
	return goose.NewGoMigration(compactVersion, &goose.GoFunc{RunTx: compactUp}, &goose.GoFunc{RunTx: compactDown})
}

// migrationOptions are the goose options every provider of this store's
// migrations takes.
func migrationOptions() []goose.ProviderOption {
	return []goose.ProviderOption{goose.WithGoMigrations(compactMigration(), sessionKeyMigration(), logsMigration(), eventsMigration(), rowsMigration(), timeoutsMigration(), eventRefsMigration(), messageIDsMigration(), auditTraceMigration()), goose.WithDisableGlobalRegistry(true)}
}

// compactTables are the tables the migration rebuilds, children first.
var compactTables = []string{"interaction_assignees", "interaction_deadlines", "notify_messages", "mcp_tasks", "interactions", "runs"}

const compactSchema = `
CREATE TABLE runs (
    id              BLOB PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES sessions (id),
    agent           TEXT NOT NULL,
    status          INTEGER NOT NULL,
    open            INTEGER,
    steps           INTEGER NOT NULL DEFAULT 0,
    invalid_streak  INTEGER NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT '',
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
) WITHOUT ROWID;
CREATE UNIQUE INDEX runs_one_active ON runs (session_id) WHERE open = 1;
CREATE INDEX runs_recoverable ON runs (lease_until) WHERE status = 1;

CREATE TABLE interactions (
    id            BLOB PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    run_id        BLOB NOT NULL,
    tool_call_id  BLOB NOT NULL,
    tool          TEXT NOT NULL,
    request       BLOB NOT NULL,
    status        INTEGER NOT NULL DEFAULT 0,
    answer        TEXT,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    resolved_at   INTEGER NOT NULL DEFAULT 0,
    receipt_jws   TEXT NOT NULL DEFAULT '',
    route         TEXT,
    decided_by    TEXT
) WITHOUT ROWID;
CREATE UNIQUE INDEX interactions_tool_call ON interactions (session_id, tool_call_id);
CREATE INDEX interactions_session_pending ON interactions (session_id, created_at) WHERE status = 0;

CREATE TABLE interaction_deadlines (
    request_id  BLOB NOT NULL,
    seq         INTEGER NOT NULL,
    kind        INTEGER NOT NULL,
    due_at      INTEGER NOT NULL,
    fired_at    INTEGER,
    data        TEXT,
    PRIMARY KEY (request_id, seq)
) WITHOUT ROWID;
CREATE INDEX interaction_deadlines_due ON interaction_deadlines (due_at) WHERE fired_at IS NULL;

CREATE TABLE notify_messages (
    request_id  BLOB NOT NULL,
    channel     TEXT NOT NULL,
    person      TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    address     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (request_id, channel, person)
) WITHOUT ROWID;
CREATE INDEX notify_messages_session ON notify_messages (session_id);

CREATE TABLE mcp_tasks (
    id            BLOB PRIMARY KEY,
    owner         TEXT NOT NULL,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    request_id    BLOB NOT NULL,
    protocol      TEXT NOT NULL,
    ttl_ms        INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    cancelled_at  INTEGER
) WITHOUT ROWID;
CREATE INDEX mcp_tasks_owner ON mcp_tasks (owner, created_at DESC, id DESC);
CREATE INDEX mcp_tasks_session ON mcp_tasks (session_id);

CREATE TABLE interaction_assignees (
    request_id  BLOB NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
    person      TEXT NOT NULL,
    pos         INTEGER NOT NULL,
    via         INTEGER NOT NULL,
    decision    INTEGER NOT NULL DEFAULT 0,
    added_at    INTEGER NOT NULL,
    decided_at  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (request_id, person)
) WITHOUT ROWID;
CREATE INDEX interaction_assignees_person ON interaction_assignees (person, request_id);
`

// textSchema is the shape before compactVersion (migrations 00001–00014).
const textSchema = `
CREATE TABLE runs (
    id              TEXT PRIMARY KEY,
    session_id      TEXT NOT NULL REFERENCES sessions (id),
    agent           TEXT NOT NULL,
    status          TEXT NOT NULL,
    steps           INTEGER NOT NULL DEFAULT 0,
    invalid_streak  INTEGER NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT '',
    lease_owner     TEXT NOT NULL DEFAULT '',
    lease_until     INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL
);
CREATE UNIQUE INDEX runs_one_active ON runs (session_id) WHERE status IN ('running', 'waiting_input');
CREATE INDEX runs_recoverable ON runs (status, lease_until) WHERE status = 'running';

CREATE TABLE interactions (
    id            TEXT PRIMARY KEY,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    run_id        TEXT NOT NULL,
    tool_call_id  TEXT NOT NULL,
    tool          TEXT NOT NULL,
    request       TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending',
    answer        TEXT,
    created_at    INTEGER NOT NULL,
    expires_at    INTEGER NOT NULL,
    resolved_at   INTEGER NOT NULL DEFAULT 0,
    receipt_jws   TEXT NOT NULL DEFAULT '',
    route         TEXT,
    decided_by    TEXT
);
CREATE UNIQUE INDEX interactions_tool_call ON interactions (session_id, tool_call_id);
CREATE INDEX interactions_pending ON interactions (status, expires_at) WHERE status = 'pending';
CREATE INDEX interactions_resolved ON interactions (session_id, resolved_at);
CREATE INDEX interactions_session_pending ON interactions (session_id, created_at) WHERE status = 'pending';

CREATE TABLE interaction_deadlines (
    request_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,
    session_id  TEXT NOT NULL,
    kind        TEXT NOT NULL,
    due_at      INTEGER NOT NULL,
    fired_at    INTEGER,
    data        TEXT,
    PRIMARY KEY (request_id, seq)
) WITHOUT ROWID;
CREATE INDEX interaction_deadlines_due ON interaction_deadlines (due_at) WHERE fired_at IS NULL;
CREATE INDEX interaction_deadlines_session ON interaction_deadlines (session_id);

CREATE TABLE notify_messages (
    request_id  TEXT NOT NULL,
    channel     TEXT NOT NULL,
    person      TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    address     TEXT NOT NULL,
    ref         TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (request_id, channel, person)
) WITHOUT ROWID;
CREATE INDEX notify_messages_session ON notify_messages (session_id);

CREATE TABLE mcp_tasks (
    id            TEXT PRIMARY KEY,
    owner         TEXT NOT NULL,
    session_id    TEXT NOT NULL REFERENCES sessions (id),
    request_id    TEXT NOT NULL,
    protocol      TEXT NOT NULL,
    ttl_ms        INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    cancelled_at  INTEGER
);
CREATE INDEX mcp_tasks_owner ON mcp_tasks (owner, created_at DESC, id DESC);
CREATE INDEX mcp_tasks_session ON mcp_tasks (session_id);

CREATE TABLE interaction_assignees (
    request_id  TEXT NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
    person      TEXT NOT NULL,
    pos         INTEGER NOT NULL,
    via         TEXT NOT NULL,
    decision    TEXT NOT NULL DEFAULT '',
    added_at    INTEGER NOT NULL,
    decided_at  INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (request_id, person)
) WITHOUT ROWID;
CREATE INDEX interaction_assignees_person ON interaction_assignees (person, request_id);
`

// rowMap turns a row of an old table (its columns' values, in the order
// the copy selects them) into the new table's values.
type rowMap func(v []any) ([]any, error)

// tableCopy copies table_old's rows into table: cols selected (from
// table_old, which may join others as o), into the columns of into.
type tableCopy struct {
	table, sel, into string
	conv             rowMap
}

func compactUp(ctx context.Context, tx *sql.Tx) error {
	str := func(v any) string {
		switch v := v.(type) {
		case string:
			return v
		case []byte:
			return string(v)
		}
		return ""
	}
	copies := []tableCopy{
		{"runs", `id, session_id, agent, status, steps, invalid_streak, error, lease_owner, lease_until, created_at, updated_at FROM runs_old`,
			`id, session_id, agent, status, steps, invalid_streak, error, lease_owner, lease_until, created_at, updated_at, open`,
			func(v []any) ([]any, error) {
				st := str(v[3])
				var open any
				if st == "running" || st == "waiting_input" {
					open = 1
				}
				v[0], v[3] = idRun.enc(str(v[0])), runStatuses.enc(st)
				return append(v, open), nil
			}},
		{"interactions", `id, session_id, run_id, tool_call_id, tool, request, status, answer, created_at, expires_at, resolved_at, receipt_jws, route, decided_by FROM interactions_old`,
			`id, session_id, run_id, tool_call_id, tool, request, status, answer, created_at, expires_at, resolved_at, receipt_jws, route, decided_by`,
			func(v []any) ([]any, error) {
				c, _ := v[8].(int64)
				x, _ := v[9].(int64)
				row := &reqRow{id: str(v[0]), sessionID: str(v[1]), runID: str(v[2]), toolCallID: str(v[3]), tool: str(v[4]), created: c, expires: x}
				v[0], v[2], v[3] = idAsk.enc(row.id), idRun.enc(row.runID), idCall.enc(row.toolCallID)
				v[5], v[6] = packRequest([]byte(str(v[5])), row), interactionStatuses.enc(str(v[6]))
				return v, nil
			}},
		{"interaction_deadlines", `request_id, seq, kind, due_at, fired_at, data FROM interaction_deadlines_old`,
			`request_id, seq, kind, due_at, fired_at, data`,
			func(v []any) ([]any, error) {
				v[0], v[2] = idAsk.enc(str(v[0])), deadlineKinds.enc(str(v[2]))
				return v, nil
			}},
		{"notify_messages", `request_id, channel, person, session_id, address, ref, created_at FROM notify_messages_old`,
			`request_id, channel, person, session_id, address, ref, created_at`,
			func(v []any) ([]any, error) {
				v[0] = idAsk.enc(str(v[0]))
				return v, nil
			}},
		{"mcp_tasks", `id, owner, session_id, request_id, protocol, ttl_ms, created_at, cancelled_at FROM mcp_tasks_old`,
			`id, owner, session_id, request_id, protocol, ttl_ms, created_at, cancelled_at`,
			func(v []any) ([]any, error) {
				v[0], v[3] = idTask.enc(str(v[0])), idAsk.enc(str(v[3]))
				return v, nil
			}},
		{"interaction_assignees", `request_id, person, pos, via, decision, added_at, decided_at FROM interaction_assignees_old`,
			`request_id, person, pos, via, decision, added_at, decided_at`,
			func(v []any) ([]any, error) {
				v[0], v[3], v[4] = idAsk.enc(str(v[0])), assigneeVias.enc(str(v[3])), assigneeDecisions.enc(str(v[4]))
				return v, nil
			}},
	}
	if err := rebuild(ctx, tx, compactTables, compactSchema, copies); err != nil {
		return fmt.Errorf("compact run and interaction tables: %w", err)
	}
	// Events and feed entries that reference an interaction name it by
	// its stored id.
	for _, t := range []struct{ table, key string }{{"events", "session_id, seq"}, {"feed", "owner, seq"}} {
		if err := mapColumn(ctx, tx, t.table, t.key, "ref", func(v any) any {
			if s, ok := v.(string); ok {
				return idAsk.enc(s)
			}
			return v
		}); err != nil {
			return err
		}
	}
	return nil
}

func compactDown(ctx context.Context, tx *sql.Tx) error {
	decode := func(c idCodec, v any) (any, error) { return c.dec(v) }
	copies := []tableCopy{
		{"runs", `id, session_id, agent, status, steps, invalid_streak, error, lease_owner, lease_until, created_at, updated_at FROM runs_old`,
			`id, session_id, agent, status, steps, invalid_streak, error, lease_owner, lease_until, created_at, updated_at`,
			func(v []any) (out []any, err error) {
				if v[0], err = decode(idRun, v[0]); err == nil {
					v[3], err = runStatuses.dec(v[3])
				}
				return v, err
			}},
		{"interactions", `o.id, o.session_id, o.run_id, o.tool_call_id, o.tool, o.request, o.status, o.answer, o.created_at, o.expires_at, o.resolved_at, o.receipt_jws, o.route, o.decided_by FROM interactions_old o`,
			`id, session_id, run_id, tool_call_id, tool, request, status, answer, created_at, expires_at, resolved_at, receipt_jws, route, decided_by`,
			func(v []any) ([]any, error) {
				var row reqRow
				var err error
				for _, d := range []struct {
					c idCodec
					i int
					s *string
				}{{idAsk, 0, &row.id}, {idRun, 2, &row.runID}, {idCall, 3, &row.toolCallID}} {
					if *d.s, err = d.c.dec(v[d.i]); err != nil {
						return nil, err
					}
					v[d.i] = *d.s
				}
				row.sessionID, _ = v[1].(string)
				row.tool, _ = v[4].(string)
				row.created, _ = v[8].(int64)
				row.expires, _ = v[9].(int64)
				req, err := unpackRequest(v[5], &row)
				if err != nil {
					return nil, err
				}
				v[5] = string(req)
				v[6], err = interactionStatuses.dec(v[6])
				return v, err
			}},
		{"interaction_deadlines", `d.request_id, d.seq, COALESCE(i.session_id, ''), d.kind, d.due_at, d.fired_at, d.data FROM interaction_deadlines_old d LEFT JOIN interactions_old i ON i.id = d.request_id`,
			`request_id, seq, session_id, kind, due_at, fired_at, data`,
			func(v []any) (out []any, err error) {
				if v[0], err = decode(idAsk, v[0]); err == nil {
					v[3], err = deadlineKinds.dec(v[3])
				}
				return v, err
			}},
		{"notify_messages", `request_id, channel, person, session_id, address, ref, created_at FROM notify_messages_old`,
			`request_id, channel, person, session_id, address, ref, created_at`,
			func(v []any) (out []any, err error) {
				v[0], err = decode(idAsk, v[0])
				return v, err
			}},
		{"mcp_tasks", `id, owner, session_id, request_id, protocol, ttl_ms, created_at, cancelled_at FROM mcp_tasks_old`,
			`id, owner, session_id, request_id, protocol, ttl_ms, created_at, cancelled_at`,
			func(v []any) (out []any, err error) {
				if v[0], err = decode(idTask, v[0]); err == nil {
					v[3], err = decode(idAsk, v[3])
				}
				return v, err
			}},
		{"interaction_assignees", `request_id, person, pos, via, decision, added_at, decided_at FROM interaction_assignees_old`,
			`request_id, person, pos, via, decision, added_at, decided_at`,
			func(v []any) (out []any, err error) {
				if v[0], err = decode(idAsk, v[0]); err == nil {
					if v[3], err = assigneeVias.dec(v[3]); err == nil {
						v[4], err = assigneeDecisions.dec(v[4])
					}
				}
				return v, err
			}},
	}
	// The deadlines' sessions are read from the old interactions, so the
	// deadlines are copied before those are dropped (rebuild copies in
	// this order and drops after).
	if err := rebuild(ctx, tx, compactTables, textSchema, copies); err != nil {
		return fmt.Errorf("restore run and interaction tables: %w", err)
	}
	for _, t := range []struct{ table, key string }{{"events", "session_id, seq"}, {"feed", "owner, seq"}} {
		if err := mapColumn(ctx, tx, t.table, t.key, "ref", func(v any) any {
			if b, ok := v.([]byte); ok {
				if s, err := idAsk.unpack(b); err == nil {
					return s
				}
			}
			return v
		}); err != nil {
			return err
		}
	}
	return nil
}

// rebuild renames tables to *_old (without rewriting the foreign
// keys that name them: the new tables take their names), drops their
// indexes, creates schema, copies every row through its tableCopy (parents
// first) and drops the old tables.
func rebuild(ctx context.Context, tx *sql.Tx, tables []string, schema string, copies []tableCopy) error {
	exec := func(q string, args ...any) error {
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("%s: %w", strings.TrimSpace(q), err)
		}
		return nil
	}
	if err := exec(`PRAGMA legacy_alter_table = ON`); err != nil {
		return err
	}
	var indexes []string
	rows, err := tx.QueryContext(ctx, `SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('`+strings.Join(tables, "', '")+`')`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return err
		}
		indexes = append(indexes, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, ix := range indexes {
		if err := exec(`DROP INDEX ` + ix); err != nil {
			return err
		}
	}
	for _, t := range tables {
		if err := exec(`ALTER TABLE ` + t + ` RENAME TO ` + t + `_old`); err != nil {
			return err
		}
	}
	if err := exec(schema); err != nil {
		return err
	}
	for _, c := range copies {
		if err := copyRows(ctx, tx, c); err != nil {
			return fmt.Errorf("copy %s: %w", c.table, err)
		}
	}
	for _, t := range tables {
		if err := exec(`DROP TABLE ` + t + `_old`); err != nil {
			return err
		}
	}
	return exec(`PRAGMA legacy_alter_table = OFF`)
}

func copyRows(ctx context.Context, tx *sql.Tx, c tableCopy) error {
	n := strings.Count(c.into, ",") + 1
	ins, err := tx.PrepareContext(ctx, `INSERT INTO `+c.table+` (`+c.into+`) VALUES (`+strings.TrimSuffix(strings.Repeat("?, ", n), ", ")+`)`)
	if err != nil {
		return err
	}
	defer ins.Close()
	// Row by row: the old table is read while the new one is written (one
	// connection, one transaction), so a large table is never held in
	// memory.
	rows, err := tx.QueryContext(ctx, `SELECT `+c.sel)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	v := make([]any, len(cols))
	ptr := make([]any, len(cols))
	for rows.Next() {
		for i := range v {
			v[i], ptr[i] = nil, &v[i]
		}
		if err := rows.Scan(ptr...); err != nil {
			return err
		}
		out, err := c.conv(v)
		if err != nil {
			return err
		}
		if _, err := ins.ExecContext(ctx, out...); err != nil {
			return err
		}
	}
	return rows.Err()
}

// mapColumn rewrites column col of every row of table (primary key key)
// where it is not NULL, through f.
func mapColumn(ctx context.Context, tx *sql.Tx, table, key, col string, f func(any) any) error {
	keys := strings.Split(key, ", ")
	rows, err := tx.QueryContext(ctx, `SELECT `+key+`, `+col+` FROM `+table+` WHERE `+col+` IS NOT NULL`)
	if err != nil {
		return fmt.Errorf("%s.%s: %w", table, col, err)
	}
	type change struct{ args []any }
	var changes []change
	for rows.Next() {
		v := make([]any, len(keys)+1)
		ptr := make([]any, len(v))
		for i := range v {
			ptr[i] = &v[i]
		}
		if err := rows.Scan(ptr...); err != nil {
			rows.Close()
			return err
		}
		nv := f(v[len(keys)])
		if fmt.Sprint(nv) == fmt.Sprint(v[len(keys)]) {
			continue
		}
		changes = append(changes, change{append([]any{nv}, v[:len(keys)]...)})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	where := strings.Join(keys, " = ? AND ") + " = ?"
	for _, c := range changes {
		if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET `+col+` = ? WHERE `+where, c.args...); err != nil {
			return fmt.Errorf("%s.%s: %w", table, col, err)
		}
	}
	return nil
}
