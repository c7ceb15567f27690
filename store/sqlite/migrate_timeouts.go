package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// timeoutsVersion is the migration that keeps an interaction's timeout in
// its row (deadline.go): timeout_data and timeout_fired, and the partial
// index interactions_timeout on expires_at while not fired. An ask then
// writes no interaction_deadlines row and no interaction_deadlines_due
// entry: one statement and one page less. The timeouts stored before move
// into their interactions' rows (those due at their interaction's
// expiry, which luban always wrote); an interaction without one is marked
// as holding none (timeoutNone). It runs in goose's transaction, with the
// version's record. Down moves the timeouts back into rows.
const timeoutsVersion = 22

func timeoutsMigration() *goose.Migration {
	return goose.NewGoMigration(timeoutsVersion, &goose.GoFunc{RunTx: timeoutsUp}, &goose.GoFunc{RunTx: timeoutsDown})
}

func execAll(ctx context.Context, tx *sql.Tx, qs ...string) error {
	for _, q := range qs {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("timeouts: %w", err)
		}
	}
	return nil
}

// timeoutRow selects interaction i's stored timeout row.
const timeoutRow = `FROM interaction_deadlines d WHERE d.request_id = interactions.id AND d.seq = 0 AND d.due_at = interactions.expires_at`

func timeoutsUp(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx,
		`ALTER TABLE interactions ADD COLUMN timeout_data BLOB`,
		`ALTER TABLE interactions ADD COLUMN timeout_fired INTEGER`,
		`UPDATE interactions SET timeout_fired = -1 WHERE NOT EXISTS (SELECT 1 `+timeoutRow+`)`,
		`UPDATE interactions SET (timeout_data, timeout_fired) = (SELECT `+timeoutCase("d.data", true)+`, d.fired_at `+timeoutRow+`) WHERE EXISTS (SELECT 1 `+timeoutRow+`)`,
		`DELETE FROM interaction_deadlines WHERE seq = 0 AND EXISTS (SELECT 1 FROM interactions i WHERE i.id = interaction_deadlines.request_id AND i.timeout_fired IS NOT -1)`,
		`CREATE INDEX interactions_timeout ON interactions (expires_at) WHERE timeout_fired IS NULL`,
	)
}

func timeoutsDown(ctx context.Context, tx *sql.Tx) error {
	return execAll(ctx, tx,
		`INSERT INTO interaction_deadlines (request_id, seq, kind, due_at, fired_at, data)
			SELECT id, 0, 0, expires_at, timeout_fired, `+timeoutCase("timeout_data", false)+` FROM interactions WHERE timeout_fired IS NOT -1`,
		`DROP INDEX interactions_timeout`,
		`ALTER TABLE interactions DROP COLUMN timeout_fired`,
		`ALTER TABLE interactions DROP COLUMN timeout_data`,
	)
}

// timeoutCase is the SQL expression of col's timeout data encoded as
// timeoutDatas codes (enc) or decoded from them.
func timeoutCase(col string, enc bool) string {
	q := `CASE ` + col
	for i, v := range timeoutDatas {
		if enc {
			q += fmt.Sprintf(` WHEN '%s' THEN %d`, v, i)
		} else {
			q += fmt.Sprintf(` WHEN %d THEN '%s'`, i, v)
		}
	}
	return q + ` ELSE ` + col + ` END`
}
