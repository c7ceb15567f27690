package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

// TestMain runs the real main when re-executed by luban() (litestream
// style): the test binary is the luban binary, with its exit codes and
// streams. It is also main when serve starts it as the demo's stdio MCP
// server (`<self> demo-mcp`): a stdio server gets a minimal environment
// without LUBAN_CLI_TEST_MAIN, and the test binary run as a test there
// would start every test again, each starting servers of its own.
func TestMain(m *testing.M) {
	if os.Getenv("LUBAN_CLI_TEST_MAIN") == "1" || (len(os.Args) > 1 && os.Args[1] == "demo-mcp") {
		main()
		return
	}
	os.Exit(m.Run())
}

type result struct {
	code           int
	stdout, stderr string
}

// luban runs the binary with args and env (nothing of the caller's LUBAN_*
// environment) and waits for it to exit.
func luban(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(cleanEnv(t), append([]string{"LUBAN_CLI_TEST_MAIN=1"}, env...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{code, out.String(), errb.String()}
}

func cleanEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "LUBAN_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			continue
		}
		env = append(env, kv)
	}
	// The demo's paced text (model/scripted) would only slow the tests down.
	return append(env, "XDG_DATA_HOME="+t.TempDir(), "LUBAN_SCRIPTED_DELAY=0")
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"--version", "version"} {
		r := luban(t, nil, arg)
		require.Equal(t, 0, r.code, r.stderr)
		require.Regexp(t, `^luban \S+`, r.stdout)
		require.Empty(t, r.stderr)
	}
}

func TestHelpGoesToStdoutAndNamesEveryEnvTwin(t *testing.T) {
	t.Parallel()
	r := luban(t, nil, "serve", "--help")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	// Every flag's usage names its LUBAN_ variable.
	flagLine := regexp.MustCompile(`^  -(\S+)`)
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	var flags, current []string
	var text strings.Builder
	flush := func() {
		if len(current) > 0 {
			require.Regexp(t, `\(LUBAN_[A-Z_]+[;)]`, text.String(), "flag -%s has no environment twin in --help", current[0])
		}
		text.Reset()
	}
	for sc.Scan() {
		if m := flagLine.FindStringSubmatch(sc.Text()); m != nil {
			flush()
			current = []string{m[1]}
			flags = append(flags, m[1])
		}
		text.WriteString(sc.Text())
	}
	flush()
	for _, f := range []string{"addr", "db", "log-format", "log-level", "retain", "retain-audit", "interaction-ttl"} {
		require.Contains(t, flags, f)
	}
	// demo-mcp is started by serve for the built-in demo, not by a person.
	require.NotContains(t, luban(t, nil, "--help").stdout, "demo-mcp")
	for _, args := range [][]string{{"--help"}, {"help"}, {"chat", "--help"}, {"migrate", "--help"}, {"backup", "--help"}, {"health", "--help"}, {"demo-mcp", "--help"}} {
		r := luban(t, nil, args...)
		require.Equal(t, 0, r.code, "%v: %s", args, r.stderr)
		require.NotEmpty(t, r.stdout, args)
		require.Empty(t, r.stderr, args)
	}
}

func TestInvalidValuesRefuseToStart(t *testing.T) {
	t.Parallel()
	base := []string{"serve", "--db", "memory", "--auth-token", "t", "--addr", "127.0.0.1:0", "--model", "scripted"}
	for _, tc := range []struct {
		env  []string
		args []string
		want string
		not  string // a key the message must not name
	}{
		{env: []string{"LUBAN_INTERACTION_TTL=abc"}, want: "LUBAN_INTERACTION_TTL"},
		{env: []string{"LUBAN_LEASE=-3s"}, want: `--lease (LUBAN_LEASE) "-3s": must be a positive duration`, not: "heartbeat"},
		{env: []string{"LUBAN_SSE_HEARTBEAT=0"}, want: `--sse-heartbeat (LUBAN_SSE_HEARTBEAT) "0s": must be a positive duration`, not: "lease"},
		{args: []string{"--interaction-ttl", "-5s"}, want: `--interaction-ttl (LUBAN_INTERACTION_TTL) "-5s": must be a positive duration`},
		{env: []string{"LUBAN_ASK_TOOLS=ask_me"}, want: `--ask-tools (LUBAN_ASK_TOOLS) "ask_me"`},
		{args: []string{"--model", "gpt"}, want: `--model (LUBAN_MODEL) "gpt"`},
		{env: []string{"LUBAN_CONFIG=/nonexistent/luban.yaml"}, want: "--config (LUBAN_CONFIG) /nonexistent/luban.yaml: no such file"},
		{env: []string{"LUBAN_LEASE=5"}, want: "LUBAN_LEASE"},
		{env: []string{"LUBAN_SSE_HEARTBEAT=soon"}, want: "LUBAN_SSE_HEARTBEAT"},
		{env: []string{"LUBAN_RETAIN=forever"}, want: "LUBAN_RETAIN"},
		{env: []string{"LUBAN_LOG_LEVEL=loud"}, want: "--log-level"},
		{args: []string{"--log-format", "xml"}, want: "--log-format"},
		{args: []string{"--interaction-ttl", "abc"}, want: "interaction-ttl"},
		{args: []string{"--retain-audit", "-3d"}, want: "retain-audit"},
		{args: []string{"--no-such-flag"}, want: "no-such-flag"},
	} {
		r := luban(t, tc.env, append(base, tc.args...)...)
		require.Equal(t, 2, r.code, "%v %v: %s", tc.env, tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, "%v %v", tc.env, tc.args)
		if tc.not != "" {
			require.NotContains(t, r.stderr, tc.not, "%v %v", tc.env, tc.args)
		}
		require.NotContains(t, r.stdout, "serving on", "%v %v", tc.env, tc.args)
	}
}

// The other commands' refusals name the key and its environment twin too.
func TestOtherCommandsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"chat", "--url", "ftp://x", "--token", "t"}, "--url (LUBAN_URL): "},
		{[]string{"chat", "--lang", "fr", "--token", "t"}, `--lang (LUBAN_LANG) "fr": use zh or en`},
		{[]string{"health", "--addr", "nonsense"}, `--addr (LUBAN_ADDR) "nonsense"`},
	} {
		r := luban(t, nil, tc.args...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
}

// A listen address that cannot be served is refused before anything is
// written: no default database, no generated token.
func TestBadAddrRefusesBeforeAnySideEffect(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	busy := ln.Addr().String()
	for _, tc := range []struct {
		env  []string
		args []string
		code int
		want string
	}{
		{args: []string{"--addr", "nonsense"}, code: 2, want: "--addr (LUBAN_ADDR)"},
		{args: []string{"--addr", "127.0.0.1:http-nope"}, code: 2, want: "--addr (LUBAN_ADDR)"},
		{args: []string{"--addr", "127.0.0.1:"}, code: 2, want: "--addr (LUBAN_ADDR)"},
		{env: []string{"LUBAN_ADDR=also nonsense"}, code: 2, want: "LUBAN_ADDR"},
		{args: []string{"--addr", "127.0.0.1:99999"}, code: 2, want: "--addr (LUBAN_ADDR)"},
		{args: []string{"--addr", busy}, code: 1, want: "listen on " + busy},
	} {
		data := t.TempDir()
		r := luban(t, append([]string{"XDG_DATA_HOME=" + data}, tc.env...), append([]string{"serve", "--model", "scripted"}, tc.args...)...)
		require.Equal(t, tc.code, r.code, "%v %v: %s", tc.env, tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, "%v %v", tc.env, tc.args)
		entries, err := os.ReadDir(data)
		require.NoError(t, err)
		require.Empty(t, entries, "%v %v: nothing created in the data directory", tc.env, tc.args)
	}
}

func TestJSONLogsWithLevel(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "serve", "--db", "memory", "--auth-token", "t", "--addr", "127.0.0.1:0", "--model", "scripted", "--log-format", "json", "--log-level", "debug")
	cmd.Env = append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	sc := bufio.NewScanner(stdout)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "luban serving on "); ok {
			url = u
			break
		}
	}
	require.NotEmpty(t, url)
	resp, err := http.Get(url + "livez?token=abc")
	require.NoError(t, err)
	resp.Body.Close()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/")
	h := luban(t, nil, "health", "--addr", addr)
	require.Equal(t, 0, h.code, "luban health of a ready server: %s", h.stderr)
	require.Contains(t, h.stdout, `"status":"ok"`)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	_ = cmd.Wait()
	h = luban(t, nil, "health", "--addr", addr)
	require.Equal(t, 1, h.code, "luban health of a stopped server")
	require.Contains(t, h.stderr, "not ready")
	var access string
	for _, l := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
		require.True(t, strings.HasPrefix(l, "{"), "every log line is JSON: %s", l)
		if strings.Contains(l, `"msg":"http request"`) && strings.Contains(l, `"path":"/livez"`) {
			access = l
		}
	}
	require.Contains(t, access, `"path":"/livez"`)
	require.Contains(t, access, `"status":200`)
	require.NotContains(t, errb.String(), "token=abc")
}

func TestMigrateStatusAndUp(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "luban.db")
	r := luban(t, nil, "migrate", "status", "--db", db)
	require.Equal(t, 1, r.code, "a missing database is an error, not created: %s", r.stdout)
	_, err := os.Stat(db)
	require.True(t, os.IsNotExist(err))

	r = luban(t, nil, "migrate", "up", "--db", db)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "applied 1 00001_init.sql")
	require.Contains(t, r.stdout, "applied 2 00002_people.sql")
	require.Contains(t, r.stdout, "applied 3 00003_session_agent.sql")
	require.Contains(t, r.stdout, "applied 4 00004_feed_prune.sql")
	files, err := filepath.Glob("../../store/sqlite/migrations/*.sql")
	require.NoError(t, err)
	// Every migration file and those written in Go, one a file
	// (store/sqlite/migrate_*.go).
	goFiles, err := filepath.Glob("../../store/sqlite/migrate_*.go")
	require.NoError(t, err)
	goFiles = slices.DeleteFunc(goFiles, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
	require.Contains(t, r.stdout, fmt.Sprintf("%d applied", len(files)+len(goFiles)), "every migration")
	require.Contains(t, r.stdout, "applied 15 00015_compact_runs_interactions.go")
	require.Contains(t, r.stdout, "applied 16 00016_session_key.go")
	require.Contains(t, r.stdout, "applied 17 00017_compact_trace_audit.go")
	require.Contains(t, r.stdout, "applied 19 00019_compact_events.go")
	require.Contains(t, r.stdout, "applied 20 00020_compact_messages.go")
	require.Contains(t, r.stdout, "applied 22 00022_timeouts_in_interactions.go")
	require.Contains(t, r.stdout, "applied 24 00024_event_refs.go")
	require.Contains(t, r.stdout, "applied 26 00026_message_ids.go")

	r = luban(t, nil, "migrate", "status", "--db", db)
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `1\s+00001_init.sql\s+applied\s+\d{4}-`, r.stdout)
	require.Regexp(t, `3\s+00003_session_agent.sql\s+applied\s+\d{4}-`, r.stdout)
	require.Contains(t, r.stdout, "0 pending")

	r = luban(t, nil, "migrate", "up", "--db", db)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "0 applied")

	r = luban(t, nil, "migrate", "sideways", "--db", db)
	require.Equal(t, 2, r.code)

	// A database a newer luban migrated: status lists what this binary
	// knows and fails as serve and up do, changing nothing.
	sq, err := sql.Open(sqlite.DriverName, "file:"+db)
	require.NoError(t, err)
	_, err = sq.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, 1)`)
	require.NoError(t, err)
	require.NoError(t, sq.Close())
	before, err := os.ReadFile(db)
	require.NoError(t, err)
	for _, sub := range []string{"up", "status"} {
		r = luban(t, nil, "migrate", sub, "--db", db)
		require.Equal(t, 1, r.code, "%s: %s", sub, r.stdout)
		require.Contains(t, r.stderr, "the database was migrated by a newer luban: its schema is at version 9999", sub)
	}
	require.Regexp(t, `1\s+00001_init.sql\s+applied\s+\d{4}-`, r.stdout, "status still lists the migrations it knows")
	after, err := os.ReadFile(db)
	require.NoError(t, err)
	require.Equal(t, before, after, "the file is not changed")
}

func TestBackupCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "luban.db")
	st, err := sqlite.Open(context.Background(), db, nil)
	require.NoError(t, err)
	_, err = st.SessionCreate(context.Background(), &store.SessionCreateParams{ID: "sess_1", Owner: "o", Title: "kept", Now: time.Now()})
	require.NoError(t, err)
	// The database stays open (as while serving) during the backup.
	defer st.Close()

	out := filepath.Join(dir, "copy.db")
	r := luban(t, nil, "backup", out, "--db", db)
	require.Equal(t, 0, r.code, r.stderr)
	fi, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	cp, err := sqlite.Open(context.Background(), out, nil)
	require.NoError(t, err)
	defer cp.Close()
	s, err := cp.SessionGet(context.Background(), "sess_1")
	require.NoError(t, err)
	require.Equal(t, "kept", s.Title)

	r = luban(t, nil, "backup", out, "--db", db)
	require.Equal(t, 1, r.code, "an existing file is never overwritten")
	require.Contains(t, r.stderr, "already exists")
	r = luban(t, nil, "backup", "--db", db)
	require.Equal(t, 2, r.code)
	r = luban(t, nil, "backup", filepath.Join(dir, "x.db"), "--db", "postgres://u@h/db")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "pg_dump")
}
