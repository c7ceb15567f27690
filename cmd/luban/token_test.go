package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGeneratedTokenIsKeptBesideTheDatabase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c := &Serve{Getenv: func(string) string { return "" }}
	cfg := serveConfig{db: filepath.Join(dir, "luban.db")}
	first, file, err := c.tokens(cfg)
	require.NoError(t, err)
	require.Len(t, first, 1)
	require.Equal(t, filepath.Join(dir, "luban.token"), file)
	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	again, _, err := c.tokens(cfg)
	require.NoError(t, err)
	require.Equal(t, first, again, "a restart keeps the principal, so its sessions stay reachable")

	given, file, err := c.tokens(serveConfig{db: cfg.db, authToken: " a , b "})
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, given)
	require.Empty(t, file)
}

func TestServeRejectsBadDurationsAndWorkspace(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--interaction-ttl", "0"},
		{"--interaction-ttl", "-5s"},
		{"--workspace", "/nonexistent/luban"},
	} {
		c := &Serve{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: func(string) string { return "" }}
		err := c.Run(t.Context(), append([]string{"--db", "memory", "--auth-token", "t", "--addr", "127.0.0.1:0"}, args...))
		var u *usageError
		require.ErrorAs(t, err, &u, "%v", args)
	}
}
