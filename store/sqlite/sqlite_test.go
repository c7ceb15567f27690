package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/store/storetest"
)

var _ store.Store = (*sqlite.Store)(nil)

// openFile opens a new store in a SQLite file of the test (the
// conformance suites' constructor): a copy of the migrated database
// (sqlite.MigratedPath). TestConformanceMemory's stores, the migration
// tests and the tests of Open run the migrations from empty.
func openFile(t *testing.T) store.Store {
	st, err := sqlite.Open(context.Background(), sqlite.MigratedPath(t), nil)
	require.NoError(t, err)
	return st
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, openFile)
}

func TestConformanceMemory(t *testing.T) {
	t.Parallel()
	storetest.Exercise(t, func(t *testing.T) store.Store {
		st, err := sqlite.Open(context.Background(), "memory", nil)
		require.NoError(t, err)
		require.False(t, st.Durable())
		return st
	})
}

func TestInstances(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "luban.db")
	storetest.ExerciseInstances(t, func(t *testing.T) store.Store {
		st, err := sqlite.Open(context.Background(), path, nil)
		require.NoError(t, err)
		return st
	})
}
