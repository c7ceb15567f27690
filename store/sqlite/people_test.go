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

func TestConformancePeople(t *testing.T) {
	t.Parallel()
	storetest.ExercisePeople(t, func(t *testing.T) store.Store {
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "luban.db"), nil)
		require.NoError(t, err)
		return st
	})
}
