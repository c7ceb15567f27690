package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// eventsVersion is the migration that gives the events table its compact
// shape:
//
//   - a rowid table keyed by k = sk<<32 + seq (eventKey) instead of a
//     WITHOUT ROWID table keyed by (sk, seq): the interior pages of a
//     WITHOUT ROWID table hold whole rows, and appending to one rebalances
//     the last leaves with their parent every few commits, where a rowid
//     table appends a leaf and one integer to its parent;
//   - the name is a small integer (eventNames), the run id a 16-byte blob
//     (idCodec);
//   - the data is stored packed (packEvent without eventDict, which
//     migration 00024 added): the quoted session id, run id and message
//     reference the row names are a byte each, other quoted ids 17 bytes,
//     rebuilt on read byte for byte.
//
// It runs in goose's transaction, with the version's record: a process
// killed during it leaves the old table. Down restores the previous shape
// with the same rows.
const eventsVersion = 19

func eventsMigration() *goose.Migration {
	return goose.NewGoMigration(eventsVersion, &goose.GoFunc{RunTx: eventsUp}, &goose.GoFunc{RunTx: eventsDown})
}

const eventsSchema = `
CREATE TABLE events_new (
    k           INTEGER PRIMARY KEY,
    name        BLOB NOT NULL,
    data        BLOB NOT NULL,
    ref         BLOB,
    run_id      BLOB,
    created_at  INTEGER NOT NULL
)`

const eventsOldSchema = `
CREATE TABLE events_new (
    sk          INTEGER NOT NULL,
    seq         INTEGER NOT NULL,
    name        TEXT NOT NULL,
    data        TEXT NOT NULL,
    created_at  INTEGER NOT NULL,
    ref         TEXT,
    run_id      TEXT,
    PRIMARY KEY (sk, seq)
) WITHOUT ROWID`

// eventsCopy copies every events row into events_new through conv, which
// is given the row's session id ("" for a row whose session is gone) and
// the row's values in the order of sel's columns after the session id, and
// returns the values to insert; then events_new replaces events.
func eventsCopy(ctx context.Context, tx *sql.Tx, schema, sel, ins string, conv func(session string, v []any) ([]any, error)) error {
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	rows, err := tx.QueryContext(ctx, sel)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	var out [][]any
	for rows.Next() {
		cols, _ := rows.Columns()
		v := make([]any, len(cols))
		ptr := make([]any, len(cols))
		for i := range v {
			ptr[i] = &v[i]
		}
		if err := rows.Scan(ptr...); err != nil {
			rows.Close()
			return fmt.Errorf("events: %w", err)
		}
		session, _ := v[0].(string)
		if b, ok := v[0].([]byte); ok {
			session = string(b)
		}
		w, err := conv(session, v[1:])
		if err != nil {
			rows.Close()
			return err
		}
		out = append(out, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("events: %w", err)
	}
	st, err := tx.PrepareContext(ctx, ins)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	defer st.Close()
	for _, w := range out {
		if _, err := st.ExecContext(ctx, w...); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}
	for _, q := range []string{`DROP TABLE events`, `ALTER TABLE events_new RENAME TO events`} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("events: %w", err)
		}
	}
	return nil
}

// text is v as a string: text and blobs as their bytes, NULL "".
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

func eventsUp(ctx context.Context, tx *sql.Tx) error {
	return eventsCopy(ctx, tx, eventsSchema,
		`SELECT s.id, e.sk, e.seq, e.name, e.data, e.ref, e.run_id, e.created_at FROM events e LEFT JOIN sessions s ON s.k = e.sk ORDER BY e.sk, e.seq`,
		`INSERT INTO events_new (k, name, data, ref, run_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		func(session string, v []any) ([]any, error) {
			sk, _ := v[0].(int64)
			seq, _ := v[1].(int64)
			k, err := eventKey(sk, seq)
			if err != nil {
				return nil, err
			}
			ref, run := v[4], text(v[5])
			var mref string
			if r, ok := ref.(string); ok {
				mref = r
			}
			var runv any
			if run != "" {
				runv = idRun.enc(run)
			}
			return []any{k, eventNames.enc(text(v[2])), packEvent([]byte(text(v[3])), session, run, mref, false), ref, runv, v[6]}, nil
		})
}

func eventsDown(ctx context.Context, tx *sql.Tx) error {
	return eventsCopy(ctx, tx, eventsOldSchema,
		`SELECT s.id, e.k, e.name, e.data, e.ref, e.run_id, e.created_at FROM events e LEFT JOIN sessions s ON s.k = e.k >> 32 ORDER BY e.k`,
		`INSERT INTO events_new (sk, seq, name, data, created_at, ref, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		func(session string, v []any) ([]any, error) {
			k, _ := v[0].(int64)
			name, err := eventNames.dec(v[1])
			if err != nil {
				return nil, err
			}
			run, err := idRun.dec(v[4])
			if err != nil {
				return nil, err
			}
			ref := v[3]
			mref, _ := ref.(string)
			data, err := unpackEventData(v[2], session, run, mref)
			if err != nil {
				return nil, err
			}
			var runv any
			if run != "" {
				runv = run
			}
			return []any{k >> 32, k & (1<<32 - 1), name, string(data), v[5], ref, runv}, nil
		})
}
