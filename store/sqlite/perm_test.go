package sqlite_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/lubanhq/luban/store/sqlite"
	"github.com/stretchr/testify/require"
)

// A database Open creates is private to its user, with its -wal and -shm,
// whatever the directory it is in; a file that exists keeps its mode.
func TestOpenCreatesThePrivateDatabaseFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	path := filepath.Join(dir, "luban.db")
	st, err := sqlite.Open(t.Context(), path, nil)
	require.NoError(t, err)
	defer st.Close()
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(f)
		require.NoError(t, err, "WAL mode keeps %s while the store is open", f)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), f)
	}

	shared := filepath.Join(dir, "shared.db")
	require.NoError(t, os.WriteFile(shared, nil, 0o640))
	require.NoError(t, os.Chmod(shared, 0o640))
	st2, err := sqlite.Open(t.Context(), shared, nil)
	require.NoError(t, err)
	defer st2.Close()
	fi, err := os.Stat(shared)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm(), "an existing database keeps its mode")
}
