// Package everythingtest starts the official MCP reference server,
// @modelcontextprotocol/server-everything, for the tests of luban's MCP
// client. scripts/test.sh installs it with npm ci in
// mcpclient/testdata/everything; without it (or without node) a test fails
// under CI (CI set) and is skipped elsewhere.
package everythingtest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Entry is the absolute path of server-everything's entry point (dist/index.js).
func Entry(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	p := filepath.Join(filepath.Dir(file), "..", "..", "..", "mcpclient", "testdata", "everything",
		"node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(p); err != nil {
		missing(t, fmt.Sprintf("server-everything is not installed (%s): run (cd mcpclient/testdata/everything && npm ci), as scripts/test.sh does", p))
	}
	if _, err := exec.LookPath("node"); err != nil {
		missing(t, "node is not installed")
	}
	return p
}

func missing(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// StartHTTP starts server-everything's streamable HTTP transport on the
// loopback port and returns its /mcp URL once it listens (at most 20 s); the
// process is killed at cleanup.
func StartHTTP(t *testing.T, port int) string {
	t.Helper()
	cmd := exec.Command("node", Entry(t), "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	listening := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "listening on port") {
				once = true
				close(listening)
			}
		}
	}()
	select {
	case <-listening:
	case <-time.After(20 * time.Second):
		t.Fatal("server-everything (streamableHttp) did not start listening")
	}
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

// FreePort returns a loopback TCP port that was free a moment ago (for
// StartHTTP, or a URL where no server listens).
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Processes lists the pids (from /proc) whose command line contains
// marker: a stdio server started with a unique marker argument can be
// found, and seen gone, by it.
func Processes(marker string) []string {
	var out []string
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), marker) {
			out = append(out, d.Name())
		}
	}
	return out
}
