package sqlite

import (
	"context"
	"testing"

	"github.com/lubanhq/luban/store/sqlite/sqlitetest"
)

// migrated is the database the package's tests copy instead of migrating
// a new file each (sqlitetest.Template): what Open leaves in a new file.
// The migration tests (migrate_*_test.go) and the tests of Open itself
// open their own files from empty.
var migrated = &sqlitetest.Template{Make: func(ctx context.Context, path string) error {
	s, err := Open(ctx, path, nil)
	if err != nil {
		return err
	}
	return s.Close()
}}

// MigratedPath is the path of a new copy of the migrated database in a
// directory of t (for the tests of package sqlite_test too).
func MigratedPath(t testing.TB) string {
	t.Helper()
	return migrated.Path(t)
}
