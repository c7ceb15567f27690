package askuser_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/askuser"
)

func TestResolveWorkspacePath(t *testing.T) {
	t.Parallel()
	root, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "a"), 0o755))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
	require.NoError(t, os.Symlink("a", filepath.Join(root, "in")))
	realRoot, err := filepath.EvalSymlinks(root)
	require.NoError(t, err)

	for rel, want := range map[string]string{".": realRoot, "a": filepath.Join(realRoot, "a"), "in/new/f.txt": filepath.Join(realRoot, "a", "new", "f.txt"), "a/../a": filepath.Join(realRoot, "a")} {
		got, err := askuser.ResolveWorkspacePath(root, rel)
		require.NoError(t, err, rel)
		require.Equal(t, want, got, rel)
	}
	for rel, msg := range map[string]string{
		"/etc":      `"/etc" is absolute, outside the workspace; give a path relative to it`,
		"../x":      `"../x" leads outside the workspace`,
		"out/x":     `"out/x" resolves outside the workspace through a symbolic link`,
		"a/../../x": `"a/../../x" leads outside the workspace`,
	} {
		_, err := askuser.ResolveWorkspacePath(root, rel)
		require.EqualError(t, err, msg, rel)
		require.True(t, errors.Is(err, askuser.ErrOutsideWorkspace), rel)
	}
	_, err = askuser.ResolveWorkspacePath(root, "a\x00b")
	require.EqualError(t, err, "the path must not contain NUL bytes")
	require.False(t, errors.Is(err, askuser.ErrOutsideWorkspace))
	_, err = askuser.ResolveWorkspacePath("", "a")
	require.EqualError(t, err, "no workspace is configured (--workspace)")
}
