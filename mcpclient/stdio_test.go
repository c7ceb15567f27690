package mcpclient_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/internal/testkit/everythingtest"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/tool"
)

// A stdio server gets a minimal environment plus its env: server-everything's
// get-env shows PATH, HOME, the locale and the temp dir, and what env names
// (winning over luban's), but none of luban's tokens, model keys or
// OPENAI_BASE_URL.
func TestStdioServerEnvironment(t *testing.T) {
	t.Parallel()
	entry := everythingtest.Entry(t)
	environ := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/luban", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TMPDIR=/tmp/luban", "TZ=UTC",
		"LUBAN_TOKENS=alice:tok-alice-secret,bob:tok-bob-secret", "LUBAN_TOKEN=tok-single-secret",
		"OPENAI_BASE_URL=http://10.0.0.1/v1", "OPENAI_API_KEY=sk-secret", "ANTHROPIC_API_KEY=sk-ant-secret",
		"LUBAN_TEST_POSTGRES=postgres://secret", "AWS_SECRET_ACCESS_KEY=aws-secret",
	}
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "ev", Command: "node", Args: []string{entry, "stdio"},
		Env: map[string]string{"MY_SETTING": "from-env", "LANG": "de_DE.UTF-8"}}},
		mcpclient.Options{Registry: reg, Environ: func() []string { return environ }})
	start(t, m)
	res := call(t, waitTool(t, reg, "ev__get-env"), context.Background(), `{}`)
	require.False(t, res.IsError, res.Content)
	var env map[string]string
	require.NoError(t, json.Unmarshal([]byte(res.Content), &env), res.Content)
	assert.Equal(t, os.Getenv("PATH"), env["PATH"])
	assert.Equal(t, "/home/luban", env["HOME"])
	assert.Equal(t, "C.UTF-8", env["LC_ALL"])
	assert.Equal(t, "/tmp/luban", env["TMPDIR"])
	assert.Equal(t, "UTC", env["TZ"])
	assert.Equal(t, "from-env", env["MY_SETTING"])
	assert.Equal(t, "de_DE.UTF-8", env["LANG"], "env: wins over the inherited value")
	for _, k := range []string{"LUBAN_TOKENS", "LUBAN_TOKEN", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LUBAN_TEST_POSTGRES", "AWS_SECRET_ACCESS_KEY"} {
		assert.NotContains(t, env, k)
	}
	assert.NotContains(t, res.Content, "secret")
	assert.NotContains(t, res.Content, "10.0.0.1")
}

// Inherited keeps only the minimal set (names compared without case, for
// Windows) and adds env after it.
func TestInherited(t *testing.T) {
	t.Parallel()
	got := mcpclient.Inherited([]string{"PATH=/bin", "Path=/win", "LC_CTYPE=C", "SECRET=x", "=odd", "noequals", "HOME=/h"},
		map[string]string{"B": "2", "A": "1", "HOME": "/mine"})
	assert.Equal(t, []string{"PATH=/bin", "Path=/win", "LC_CTYPE=C", "A=1", "B=2", "HOME=/mine"}, got)
}

// syncBuffer is a log sink safe for the manager's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A stdio server that takes longer to start than a tool call's timeout
// (npx downloading it) connects: connecting has its own, generous timeout.
func TestSlowStdioServerConnects(t *testing.T) {
	t.Parallel()
	entry := everythingtest.Entry(t)
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "slow", Command: "sh", Args: []string{"-c", `sleep 1.5; exec node "$0" stdio`, entry},
		Timeout: 300 * time.Millisecond}}, mcpclient.Options{Registry: reg, MinBackoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	start(t, m)
	st := m.Status()[0]
	require.Equal(t, mcpclient.StateReady, st.State, "%+v", st)
	assert.Zero(t, st.Failures)
	assert.Equal(t, "Echo: up", call(t, waitTool(t, reg, "slow__echo"), context.Background(), `{"message":"up"}`).Content)
}

// A first start that runs out of connectTimeout (a first download) is
// not fatal: the log names the server, the step and the timeout, and the
// next attempt (the download cached) connects.
func TestConnectTimeoutRetried(t *testing.T) {
	t.Parallel()
	entry := everythingtest.Entry(t)
	first := filepath.Join(t.TempDir(), "downloaded")
	var logs syncBuffer
	reg := tool.NewRegistry()
	script := fmt.Sprintf(`if [ -e %q ]; then exec node "$0" stdio; fi; touch %q; exec sleep 60`, first, first)
	m := mcpclient.New([]config.MCPServer{{Name: "npx", Command: "sh", Args: []string{"-c", script, entry}, ConnectTimeout: 700 * time.Millisecond}},
		// The retry waits MinBackoff, so the state read right after the
		// first outcome is that outcome even on a loaded machine.
		mcpclient.Options{Registry: reg, MinBackoff: time.Second, MaxBackoff: 2 * time.Second,
			Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	start(t, m)
	assert.Equal(t, mcpclient.StateDown, m.Status()[0].State)
	waitState(t, m, mcpclient.StateReady)
	waitTool(t, reg, "npx__echo")
	out := logs.String()
	assert.Contains(t, out, `msg="mcp server connecting" mcpServer=npx target=sh connectTimeout=700ms`)
	assert.Contains(t, out, `msg="mcp server unavailable; retrying" mcpServer=npx step="start and initialize" err="start and initialize: did not finish within the connectTimeout of 700ms`)
	assert.Contains(t, out, `connectTimeout=1.4s`, "the next attempt has twice the time")
}

// A stdio server that never answers fails its attempt when connectTimeout
// runs out, not the transport's close grace later: the timed-out process
// is told to stop at once (before, `sleep 100` with a 1 s connectTimeout
// failed after 4 s: 3 s more waiting for it to exit on its own). The bound
// leaves 2.5 s for a loaded machine, less than the 3 s grace it removes.
func TestConnectTimeoutIsNotOverrun(t *testing.T) {
	t.Parallel()
	m := mcpclient.New([]config.MCPServer{{Name: "mute", Command: "sleep", Args: []string{"100"}, ConnectTimeout: time.Second}},
		mcpclient.Options{Registry: tool.NewRegistry(), MinBackoff: time.Minute, MaxBackoff: time.Minute})
	began := time.Now()
	start(t, m)
	took := time.Since(began)
	st := m.Status()[0]
	require.Equal(t, mcpclient.StateDown, st.State, "%+v", st)
	require.GreaterOrEqual(t, took, time.Second)
	require.Less(t, took, 3500*time.Millisecond, "the attempt overran its connectTimeout of 1s")
}
