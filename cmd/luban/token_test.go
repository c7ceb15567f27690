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
	first, file, err := c.tokens(cfg, false)
	require.NoError(t, err)
	require.Len(t, first, 1)
	require.Equal(t, filepath.Join(dir, "luban.token"), file)
	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	again, _, err := c.tokens(cfg, false)
	require.NoError(t, err)
	require.Equal(t, first, again, "a restart keeps the principal, so its sessions stay reachable")

	given, file, err := c.tokens(serveConfig{db: cfg.db, authToken: " a , b "}, false)
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

// A server started with its own --db and no --auth-token keeps its token
// beside that database; `luban chat --db` (or LUBAN_DB) reads it there, and
// without it the refusal names the file it looked for and the flags to pass.
func TestChatFindsTheTokenOfAServerWithAnotherDB(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "elsewhere", "team.db")
	require.NoError(t, os.MkdirAll(filepath.Dir(db), 0o700))
	url, _, _ := startServeProcStop(t, nil, "--db", db, "--auth-token", "")
	file := filepath.Join(filepath.Dir(db), "luban.token")
	_, err := os.Stat(file)
	require.NoError(t, err, "serve keeps its token beside --db")

	r := luban(t, nil, "chat", "--url", url, "--db", db)
	require.Equal(t, 0, r.code, "chat --db: %s%s", r.stdout, r.stderr)
	r = luban(t, []string{"LUBAN_DB=" + db}, "chat", "--url", url)
	require.Equal(t, 0, r.code, "chat with LUBAN_DB: %s%s", r.stdout, r.stderr)

	data := t.TempDir()
	r = luban(t, []string{"XDG_DATA_HOME=" + data}, "chat", "--url", url)
	require.Equal(t, 2, r.code, r.stdout)
	require.Contains(t, r.stderr, "luban: no token: "+filepath.Join(data, "luban", "luban.token")+" is missing or empty")
	require.Contains(t, r.stderr, "pass the server's database with --db (LUBAN_DB), or the token luban serve printed with --token (LUBAN_AUTH_TOKEN)")
	r = luban(t, []string{"XDG_DATA_HOME=" + data, "LANG=zh_CN.UTF-8"}, "chat", "--url", url, "--db", filepath.Join(t.TempDir(), "x.db"))
	require.Equal(t, 2, r.code, r.stdout)
	require.Contains(t, r.stderr, " 不存在或为空")
	require.Contains(t, r.stderr, "请用 --db（LUBAN_DB）指定服务使用的数据库，或用 --token（LUBAN_AUTH_TOKEN）传入 luban serve 打印的令牌")
}
