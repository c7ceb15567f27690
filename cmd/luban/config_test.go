package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/tool"
)

func writeConfig(t *testing.T, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "luban.yaml")
	require.NoError(t, os.WriteFile(p, []byte(src), 0o600))
	return p
}

func noEnv(string) string { return "" }

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, `
agents:
  - name: helper
    tools: [current_time, "*_file*"]
    askTools: [ask_user]
    approval: {write_file: never}
  - name: plain
    model: scripted
`)
	var out, errb bytes.Buffer
	c := &ConfigCmd{Stdout: &out, Stderr: &errb, Getenv: noEnv}
	require.NoError(t, c.Run([]string{"check", file}))
	require.Equal(t, file+": ok\n"+
		"agent helper (default): model scripted:demo, tools ask_user, current_time, list_files, read_file, write_file\n"+
		"agent plain: model scripted:demo, tools ask_user, AskUser, current_time, list_files\n", out.String())

	var u *usageError
	require.ErrorAs(t, c.Run([]string{"check"}), &u)
	require.ErrorAs(t, c.Run([]string{"lint", file}), &u)
}

func TestConfigCheckNamesKeyAndLine(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		"agents:\n  - name: a\n    tools: [current_time, grep]\n":                                                            ":3: agents[0].tools[1]: no tool named \"grep\" is registered (registered: AskUser, ask_user, current_time, list_files, read_file, write_file)",
		"agents:\n  - name: a\n    model: openai:gpt-4o\n":                                                                   ":2: agents[0].model: --model openai:gpt-4o needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server such as Ollama, vLLM or llama.cpp); see docs/models.md",
		"server:\n  lease: forever\n":                                                                                        ":2: server.lease: \"forever\" is not a positive duration such as 30s, 15m or 24h",
		"agents:\n  - name: a\n    approval:\n      - {tool: current_time, when: 'args.x >', policy: always}\n":              ":4: agents[0].approval[0].when: not a valid CEL expression: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
		"people:\n  - {id: ann, tokens: [t1]}\n  - {id: ann}\nagents:\n  - name: a\n    routes:\n      - assignees: [bob]\n": ":3: people[1].id: \"ann\" is already the id of people[0]\n" + "FILE:7: agents[0].routes[0].assignees[0]: \"bob\" is not a person of people: (write a person's id, group:<id> or owner)",
	} {
		file := writeConfig(t, src)
		var out bytes.Buffer
		err := (&ConfigCmd{Stdout: &out, Stderr: &out, Getenv: noEnv}).Run([]string{"check", file})
		require.EqualError(t, err, file+strings.ReplaceAll(want, "FILE", file))
		require.Empty(t, out.String())
	}
}

func TestConfigCheckPeople(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, `
people:
  - {id: alice, tokens: [a-token]}
  - {id: bob, tokens: [b-token], groups: [finance]}
  - {id: carol, tokens: [c-token], groups: [finance]}
agents:
  - name: payments
    tools: [current_time]
    approval:
      - {tool: current_time, when: 'args.zone == "UTC"', policy: always}
    routes:
      - match: {kind: approval}
        assignees: [group:finance]
        quorum: 2
`)
	var out, errb bytes.Buffer
	require.NoError(t, (&ConfigCmd{Stdout: &out, Stderr: &errb, Getenv: noEnv}).Run([]string{"check", file}))
	require.Equal(t, file+": ok\npeople: alice, bob, carol\ngroup finance: bob, carol\n"+
		"agent payments (default): model scripted:demo, tools ask_user, AskUser, current_time\n  approval before: current_time\n  routes[0]: approval → group:finance, quorum 2\n", out.String())
}

func TestConfigEveryAgentGetsItsAllowlist(t *testing.T) {
	t.Parallel()
	f, err := config.Parse("c.yaml", []byte("agents:\n  - {name: a, tools: []}\n  - {name: b, askTools: [], tools: ['*'], approval: {'*': always, current_time: never}}\n"), noEnv)
	require.NoError(t, err)
	agents, err := configAgents("c.yaml", f, tool.NewRegistry(), t.TempDir(), "scripted", nil, noEnv)
	require.NoError(t, err)
	require.Equal(t, tool.Allowlist{"ask_user", "AskUser"}, agents[0].Tools)
	require.Equal(t, tool.Allowlist{"current_time", "list_files", "read_file", "write_file"}, agents[1].Tools, "globs never add ask tools")
	require.Same(t, agents[0].Provider, agents[1].Provider, "one provider per model name")
	require.True(t, agents[0].Approval.Requires("write_file"), "write_file needs approval by default")
	require.True(t, agents[1].Approval.Requires("list_files"))
	require.False(t, agents[1].Approval.Requires("current_time"))
}

// Flags and their environment twins override the file (docs/design.md §9).
func TestServerConfigPrecedence(t *testing.T) {
	t.Parallel()
	env := map[string]string{"LUBAN_LEASE": "7s"}
	c := &Serve{Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }}
	var cfg serveConfig
	fs := c.flags(&cfg)
	require.NoError(t, fs.Parse([]string{"--addr", "127.0.0.1:9999"}))
	applyServerConfig(fs, &cfg, config.Server{Addr: "0.0.0.0:1", DB: "memory", Lease: time.Minute, InteractionTTL: time.Hour,
		AuthTokens: []string{"a", "b"}, AskTools: []string{"AskUser"}}, c.Getenv)
	require.Equal(t, "127.0.0.1:9999", cfg.addr, "the flag wins")
	require.Equal(t, 7*time.Second, cfg.lease, "the variable wins")
	require.Equal(t, "memory", cfg.db, "the file fills what neither gave")
	require.Equal(t, time.Hour, cfg.ttl)
	require.Equal(t, "a,b", cfg.authToken)
	require.Equal(t, "AskUser", cfg.askTools)
	require.Equal(t, 15*time.Second, cfg.heartbeat, "a key not in the file keeps the default")
}

func TestServeRefusesABadConfig(t *testing.T) {
	t.Parallel()
	file := writeConfig(t, "agents:\n  - name: a\n    colour: blue\n")
	c := &Serve{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: noEnv}
	err := c.Run(t.Context(), []string{"--config", file, "--db", "memory", "--auth-token", "t", "--addr", "127.0.0.1:0"})
	require.EqualError(t, err, file+":3: agents[0].colour: unknown key (known here: approval, askTools, instructions, maxSteps, model, name, routes, tools)")
	err = c.Run(t.Context(), []string{"--config", filepath.Join(t.TempDir(), "none.yaml"), "--db", "memory"})
	var u *usageError
	require.ErrorAs(t, err, &u)
}

// serve and config check share one workspace check: a server.workspace that
// is not an existing directory is refused by both, naming the key and line;
// LUBAN_WORKSPACE and --workspace are named when the value came from them.
func TestWorkspaceCheckedAlikeByServeAndConfigCheck(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	aFile := filepath.Join(t.TempDir(), "file.txt")
	require.NoError(t, os.WriteFile(aFile, []byte("x"), 0o600))
	for _, tc := range []struct {
		dir, want string
	}{
		{missing, ":3: server.workspace: " + missing + " does not exist (tools and directory answers must stay inside an existing workspace directory)"},
		{aFile, ":3: server.workspace: " + aFile + " is not a directory (tools and directory answers must stay inside an existing workspace directory)"},
	} {
		file := writeConfig(t, "server:\n  addr: 127.0.0.1:0\n  workspace: "+tc.dir+"\nagents:\n  - name: a\n")
		var out bytes.Buffer
		err := (&ConfigCmd{Stdout: &out, Stderr: &out, Getenv: noEnv}).Run([]string{"check", file})
		require.EqualError(t, err, file+tc.want, "config check")
		require.Empty(t, out.String())

		db := filepath.Join(t.TempDir(), "luban.db")
		s := &Serve{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: noEnv}
		err = s.Run(t.Context(), []string{"--config", file, "--db", db, "--auth-token", "t"})
		require.EqualError(t, err, file+tc.want, "serve")
		require.NoFileExists(t, db, "serve refuses before it opens the database")
	}

	// A SQLite server.db in a missing directory is refused by both, naming
	// its line; nothing is created.
	noDir := filepath.Join(t.TempDir(), "no", "such")
	file := writeConfig(t, "server:\n  addr: 127.0.0.1:0\n  db: "+filepath.Join(noDir, "x.db")+"\nagents:\n  - name: a\n")
	want := file + ":3: server.db: " + filepath.Join(noDir, "x.db") + ": directory " + noDir + " does not exist; create it first"
	err := (&ConfigCmd{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: noEnv}).Run([]string{"check", file})
	require.EqualError(t, err, want, "config check")
	err = (&Serve{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: noEnv}).Run(t.Context(), []string{"--config", file, "--auth-token", "t"})
	require.EqualError(t, err, want, "serve")
	require.NoDirExists(t, filepath.Dir(noDir))

	// Several problems of one file are listed together, in line order.
	file = writeConfig(t, "agents:\n  - name: a\n    tools: [grep]\nserver:\n  workspace: "+missing+"\n")
	err = (&ConfigCmd{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: noEnv}).Run([]string{"check", file})
	require.ErrorContains(t, err, file+":3: agents[0].tools[0]: no tool named \"grep\"")
	require.ErrorContains(t, err, "\n"+file+":5: server.workspace: "+missing+" does not exist")

	// The environment twin wins over the file, in both, and is named.
	good := writeConfig(t, "server:\n  workspace: "+t.TempDir()+"\n")
	env := func(k string) string {
		if k == "LUBAN_WORKSPACE" {
			return missing
		}
		return ""
	}
	err = (&ConfigCmd{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: env}).Run([]string{"check", good})
	require.EqualError(t, err, "LUBAN_WORKSPACE: "+missing+" does not exist (tools and directory answers must stay inside an existing workspace directory)")
	err = (&Serve{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: noEnv}).Run(t.Context(), []string{"--config", good, "--workspace", missing, "--db", "memory", "--auth-token", "t"})
	require.EqualError(t, err, "--workspace: "+missing+" does not exist (tools and directory answers must stay inside an existing workspace directory)")
	var u *usageError
	require.ErrorAs(t, err, &u)
	var out bytes.Buffer
	require.NoError(t, (&ConfigCmd{Stdout: &out, Stderr: &out, Getenv: noEnv}).Run([]string{"check", good}))
	require.Contains(t, out.String(), good+": ok\n")
}

func TestServeNamesLubanWorkspace(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "gone")
	env := func(k string) string {
		if k == "LUBAN_WORKSPACE" {
			return missing
		}
		return ""
	}
	err := (&Serve{Stdout: &bytes.Buffer{}, Stderr: &bytes.Buffer{}, Getenv: env}).Run(t.Context(), []string{"--db", "memory", "--auth-token", "t"})
	require.EqualError(t, err, "LUBAN_WORKSPACE: "+missing+" does not exist (tools and directory answers must stay inside an existing workspace directory)")
}

// TestConfigCheckReportsEveryProblemAtOnce: one run of `luban config check`
// lists every problem of a broken file — what the file's format refuses
// (an unknown key, a bad duration) together with what only the checks after
// parsing find (an unregistered tool, a model without its key, a missing
// workspace and database directory) — in line order, so one round of fixes
// is enough.
func TestConfigCheckReportsEveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "no-such-dir")
	file := writeConfig(t, "server:\n"+
		"  lease: forever\n"+ // 2
		"  workspace: "+missing+"\n"+ // 3
		"  db: "+filepath.Join(missing, "x.db")+"\n"+ // 4
		"agents:\n"+
		"  - name: a\n"+ // 6
		"    tools: [current_time, grep]\n"+ // 7
		"    colour: blue\n"+ // 8
		"  - name: b\n"+ // 9
		"    model: openai:gpt-4o\n") // 10
	var out bytes.Buffer
	err := (&ConfigCmd{Stdout: &out, Stderr: &out, Getenv: noEnv}).Run([]string{"check", file})
	require.Error(t, err)
	require.Empty(t, out.String())
	var lines []string
	for _, l := range strings.Split(err.Error(), "\n") {
		lines = append(lines, strings.TrimPrefix(l, file))
	}
	require.Len(t, lines, 6, "every problem, one a line:\n%s", err)
	for i, prefix := range []string{
		`:2: server.lease: "forever" is not a positive duration`,
		":3: server.workspace: " + missing + " does not exist",
		":4: server.db: " + filepath.Join(missing, "x.db") + ": directory " + missing + " does not exist",
		`:7: agents[0].tools[1]: no tool named "grep" is registered`,
		`:8: agents[0].colour: unknown key`,
		":9: agents[1].model: --model openai:gpt-4o needs OPENAI_API_KEY", // the agent's line
	} {
		require.True(t, strings.HasPrefix(lines[i], prefix), "line %d: %q does not start with %q\n%s", i+1, lines[i], prefix, err)
	}
}
