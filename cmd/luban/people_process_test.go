package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServePrintsPeople: `luban serve --config` with people: and no
// --auth-token generates no token; it prints one sign-in line per person,
// with the token when it is written in the file and a placeholder when it
// comes from the environment, and each link signs that person in.
func TestServePrintsPeople(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "team.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("people:\n  - {id: alice, name: Alice Ng, tokens: [alice-token-1]}\n  - {id: bob, tokens: ['${BOB_TOKEN}']}\n"), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, os.Args[0], "serve", "--db", filepath.Join(dir, "luban.db"), "--addr", "127.0.0.1:0", "--workspace", dir, "--config", cfg)
	cmd.Env = append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1", "BOB_TOKEN=bob-secret-token")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { cancel(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	var lines []string
	for len(lines) < 3 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	require.Len(t, lines, 3)
	url, ok := strings.CutPrefix(lines[0], "luban serving on ")
	require.True(t, ok, lines)
	require.Equal(t, []string{"alice (Alice Ng): open " + url + "?token=alice-token-1", "bob: open " + url + "?token=<bob's token>"}, lines[1:])
	_, err = os.Stat(filepath.Join(dir, "luban.token"))
	require.ErrorIs(t, err, os.ErrNotExist, "no token is generated when people have theirs")
	for tok, want := range map[string]int{"alice-token-1": 200, "bob-secret-token": 200, "nobody": 401} {
		req, _ := http.NewRequest("GET", url+"api/sessions", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, tok)
	}
}
