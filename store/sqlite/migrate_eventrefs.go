package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// eventRefsVersion is the migration that shortens the events' data and
// their references to messages:
//
//   - an event's reference to a message of its session is the message's
//     number in the session, an integer (rowBuf.messageRef), not the
//     message's 30-character id: EventList finds the message by its seq
//     (the session's key and the number, eventRefSeq), not by the
//     message-id index. A stored reference to another session's message
//     becomes that message's whole seq (at least 2³²); one to no message
//     stays text (and reads as it did: the data without the message's
//     part);
//   - an event's data packs eventDict's strings, a byte each (new rows;
//     the rows before are left as they are, which reads the same).
//
// Up is one UPDATE in goose's transaction, with the version's record: a
// process killed during it leaves the rows as they were. Down gives the
// references back their ids and stores the data without eventDict's
// bytes, the rows the releases before it read.
const eventRefsVersion = 24

func eventRefsMigration() *goose.Migration {
	return goose.NewGoMigration(eventRefsVersion, &goose.GoFunc{RunTx: eventRefsUp}, &goose.GoFunc{RunTx: eventRefsDown})
}

func eventRefsUp(ctx context.Context, tx *sql.Tx) error {
	// A message of another session (which EventAppendParams.MessageRef
	// rules out, but which the reference by id read) by its whole seq.
	_, err := tx.ExecContext(ctx, `UPDATE events SET ref = (SELECT CASE WHEN m.seq >> 32 = events.k >> 32 THEN m.seq & 4294967295 ELSE m.seq END
			FROM messages m WHERE m.id = events.ref)
		WHERE typeof(ref) = 'text' AND EXISTS (SELECT 1 FROM messages m WHERE m.id = events.ref AND m.seq >= 4294967296)`)
	if err != nil {
		return fmt.Errorf("event refs: %w", err)
	}
	return nil
}

// eventRefSeq is the SQL expression of the seq of the message events row e
// references by number: its number in e's session, or its whole seq.
func eventRefSeq(e, sk string) string {
	return `CASE WHEN ` + e + `.ref < 4294967296 THEN (` + sk + `) * 4294967296 + ` + e + `.ref ELSE ` + e + `.ref END`
}

func eventRefsDown(ctx context.Context, tx *sql.Tx) error {
	// The packed data with eventDict's bytes, unpacked and packed again
	// without them (the reference's id is the message's).
	rows, err := tx.QueryContext(ctx, `SELECT e.k, e.data, s.id, e.run_id, CASE typeof(e.ref) WHEN 'integer' THEN m.id ELSE e.ref END
		FROM events e LEFT JOIN sessions s ON s.k = e.k >> 32
		LEFT JOIN messages m ON m.seq = `+eventRefSeq("e", "e.k >> 32")+` AND typeof(e.ref) = 'integer'
		WHERE typeof(e.data) = 'blob'`)
	if err != nil {
		return fmt.Errorf("event refs: %w", err)
	}
	type row struct {
		k    int64
		data any
	}
	var out []row
	for rows.Next() {
		var k int64
		var data, session, runID, ref any
		if err := rows.Scan(&k, &data, &session, &runID, &ref); err != nil {
			rows.Close()
			return fmt.Errorf("event refs: %w", err)
		}
		run, err := idRun.dec(runID)
		if err != nil {
			rows.Close()
			return err
		}
		mref, _ := ref.(string)
		b, err := unpackEventData(data, text(session), run, mref)
		if err != nil {
			rows.Close()
			return err
		}
		v := packEvent(b, text(session), run, mref, false)
		if p, ok := v.([]byte); !ok || string(p) != text(data) {
			out = append(out, row{k, v})
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("event refs: %w", err)
	}
	st, err := tx.PrepareContext(ctx, `UPDATE events SET data = ? WHERE k = ?`)
	if err != nil {
		return fmt.Errorf("event refs: %w", err)
	}
	defer st.Close()
	for _, r := range out {
		if _, err := st.ExecContext(ctx, r.data, r.k); err != nil {
			return fmt.Errorf("event refs: %w", err)
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE events SET ref = (SELECT m.id FROM messages m WHERE m.seq = `+eventRefSeq("events", "events.k >> 32")+`)
		WHERE typeof(ref) = 'integer'`)
	if err != nil {
		return fmt.Errorf("event refs: %w", err)
	}
	return nil
}
