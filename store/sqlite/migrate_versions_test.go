package sqlite

import (
	"database/sql"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"
)

// skippedVersions are the migration versions this store never had and must
// never have: databases migrated past a version cannot take it later,
// because goose refuses a pending migration below the database's version
// ("detected 1 missing (out-of-order) migration lower than database
// version"), so luban serve and luban migrate up would refuse every such
// database. A new migration takes the number after the highest one.
var skippedVersions = map[int64]bool{32: true}

// The embedded migrations (SQL files and Go migrations together) are
// numbered 1 … N with no version below N missing but those of
// skippedVersions, and none of skippedVersions exists: a migration landed
// below the highest version is refused here instead of by every database
// already migrated past it.
func TestMigrationVersionsOnlyGrow(t *testing.T) {
	t.Parallel()
	db, err := sql.Open(DriverName, ":memory:")
	require.NoError(t, err)
	defer db.Close()
	fsys, err := fsSub(migrations, "migrations")
	require.NoError(t, err)
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, migrationOptions()...)
	require.NoError(t, err)
	have := map[int64]bool{}
	var highest int64
	for _, s := range p.ListSources() {
		require.False(t, have[s.Version], "version %d twice", s.Version)
		have[s.Version] = true
		highest = max(highest, s.Version)
	}
	for v := int64(1); v <= highest; v++ {
		if skippedVersions[v] {
			require.False(t, have[v], "migration %d was skipped once (databases are past it): take the number after %d", v, highest)
			continue
		}
		require.True(t, have[v], "migration %d is missing below the highest, %d", v, highest)
	}
}
