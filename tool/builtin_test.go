package tool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/tool"
)

func TestListFilesStaysInsideTheWorkspace(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	outside := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("x"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(root, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "src", "main.go"), []byte("package main"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "evil")))
	require.NoError(t, os.Symlink(filepath.Join(root, "src"), filepath.Join(root, "good")))

	lf := tool.ListFiles(root)
	call := func(path string) tool.Result {
		args, err := json.Marshal(map[string]string{"path": path})
		require.NoError(t, err)
		res, err := lf.Call(context.Background(), args)
		require.NoError(t, err)
		return res
	}
	res := call(".")
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "evil\ngood\nsrc/", res.Content)
	require.Equal(t, tool.Result{Content: "main.go"}, call("src"))
	require.Equal(t, tool.Result{Content: "main.go"}, call("good"), "a link that stays inside is followed")
	for _, p := range []string{"evil", "evil/", "../", "/etc", "src/../../"} {
		res := call(p)
		if p == "/etc" || p == "../" || p == "src/../../" {
			// Absolute paths and .. are clamped to the root, never above it.
			require.NotContains(t, res.Content, "secret.txt", p)
			continue
		}
		require.True(t, res.IsError, "%s: %s", p, res.Content)
		require.Contains(t, res.Content, "outside the workspace", p)
		require.NotContains(t, res.Content, "secret.txt", p)
	}
}
