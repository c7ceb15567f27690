package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// An explicit SQLite --db (or LUBAN_DB) in a directory that does not exist
// is refused with the key and the directory named, and nothing is created;
// the default data directory is still created, 0700, its database 0600.
func TestExplicitDBInAMissingDirectoryIsRefused(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	missing := filepath.Join(tmp, "no", "such")
	db := filepath.Join(missing, "x.db")
	serve := []string{"serve", "--auth-token", "t", "--addr", "127.0.0.1:0", "--model", "scripted"}
	for _, tc := range []struct {
		env  []string
		args []string
	}{
		{args: append(append([]string{}, serve...), "--db", db)},
		{env: []string{"LUBAN_DB=" + db}, args: serve},
		{args: []string{"migrate", "up", "--db", db}},
		{env: []string{"LUBAN_DB=" + db}, args: []string{"migrate", "status"}},
	} {
		r := luban(t, append([]string{"XDG_DATA_HOME=" + filepath.Join(tmp, "xdg-unused")}, tc.env...), tc.args...)
		require.Equal(t, 2, r.code, "%v %v: %s", tc.env, tc.args, r.stderr)
		require.Contains(t, r.stderr, "--db (LUBAN_DB) "+db+": directory "+missing+" does not exist", "%v %v", tc.env, tc.args)
		_, err := os.Stat(filepath.Join(tmp, "no"))
		require.ErrorIs(t, err, os.ErrNotExist, "%v %v: nothing is created", tc.env, tc.args)
	}

	xdg := filepath.Join(tmp, "xdg")
	r := luban(t, []string{"XDG_DATA_HOME=" + xdg}, "migrate", "up")
	require.Equal(t, 0, r.code, r.stderr)
	fi, err := os.Stat(filepath.Join(xdg, "luban"))
	require.NoError(t, err, "the default data directory is created")
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	fi, err = os.Stat(filepath.Join(xdg, "luban", "luban.db"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}
