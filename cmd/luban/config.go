package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/tool"
)

// ConfigCmd is `luban config check FILE` (docs/design.md §9): it validates a
// configuration file the way `luban serve --config FILE` would (the file's
// keys and values, its models and their keys, the tools its agents name)
// without opening a database or listening, and prints one line per agent.
type ConfigCmd struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// Run runs `luban config <sub> ...`.
func (c *ConfigCmd) Run(args []string) error {
	fs := flag.NewFlagSet("config", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	fs.Usage = func() {
		fmt.Fprint(c.Stderr, "Usage: luban config check FILE\n\nValidates a configuration file (docs/design.md §9) without serving; exit code 1 and one line per problem (file:line: key: message) when it is wrong.\n")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 2 || fs.Arg(0) != "check" {
		return &usageError{"usage: luban config check FILE"}
	}
	file := fs.Arg(1)
	// The file's own problems are reported with those of the checks below,
	// which run on what was parsed: one round lists them all.
	f, parseErr := config.ReadFile(file, c.Getenv)
	if f == nil {
		return parseErr
	}
	// The workspace as `luban serve --config FILE` without flags would take
	// it: LUBAN_WORKSPACE, else server.workspace, else the current directory.
	dir, origin := c.Getenv("LUBAN_WORKSPACE"), workspaceOrigin{env: true}
	if dir == "" {
		wd, _ := os.Getwd()
		dir, origin = or(f.Server.Workspace, wd), workspaceOrigin{file: file, line: f.Server.WorkspaceLine}
	}
	workspace, wsErr := checkWorkspace(dir, origin)
	// The database as serve would take it: LUBAN_DB wins over server.db.
	var dbErr error
	if c.Getenv("LUBAN_DB") == "" && f.Server.DB != "" {
		dbErr = checkDBDir(f.Server.DB, c.Getenv, file, f.Server.DBLine)
	}
	model := or(c.Getenv("LUBAN_MODEL"), f.Server.Model)
	agents, err := configAgents(file, f, tool.NewRegistry(), workspace, model, nil, c.Getenv)
	if err := joinConfigErrors(parseErr, wsErr, dbErr, err); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "%s: ok\n", file)
	if len(f.People) > 0 {
		var names []string
		groups := map[string][]string{}
		var order []string
		for _, p := range f.People {
			names = append(names, p.ID)
			for _, g := range p.Groups {
				if groups[g] == nil {
					order = append(order, g)
				}
				groups[g] = append(groups[g], p.ID)
			}
		}
		fmt.Fprintf(c.Stdout, "people: %s\n", strings.Join(names, ", "))
		for _, g := range order {
			fmt.Fprintf(c.Stdout, "group %s: %s\n", g, strings.Join(groups[g], ", "))
		}
	}
	for i, a := range agents {
		def := ""
		if i == 0 {
			def = " (default)"
		}
		fmt.Fprintf(c.Stdout, "agent %s%s: model %s, tools %s\n", a.Name, def, a.Provider.Name(), strings.Join(a.Tools, ", "))
		var asks []string
		for _, t := range a.Tools {
			if a.Approval.Requires(t) {
				asks = append(asks, t)
			}
		}
		if len(asks) > 0 {
			fmt.Fprintf(c.Stdout, "  approval before: %s\n", strings.Join(asks, ", "))
		}
		for j, r := range f.Agents[i].Routes {
			fmt.Fprintf(c.Stdout, "  routes[%d]: %s → %s%s\n", j, describeMatch(r), strings.Join(r.Assignees, ", "), describeRoute(r))
		}
	}
	return nil
}

// workspaceOrigin says where a workspace value came from, for the error
// that refuses it: the config file's server.workspace (line > 0), the
// LUBAN_WORKSPACE variable (env), or else --workspace (or its default, the
// current directory).
type workspaceOrigin struct {
	file string
	line int
	env  bool
	flag bool // given as --workspace (so neither env nor the file applies)
}

// checkWorkspace is the one check of the workspace that `luban serve` and
// `luban config check` share (docs/design.md §9: tools and directory answers are
// confined to it): dir made absolute must be an existing directory. It
// returns the absolute path even with an error (so the tools can still be
// validated). The error is a *config.Error "file:line: server.workspace:
// …" when the value came from the file, else a *usageError naming
// --workspace or LUBAN_WORKSPACE.
func checkWorkspace(dir string, from workspaceOrigin) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	fi, err := os.Stat(abs)
	var msg string
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		msg = fmt.Sprintf("%s does not exist (tools and directory answers must stay inside an existing workspace directory)", abs)
	case err != nil:
		msg = fmt.Sprintf("%s: %v", abs, errors.Unwrap(err))
	case !fi.IsDir():
		msg = fmt.Sprintf("%s is not a directory (tools and directory answers must stay inside an existing workspace directory)", abs)
	default:
		return abs, nil
	}
	switch {
	case from.line > 0:
		return abs, &config.Error{File: from.file, Line: from.line, Key: "server.workspace", Msg: msg}
	case from.env:
		return abs, &usageError{"LUBAN_WORKSPACE: " + msg}
	default:
		return abs, &usageError{"--workspace: " + msg}
	}
}

// joinConfigErrors reports the problems of the workspace, the database path
// and the agents (each nil, a *config.Error, config.Errors or another error)
// together, the file's in line order, so `luban config check` lists every
// problem of the file at once. Nil when all are nil.
func joinConfigErrors(errs ...error) error {
	var out config.Errors
	var other []error
	for _, err := range errs {
		var ce *config.Error
		var es config.Errors
		switch {
		case err == nil:
		case errors.As(err, &es):
			out = append(out, es...)
		case errors.As(err, &ce):
			out = append(out, ce)
		default:
			other = append(other, err)
		}
	}
	if len(other) > 0 {
		return errors.Join(errors.Join(other...), errOrNil(out))
	}
	if len(out) == 0 {
		return nil
	}
	if len(out) == 1 {
		return out[0]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// errOrNil is es as an error, nil when empty.
func errOrNil(es config.Errors) error {
	if len(es) == 0 {
		return nil
	}
	return es
}

// builtinTools registers the built-in tools (docs/design.md §9) in reg: current_time,
// list_files, read_file and write_file, the last three confined to workspace.
func builtinTools(reg *tool.Registry, workspace string) error {
	for _, t := range []struct {
		t          tool.Tool
		idempotent bool
	}{
		{tool.CurrentTime(nil), true},
		{tool.ListFiles(workspace), true},
		{tool.ReadFile(workspace), true},
		{tool.WriteFile(workspace), true},
	} {
		if err := reg.Register(t.t, t.idempotent); err != nil {
			return err
		}
	}
	return nil
}

// defaultTools is the allowlist (after the ask tools) of the built-in
// default agent, and of a configured agent without `tools` (wave 1: the
// workspace tools with side effects are offered only when configured).
var defaultTools = []string{"current_time", "list_files"}

// scriptedTools are added to the built-in agent when its model is scripted
// (the demo writes a file, under approval: approval.DefaultRules).
var scriptedTools = []string{"read_file", "write_file"}

// configAgents turns the file's agents into the runner's (docs/design.md §9). It
// registers the built-in tools in reg. An agent's model is its own, else
// defaultModel (--model, LUBAN_MODEL or server.model); providers are made
// once per model name. Its allowlist is its askTools (default both) then
// its tools, each glob expanded to the registered tools it matches (sorted);
// a plain name that is not registered is an error naming the file and line.
// With no agents in the file it returns nil, and the caller keeps the
// built-in default agent.
func configAgents(file string, f *config.File, reg *tool.Registry, workspace, defaultModel string, providers map[string]model.Provider, getenv func(string) string) ([]*agent.Agent, error) {
	if err := builtinTools(reg, workspace); err != nil {
		return nil, err
	}
	if providers == nil {
		providers = map[string]model.Provider{}
	}
	var errs config.Errors
	var out []*agent.Agent
	for i, ca := range f.Agents {
		key := fmt.Sprintf("agents[%d]", i)
		spec := or(ca.Model, defaultModel)
		prov, ok := providers[spec]
		if !ok {
			p, err := providerFor(spec, getenv)
			if err != nil {
				errs = append(errs, &config.Error{File: file, Line: ca.Line, Key: key + ".model", Msg: err.Error()})
				continue
			}
			providers[spec], prov = p, p
		}
		allow := tool.Allowlist{}
		ask := ca.AskTools
		if ask == nil {
			ask = []string{api.ToolAskUser, api.ToolAskUserBatch}
		}
		allow = append(allow, ask...)
		patterns := ca.Tools
		lines := ca.ToolLines
		if patterns == nil {
			patterns = defaultTools
			lines = make([]int, len(patterns))
		}
		for j, p := range patterns {
			if mcpTool(f, p) {
				// An MCP server's tool by name: its server may list it
				// later (down at start); the allowlist keeps the name.
				if !allow.Allows(p) {
					allow = append(allow, p)
				}
				continue
			}
			names, err := expandTools(reg, p)
			if err != nil {
				errs = append(errs, &config.Error{File: file, Line: lines[j], Key: fmt.Sprintf("%s.tools[%d]", key, j), Msg: err.Error()})
				continue
			}
			for _, n := range names {
				if !allow.Allows(n) {
					allow = append(allow, n)
				}
			}
			if tool.IsGlob(p) && len(f.MCP.Servers) > 0 {
				// The glob itself stays: tools an MCP server lists later
				// (at start, on tools/list_changed) match it then.
				allow = append(allow, p)
			}
		}
		out = append(out, &agent.Agent{Name: ca.Name, System: ca.Instructions, Provider: prov, Tools: allow, MaxSteps: ca.MaxSteps, Approval: ca.Approval,
			Routes: ca.Routes})
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}

// mcpTool reports whether name is "<server>__<tool>" of a server in f's
// mcp.servers (docs/design.md §11).
func mcpTool(f *config.File, name string) bool {
	server, rest, ok := strings.Cut(name, "__")
	if !ok || rest == "" || tool.IsGlob(name) {
		return false
	}
	for _, s := range f.MCP.Servers {
		if s.Name == server {
			return true
		}
	}
	return false
}

// expandTools returns the registered tools a pattern names: itself when it
// is a plain name (an error when not registered), or every registered
// non-ask tool its glob matches, sorted (possibly none: tools of an MCP
// server may appear later). Ask tools come from askTools or by plain name.
func expandTools(reg *tool.Registry, p string) ([]string, error) {
	if !strings.ContainsAny(p, `*?[\`) {
		if _, ok := reg.Get(p); !ok {
			return nil, fmt.Errorf("no tool named %q is registered (registered: %s)", p, strings.Join(reg.Names(), ", "))
		}
		return []string{p}, nil
	}
	var out []string
	for _, n := range reg.Names() {
		if ok, _ := path.Match(p, n); ok && !askuser.IsAskTool(n) {
			out = append(out, n)
		}
	}
	return out, nil
}

// applyServerConfig fills the serve settings from the file's server section
// where neither the flag nor its environment twin was given (docs/design.md §9:
// flags and env twins override the file).
func applyServerConfig(fs *flag.FlagSet, cfg *serveConfig, s config.Server, getenv func(string) string) {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	set := func(flagName, env string) bool { return !given[flagName] && getenv(env) == "" }
	str := func(dst *string, flagName, env, v string) {
		if v != "" && set(flagName, env) {
			*dst = v
		}
	}
	dur := func(dst *time.Duration, flagName, env string, v time.Duration) {
		if v > 0 && set(flagName, env) {
			*dst = v
		}
	}
	str(&cfg.addr, "addr", "LUBAN_ADDR", s.Addr)
	if s.DB != "" && set("db", "LUBAN_DB") {
		cfg.db, cfg.dbLine = s.DB, s.DBLine
	}
	str(&cfg.model, "model", "LUBAN_MODEL", s.Model)
	if s.Workspace != "" && set("workspace", "LUBAN_WORKSPACE") {
		cfg.workspace, cfg.workspaceLine = s.Workspace, s.WorkspaceLine
	}
	str(&cfg.authToken, "auth-token", "LUBAN_AUTH_TOKEN", strings.Join(s.AuthTokens, ","))
	if s.AskTools != nil && set("ask-tools", "LUBAN_ASK_TOOLS") {
		cfg.askTools = strings.Join(s.AskTools, ",")
	}
	dur(&cfg.ttl, "interaction-ttl", "LUBAN_INTERACTION_TTL", s.InteractionTTL)
	dur(&cfg.lease, "lease", "LUBAN_LEASE", s.Lease)
	dur(&cfg.heartbeat, "sse-heartbeat", "LUBAN_SSE_HEARTBEAT", s.SSEHeartbeat)
	str(&cfg.publicURL, "public-url", "LUBAN_PUBLIC_URL", s.PublicURL)
	str(&cfg.signingKeys, "signing-keys", "LUBAN_SIGNING_KEYS", s.SigningKeys)
}

// loadConfig reads the --config file (LUBAN_CONFIG); nil without one.
func loadConfig(file string, getenv func(string) string) (*config.File, error) {
	if file == "" {
		return nil, nil
	}
	f, err := config.ReadFile(file, getenv)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &usageError{fmt.Sprintf("--config (LUBAN_CONFIG) %s: no such file", file)}
	}
	if err != nil {
		return nil, err // a partly valid file is never served
	}
	return f, nil
}

// describeMatch says which questions route r takes, for luban config
// check: "approval of refund when args.amount > 1000", "every question".
func describeMatch(r config.Route) string {
	var parts []string
	if r.Kind != "" {
		parts = append(parts, r.Kind)
	} else {
		parts = append(parts, "every question")
	}
	if r.Tool != "" {
		parts = append(parts, "of "+r.Tool)
	}
	if r.When != nil {
		parts = append(parts, "when "+r.When.String())
	}
	return strings.Join(parts, " ")
}

// describeRoute lists route r's settings after its assignees: quorum,
// self-approval, timeout, reminders, escalation, onTimeout.
func describeRoute(r config.Route) string {
	var out string
	if r.Quorum > 1 {
		out += fmt.Sprintf(", quorum %d", r.Quorum)
	}
	if r.SelfApproval != nil && !*r.SelfApproval {
		out += ", no self-approval"
	}
	if r.Timeout > 0 {
		out += ", timeout " + r.Timeout.String()
	}
	for _, d := range r.Remind {
		out += ", remind " + d.String()
	}
	if e := r.Escalate; e != nil {
		out += fmt.Sprintf(", escalate after %s to %s", e.After, strings.Join(e.To, ", "))
	}
	if r.OnTimeout != "" {
		out += ", on timeout " + r.OnTimeout
	}
	return out
}

// directory makes the people of the file's `people:` (docs/design.md §16);
// nil without a file or without people (every token its own principal).
func directory(f *config.File) (*principal.Directory, error) {
	if f == nil || len(f.People) == 0 {
		return nil, nil
	}
	ps := make([]principal.Person, len(f.People))
	for i, p := range f.People {
		ps[i] = principal.Person{ID: p.ID, Name: p.Name, Email: p.Email, Slack: p.Slack, Tokens: p.Tokens, Groups: p.Groups}
	}
	return principal.NewDirectory(ps)
}

// printPeople writes one sign-in line per person: their link with the
// token when the token is written in the file as it is (no secret of the
// environment), else the link with a placeholder.
func printPeople(w io.Writer, url string, ps []config.Person) {
	for _, p := range ps {
		who := p.ID
		if p.Name != p.ID {
			who += " (" + p.Name + ")"
		}
		switch {
		case len(p.Tokens) == 0:
			fmt.Fprintf(w, "%s: no token (single sign-on only)\n", who)
		case p.TokenInFile[0]:
			fmt.Fprintf(w, "%s: open %s?token=%s\n", who, url, p.Tokens[0])
		default:
			fmt.Fprintf(w, "%s: open %s?token=<%s's token>\n", who, url, p.ID)
		}
	}
}
