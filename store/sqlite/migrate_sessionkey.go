package sqlite

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"
)

// sessionKeyVersion is the migration that gives sessions an integer key
// (k, their rowid) and keys messages, events, trace and the feed by it
// (sessionkey.sql says what it does and why).
const sessionKeyVersion = 16

//go:embed sessionkey.sql
var sessionKeySQL string

// sessionKeyMigration runs sessionkey.sql outside goose's transaction:
// sessions is rebuilt under other tables' references, which needs
// foreign keys off, and SQLite ignores that pragma inside a transaction.
// The script's own transaction commits before goose records the version,
// so a process killed between the two leaves a migrated database that
// goose has not marked: each direction first looks at the schema and does
// nothing when it is already there, so the next Open records the version
// and goes on.
func sessionKeyMigration() *goose.Migration {
	up, down, _ := strings.Cut(sessionKeySQL, "-- +goose Down")
	return goose.NewGoMigration(sessionKeyVersion,
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return runSessionKey(ctx, db, up, false) }},
		&goose.GoFunc{RunDB: func(ctx context.Context, db *sql.DB) error { return runSessionKey(ctx, db, down, true) }})
}

// runSessionKey runs script unless sessions already has (up) or no longer
// has (down) its key column. The script is one Exec, so it runs on one
// connection: the foreign-keys pragma and the transaction it brackets go
// together; a script that fails inside its transaction leaves it open, and
// the ROLLBACK and the pragma that follow close it (goose holds one
// connection of the pool meanwhile; migrate gives the pool two, so these
// run on the script's).
func runSessionKey(ctx context.Context, db *sql.DB, script string, down bool) error {
	var keyed bool
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) > 0 FROM pragma_table_info('sessions') WHERE name = 'k'`).Scan(&keyed); err != nil {
		return fmt.Errorf("session key: read the schema: %w", err)
	}
	if keyed != down {
		return nil // done before the version was recorded
	}
	if _, err := db.ExecContext(ctx, script); err != nil {
		db.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`)                 //nolint:errcheck // none is open when the error came at COMMIT
		db.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`) //nolint:errcheck
		return fmt.Errorf("session key: %w", err)
	}
	return nil
}
