package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/telemetry"
	"github.com/lubanhq/luban/tool"
	"github.com/lubanhq/luban/web"
)

// Serve is `luban serve`. Every flag has an environment twin (docs/design.md §8);
// a flag given on the command line wins over its variable.
type Serve struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// Self is the path of this luban binary. The built-in scripted demo
	// starts `Self demo-mcp` as its MCP server "demo" (demoServer); empty:
	// the demo runs without it.
	Self string
}

type serveConfig struct {
	addr, db, model, workspace, authToken, askTools, configFile string
	publicURL, signingKeys                                      string
	workspaceLine                                               int // the config file's line of server.workspace when workspace came from it
	dbLine                                                      int // the config file's line of server.db when db came from it
	ttl, lease, heartbeat                                       time.Duration
	logFormat, logLevel                                         string
	retain, retainAudit                                         days
	env                                                         *envReader
}

// tokenPath is the file `luban serve --db db` keeps the token it generates
// in: luban.token beside a SQLite file, or in the directory of the default
// database for postgres://… and memory. `luban chat --db db` reads it.
func tokenPath(db string, getenv func(string) string) string {
	dir := filepath.Dir(defaultDB(getenv))
	if db != "" && db != "memory" && !strings.Contains(db, "://") {
		dir = filepath.Dir(db)
	}
	return filepath.Join(dir, "luban.token")
}

// keysPath is the signing key file (docs/design.md §17) of `luban serve
// --db db`: luban.keys.json where tokenPath keeps luban.token (beside a
// SQLite file; for postgres://… and memory in the directory of the
// default database, unless --signing-keys names one).
func keysPath(db string, getenv func(string) string) string {
	return filepath.Join(filepath.Dir(tokenPath(db, getenv)), "luban.keys.json")
}

func defaultDB(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "luban", "luban.db")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "luban", "luban.db")
	}
	return "luban.db"
}

// flags defines serve's flags on cfg; their defaults come from the
// environment twins, and a twin that does not parse is kept in cfg.env.
func (c *Serve) flags(cfg *serveConfig) *flag.FlagSet {
	e := &envReader{getenv: c.Getenv}
	cfg.env = e
	env, envDur := e.str, e.dur
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&cfg.addr, "addr", env("LUBAN_ADDR", "127.0.0.1:8080"), "listen address (LUBAN_ADDR)")
	fs.StringVar(&cfg.db, "db", env("LUBAN_DB", defaultDB(c.Getenv)), "SQLite file path, postgres://… URL, or memory (LUBAN_DB)")
	fs.StringVar(&cfg.model, "model", env("LUBAN_MODEL", ""), "openai:<name>, anthropic:<name>, scripted or scripted:<file> (LUBAN_MODEL); default scripted when no API key is set")
	wd, _ := os.Getwd()
	fs.StringVar(&cfg.workspace, "workspace", env("LUBAN_WORKSPACE", wd), "root directory that `directory` answers must stay inside (LUBAN_WORKSPACE)")
	fs.DurationVar(&cfg.ttl, "interaction-ttl", envDur("LUBAN_INTERACTION_TTL", agent.DefaultInteractionTTL), "how long a question waits for an answer (LUBAN_INTERACTION_TTL)")
	fs.StringVar(&cfg.authToken, "auth-token", env("LUBAN_AUTH_TOKEN", ""), "bearer token, or a comma list of tokens (one principal each) (LUBAN_AUTH_TOKEN); default: a random one, printed")
	fs.StringVar(&cfg.askTools, "ask-tools", env("LUBAN_ASK_TOOLS", "ask_user,AskUser"), "ask tools offered to the model: ask_user, AskUser or both (LUBAN_ASK_TOOLS)")
	fs.DurationVar(&cfg.lease, "lease", envDur("LUBAN_LEASE", agent.DefaultLeaseDuration), "how long a run stays owned by a process without a heartbeat (LUBAN_LEASE)")
	fs.StringVar(&cfg.publicURL, "public-url", env("LUBAN_PUBLIC_URL", ""), "absolute URL people reach this server at, the base of action links in mail and Slack (LUBAN_PUBLIC_URL); default: the listen address")
	fs.StringVar(&cfg.signingKeys, "signing-keys", env("LUBAN_SIGNING_KEYS", ""), "file of the Ed25519 keys that sign receipts and action links, made once (mode 0600) when missing (LUBAN_SIGNING_KEYS); default: luban.keys.json beside the database (docs/operations.md)")
	fs.StringVar(&cfg.configFile, "config", env("LUBAN_CONFIG", ""), "YAML configuration file: agents, tools, approvals (LUBAN_CONFIG; docs/agents.md); flags and their variables override it")
	fs.DurationVar(&cfg.heartbeat, "sse-heartbeat", envDur("LUBAN_SSE_HEARTBEAT", 15*time.Second), "interval of SSE heartbeat comments (LUBAN_SSE_HEARTBEAT)")
	fs.StringVar(&cfg.logFormat, "log-format", env("LUBAN_LOG_FORMAT", "text"), "log format on stderr: text or json (LUBAN_LOG_FORMAT)")
	fs.StringVar(&cfg.logLevel, "log-level", env("LUBAN_LOG_LEVEL", "info"), "least level logged: debug, info, warn or error (LUBAN_LOG_LEVEL)")
	cfg.retain = e.days("LUBAN_RETAIN", days(30*24*time.Hour))
	fs.Var(&cfg.retain, "retain", "keep the events and trace of a session without an active run this long after its last activity, e.g. 30d or 720h; 0 keeps them forever (LUBAN_RETAIN)")
	cfg.retainAudit = e.days("LUBAN_RETAIN_AUDIT", days(365*24*time.Hour))
	fs.Var(&cfg.retainAudit, "retain-audit", "keep audit entries this long, e.g. 365d; 0 keeps them forever (LUBAN_RETAIN_AUDIT)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: luban serve [flags]\n\nServes the HTTP API, the SSE streams and the page. Every flag has an\nenvironment twin (in parentheses); a flag given here wins over it.\nTraces go to OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	return fs
}

// Run parses args and serves until ctx is done (SIGINT/SIGTERM), then drains.
func (c *Serve) Run(ctx context.Context, args []string) error {
	var cfg serveConfig
	fs := c.flags(&cfg)
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	if err := cfg.env.Err(); err != nil {
		return err
	}
	log, err := newLogger(c.Stderr, cfg.logFormat, cfg.logLevel)
	if err != nil {
		return err
	}
	file, err := loadConfig(cfg.configFile, c.Getenv)
	if err != nil {
		return err
	}
	if file != nil {
		applyServerConfig(fs, &cfg, file.Server, c.Getenv)
	}

	for _, d := range []struct {
		v         time.Duration
		flag, env string
	}{
		{cfg.ttl, "interaction-ttl", "LUBAN_INTERACTION_TTL"},
		{cfg.lease, "lease", "LUBAN_LEASE"},
		{cfg.heartbeat, "sse-heartbeat", "LUBAN_SSE_HEARTBEAT"},
	} {
		if d.v <= 0 {
			return &usageError{fmt.Sprintf("--%s (%s) %q: must be a positive duration such as 30s, 15m or 24h", d.flag, d.env, d.v)}
		}
	}
	askTools, err := parseAskTools(cfg.askTools)
	if err != nil {
		return &usageError{err.Error()}
	}
	wsFrom := workspaceOrigin{file: cfg.configFile, line: cfg.workspaceLine}
	fs.Visit(func(f *flag.Flag) { wsFrom.flag = wsFrom.flag || f.Name == "workspace" })
	wsFrom.env = !wsFrom.flag && cfg.workspaceLine == 0 && c.Getenv("LUBAN_WORKSPACE") != ""
	workspace, err := checkWorkspace(cfg.workspace, wsFrom)
	if err != nil {
		return err
	}
	provider, err := providerFor(cfg.model, c.Getenv)
	if err != nil {
		return err
	}
	if err := checkAddr(cfg.addr); err != nil {
		return err
	}
	if cfg.publicURL != "" {
		if err := config.CheckPublicURL(cfg.publicURL); err != nil {
			return &usageError{fmt.Sprintf("--public-url (LUBAN_PUBLIC_URL): %v", err)}
		}
	}
	if err := checkDBDir(cfg.db, c.Getenv, cfg.configFile, cfg.dbLine); err != nil {
		return err
	}
	// Listen before the store is opened: an address that cannot be served
	// leaves no database or token file behind.
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.addr, err)
	}
	defer ln.Close()
	rawStore, err := openStore(ctx, cfg.db)
	if err != nil {
		return err
	}
	defer rawStore.Close()
	obs, err := c.observability(ctx, log, cfg, rawStore)
	if err != nil {
		return err
	}
	defer obs.shutdown()
	st := obs.store

	reg := tool.NewRegistry()
	var mcpServers []config.MCPServer
	if file != nil {
		mcpServers = file.MCP.Servers
	}
	var agents []*agent.Agent
	if file != nil && len(file.Agents) > 0 {
		if agents, err = configAgents(cfg.configFile, file, reg, workspace, cfg.model, map[string]model.Provider{cfg.model: provider}, c.Getenv); err != nil {
			return err
		}
	} else {
		if err := builtinTools(reg, workspace); err != nil {
			return err
		}
		// LUBAN_AGENT names the agent (default "default"). Stored runs remember
		// it; a run whose agent is gone is not resumable (docs/design.md §4, issue 5).
		agentName := c.Getenv("LUBAN_AGENT")
		if agentName == "" {
			agentName = "default"
		}
		allow := append(tool.Allowlist{}, askTools...)
		allow = append(allow, defaultTools...)
		if strings.HasPrefix(provider.Name(), "scripted:") {
			// The demo's last step writes a file under approval (docs/design.md §10).
			allow = append(allow, scriptedTools...)
		}
		if file != nil {
			// The built-in agent offers every tool of every MCP server.
			for _, s := range file.MCP.Servers {
				allow = append(allow, s.Name+mcpclient.Separator+"*")
			}
		}
		if demo, ok := demoServer(c.Self, cfg.model, file, provider); ok {
			// The demo asks a form through an MCP server of its own (docs/design.md §11).
			mcpServers = append(mcpServers, demo)
			allow = append(allow, demo.Name+mcpclient.Separator+"*")
		}
		agents = []*agent.Agent{{Name: agentName, Provider: provider, Tools: allow}}
	}
	obs.instrumentTools(reg)
	obs.instrumentAgents(agents)
	// OAuth grants of MCP servers are sealed beside the database, like the
	// generated token (docs/design.md §11, "OAuth").
	// The OAuth callback is on server.publicUrl when set, else on the
	// listen address (localhost for one without a host).
	oauthBase := cfg.publicURL
	if oauthBase == "" {
		oauthBase = listenURL(ln.Addr().String())
	}
	mcps := startMCP(ctx, mcpServers, reg, log, oauthBase, mcpclient.NewSecretFile(filepath.Dir(tokenPath(cfg.db, c.Getenv))))
	defer mcps.Close()
	keyFile := cfg.signingKeys
	if keyFile == "" {
		keyFile = keysPath(cfg.db, c.Getenv)
	}
	var keys *signing.Keys
	keysCreated := false
	if cfg.db == "memory" && cfg.signingKeys == "" {
		// Nothing outlives a memory database: neither do its keys.
		keys, err = signing.Generate()
	} else {
		keys, keysCreated, err = signing.LoadOrCreate(keyFile)
	}
	if err != nil {
		return fmt.Errorf("--signing-keys (LUBAN_SIGNING_KEYS): %w", err)
	}
	if keysCreated {
		log.Info("made a signing key", "file", keyFile, "kid", keys.KID())
	}
	dir, err := directory(file)
	if err != nil {
		return err
	}
	instance := agent.NewID("inst")
	opts := agent.Options{
		Signer: keys,
		Store:  st, Tools: reg, Workspace: workspace, InteractionTTL: cfg.ttl, LeaseDuration: cfg.lease, Logger: log, InstanceID: instance,
		People:    dir,
		EventPoll: cfg.heartbeat,
		Agents:    agents,
		Step:      telemetry.StepSpan,
	}
	// LUBAN_TEST_TOOLS and LUBAN_FAULT work only in a build with the
	// lubantest tag (testtools.go); any other build refuses them.
	if err := testHooks(c.Getenv, &opts, workspace, log); err != nil {
		return err
	}
	runner, err := agent.New(opts)
	if err != nil {
		return err
	}

	tokens, tokenFile, err := c.tokens(cfg, dir.Len() > 0)
	if err != nil {
		return err
	}
	var sso *server.OIDC
	if file != nil && file.Auth.OIDC != nil {
		o := file.Auth.OIDC
		sso = &server.OIDC{Issuer: o.Issuer, ClientID: o.ClientID, ClientSecret: o.ClientSecret, Claim: o.Claim}
	}
	url := "http://" + ln.Addr().String() + "/"
	// Notifications carry signed action links on server.publicUrl
	// (docs/design.md §17, §29).
	links := &signing.Links{Keys: keys, Base: publicURL(cfg.publicURL, ln.Addr().String()), ExpiresAt: runner.QuestionExpiry}
	notify, err := newNotifiers(st, file, dir, runner.Assignees, links)
	if err != nil {
		return err
	}
	srv, err := server.New(server.Options{Runner: runner, Tokens: tokens, People: dir, OIDC: sso, Web: web.Handler(), Heartbeat: cfg.heartbeat, AskTools: askTools, Logger: log,
		Metrics: obs.metrics, ReadyChecks: mcpReadyChecks(mcps), MCPAuth: mcps, Keys: keys, PublicURL: publicURL(cfg.publicURL, ln.Addr().String()),
		Slack: notify.slack})
	if err != nil {
		return err
	}
	hooks, err := newDispatcher(st, file, instance, log, obs.metrics, c.Getenv, notify.channels)
	if err != nil {
		return err
	}
	// A SQLite database has this process's dispatcher alone: with nothing
	// to send, a feed entry needs no outbox row (sqlite.Store.SetOutbox).
	if sq, ok := rawStore.(*sqlite.Store); ok {
		sq.SetOutbox(hooks.Sends())
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	hs.RegisterOnShutdown(srv.Close)

	runCtx, stopRunner := context.WithCancel(context.Background())
	runnerDone := make(chan struct{})
	go func() { defer close(runnerDone); _ = runner.Serve(runCtx) }()
	go obs.prune(runCtx)
	hooksDone := make(chan struct{})
	go func() { defer close(hooksDone); hooks.Run(runCtx) }()

	switch {
	case tokenFile != "":
		fmt.Fprintf(c.Stdout, "luban serving on %s\nopen %s?token=%s\n(token kept in %s; set --auth-token to choose your own)\n", url, url, tokens[0], tokenFile)
	case dir.Len() > 0:
		fmt.Fprintf(c.Stdout, "luban serving on %s\n", url)
		printPeople(c.Stdout, url, file.People)
		if len(tokens) > 0 {
			fmt.Fprintf(c.Stdout, "or open %s?token=<your token> with a token of --auth-token, LUBAN_AUTH_TOKEN or the config's server.authTokens\n", url)
		}
	default:
		fmt.Fprintf(c.Stdout, "luban serving on %s\nopen %s?token=<your token> (one of --auth-token, LUBAN_AUTH_TOKEN or the config's server.authTokens)\n", url, url)
	}
	fmt.Fprintf(c.Stdout, "model %s · database %s\n", agents[0].Provider.Name(), describeDB(cfg.db))
	if len(agents) > 1 {
		for _, a := range agents {
			fmt.Fprintf(c.Stdout, "agent %s · model %s\n", a.Name, a.Provider.Name())
		}
	}

	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		stopRunner()
		<-runnerDone
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: ending streams, checkpointing runs")
	shCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = hs.Shutdown(shCtx)
	stopRunner()
	<-runnerDone
	<-hooksDone
	// Every run is checkpointed: stop the MCP servers (stdio children exit).
	mcps.Close()
	return err
}

// publicURL is the base of action links: server.publicUrl (--public-url)
// when set, else http:// and the address the server listens on.
func publicURL(configured, listen string) string {
	if configured != "" {
		return strings.TrimSuffix(configured, "/")
	}
	return "http://" + listen
}

func parseAskTools(v string) ([]string, error) {
	var out []string
	for _, t := range strings.Split(v, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if !askuser.IsAskTool(t) {
			return nil, fmt.Errorf("--ask-tools (LUBAN_ASK_TOOLS) %q: not an ask tool (use ask_user, AskUser or both)", t)
		}
		out = append(out, t)
	}
	return out, nil
}

// checkAddr refuses a listen address that is not host:port with a port
// number or service name (a usage error naming --addr and LUBAN_ADDR);
// an empty host means every interface.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err == nil && port == "" {
		err = errors.New("missing port")
	}
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return &usageError{fmt.Sprintf("--addr (LUBAN_ADDR) %q: must be host:port such as 127.0.0.1:8080 or :8080 (%v)", addr, err)}
	}
	return nil
}

// tokens returns the accepted bearer tokens of principals of their own:
// the --auth-token list, or else (without people, who have their tokens)
// one token generated once and kept in a file (mode 0600) next to the
// SQLite database (in the data directory for other databases), so that a
// restart keeps the same principal and its sessions stay reachable. The
// second result names that file ("" when none was generated).
func (c *Serve) tokens(cfg serveConfig, people bool) ([]string, string, error) {
	var out []string
	for _, t := range strings.Split(cfg.authToken, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	if len(out) > 0 || people {
		return out, "", nil
	}
	path := tokenPath(cfg.db, c.Getenv)
	dir := filepath.Dir(path)
	if b, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(b))) >= 16 {
		return []string{strings.TrimSpace(string(b))}, path, nil
	}
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, "", err
	}
	tok := hex.EncodeToString(b[:])
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("keep the generated token: %w", err)
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return nil, "", fmt.Errorf("keep the generated token: %w", err)
	}
	return []string{tok}, path, nil
}

func openStore(ctx context.Context, db string) (store.Store, error) {
	if strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://") {
		return openPostgres(ctx, db)
	}
	return sqlite.Open(ctx, db, nil)
}

// checkDBDir refuses a SQLite database path other than the default whose
// directory does not exist, naming where the path came from (file:line of
// server.db when line > 0, else --db and its twin LUBAN_DB) and that
// directory, so that a typo creates no tree of directories; the default data
// directory is created (0700) by the store.
func checkDBDir(db string, getenv func(string) string, file string, line int) error {
	if db == "memory" || isPostgres(db) || db == defaultDB(getenv) {
		return nil
	}
	dir := filepath.Dir(db)
	fi, err := os.Stat(dir)
	var msg string
	switch {
	case errors.Is(err, os.ErrNotExist):
		msg = fmt.Sprintf("directory %s does not exist; create it first", dir)
	case err != nil:
		msg = err.Error()
	case !fi.IsDir():
		msg = fmt.Sprintf("%s is not a directory", dir)
	default:
		return nil
	}
	if line > 0 {
		return &config.Error{File: file, Line: line, Key: "server.db", Msg: fmt.Sprintf("%s: %s", db, msg)}
	}
	return &usageError{fmt.Sprintf("--db (LUBAN_DB) %s: %s", db, msg)}
}

func describeDB(db string) string {
	if i := strings.Index(db, "@"); i > 0 && strings.Contains(db, "://") {
		return db[:strings.Index(db, "://")+3] + "…" + db[i:]
	}
	return db
}
