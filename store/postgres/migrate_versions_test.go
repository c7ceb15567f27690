package postgres_test

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The migrations are numbered 1 … N with none missing below N: a
// migration landed below the highest version could never be applied to a
// database migrated past it (goose refuses a pending migration below the
// database's version, so luban serve and luban migrate up would refuse the
// database). A new migration takes the number after the highest one.
func TestMigrationVersionsOnlyGrow(t *testing.T) {
	t.Parallel()
	entries, err := os.ReadDir("migrations")
	require.NoError(t, err)
	have := map[int64]bool{}
	var highest int64
	for _, e := range entries {
		prefix, _, ok := strings.Cut(e.Name(), "_")
		require.True(t, ok, "migration %s has no NNNNN_ prefix", e.Name())
		v, err := strconv.ParseInt(prefix, 10, 64)
		require.NoError(t, err, "migration %s", e.Name())
		require.False(t, have[v], "version %d twice", v)
		have[v] = true
		highest = max(highest, v)
	}
	for v := int64(1); v <= highest; v++ {
		require.True(t, have[v], "migration %d is missing below the highest, %d", v, highest)
	}
}
