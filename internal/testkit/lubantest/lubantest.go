// Package lubantest starts real luban servers on loopback for tests and
// reads their raw SSE bytes. Evidence (raw SSE, trace) of a failed test is
// written under $LUBAN_ARTIFACTS (default: artifacts/ at the repository root).
package lubantest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/store/sqlite/sqlitetest"
	"github.com/lubanhq/luban/tool"
)

// Options configures Start. Provider is required.
type Options struct {
	Provider model.Provider
	// DB is a SQLite path ("memory" allowed). Default: a file in t.TempDir().
	// A path where no file exists yet gets a copy of a database migrated
	// once per test binary (sqlitetest.Template): what sqlite.Open leaves in
	// a new file, without running every migration again.
	DB string
	// Store, when set, is used instead of opening DB (e.g. PostgreSQL).
	Store store.Store
	// Tools are registered and allowed beside the ask tools.
	Tools []tool.Tool
	// NonIdempotent names tools of Tools that must not be re-run after a crash.
	NonIdempotent []string
	// AskTools offered; default both.
	AskTools  []string
	TTL       time.Duration
	Workspace string
	// Tokens; default "test-token" and "other-token" (two principals).
	Tokens        []string
	Heartbeat     time.Duration
	SweepInterval time.Duration
	Lease         time.Duration
	AgentName     string
	// Approval is the agent's approval policy (docs/design.md §10); the zero value
	// asks before write_file only.
	Approval approval.Policy
	// MoreAgents are configured after the default agent (docs/design.md §9); their
	// tools must be registered (Tools).
	MoreAgents []*agent.Agent
	// Now is the runner's clock (agent.Options.Now); nil means time.Now.
	// Tests pass a clock they can move forward to reach expiresAt without
	// sleeping.
	Now func() time.Time
	// Web is server.Options.Web (the page); nil serves 404 outside /api.
	Web http.Handler
	// BodyReadTimeout is server.Options.BodyReadTimeout; 0 is the server's
	// default.
	BodyReadTimeout time.Duration
	// People is server.Options.People (docs/design.md §16); nil: Tokens
	// only.
	People *principal.Directory
	// OIDC is server.Options.OIDC (single sign-on); nil: none.
	OIDC *server.OIDC
	// MCPAuth is server.Options.MCPAuth (MCP servers' OAuth); nil: none.
	MCPAuth server.MCPAuthorizer
	// Keys sign receipts (agent.Options.Signer) and action links, and are
	// served as the JWKS (server.Options.Keys); nil: nothing is signed.
	Keys *signing.Keys
	// Slack is server.Options.Slack (POST /api/slack/interactions); nil:
	// none. Its fields may be set after Start, before the first click.
	Slack *server.Slack
	// Routes are the default agent's routes (docs/design.md §16); People
	// is also the runner's directory.
	Routes []agent.Route
}

// migrated is the database Start copies to a new DB path
// (sqlitetest.Template).
var migrated = &sqlitetest.Template{Make: func(ctx context.Context, path string) error {
	st, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	return st.Close()
}}

// MigratedDB returns the path of a new SQLite database file in a
// directory of t, at the current schema: a copy of the database migrated
// once per test binary (what sqlite.Open leaves in a new file).
func MigratedDB(t testing.TB) string {
	t.Helper()
	return migrated.Path(t)
}

// Server is a running luban on loopback.
type Server struct {
	t      testing.TB
	URL    string
	Token  string
	Runner *agent.Runner
	Store  store.Store
	DB     string
	http   *httptest.Server
	srv    *server.Server
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
	mu     sync.Mutex
	raw    map[string]*bytes.Buffer
}

// Start starts a server; it is stopped by t.Cleanup (or Stop).
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.DB == "" {
		o.DB = filepath.Join(t.TempDir(), "luban.db")
	}
	if len(o.Tokens) == 0 {
		o.Tokens = []string{"test-token", "other-token"}
	}
	if len(o.AskTools) == 0 {
		o.AskTools = []string{"ask_user", "AskUser"}
	}
	if o.SweepInterval == 0 {
		o.SweepInterval = 50 * time.Millisecond
	}
	if o.Workspace == "" {
		o.Workspace = t.TempDir()
	}
	st := o.Store
	if st == nil {
		if o.DB != "memory" {
			if _, err := os.Stat(o.DB); errors.Is(err, fs.ErrNotExist) {
				require.NoError(t, os.MkdirAll(filepath.Dir(o.DB), 0o700))
				require.NoError(t, migrated.CopyTo(o.DB))
			}
		}
		var err error
		st, err = sqlite.Open(context.Background(), o.DB, nil)
		require.NoError(t, err)
	}
	reg := tool.NewRegistry()
	allow := tool.Allowlist(append([]string{}, o.AskTools...))
	for _, tl := range o.Tools {
		idem := true
		for _, n := range o.NonIdempotent {
			if n == tl.Spec().Name {
				idem = false
			}
		}
		require.NoError(t, reg.Register(tl, idem))
		allow = append(allow, tl.Spec().Name)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("LUBAN_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	var signer agent.ReceiptSigner
	if o.Keys != nil {
		signer = o.Keys
	}
	runner, err := agent.New(agent.Options{Signer: signer, Store: st, Tools: reg, Workspace: o.Workspace, InteractionTTL: o.TTL, SweepInterval: o.SweepInterval, DeadlinePoll: o.SweepInterval,
		LeaseDuration: o.Lease, Logger: log, Now: o.Now, People: o.People,
		Agents: append([]*agent.Agent{{Name: o.AgentName, Provider: o.Provider, Tools: allow, Approval: o.Approval, Routes: o.Routes}}, o.MoreAgents...)})
	require.NoError(t, err)
	srv, err := server.New(server.Options{Runner: runner, Tokens: o.Tokens, Heartbeat: o.Heartbeat, AskTools: o.AskTools, Logger: log,
		Web: o.Web, BodyReadTimeout: o.BodyReadTimeout, People: o.People, OIDC: o.OIDC, MCPAuth: o.MCPAuth, Keys: o.Keys, Slack: o.Slack})
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.RegisterOnShutdown(srv.Close)
	hs.Start()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{t: t, URL: hs.URL, Token: o.Tokens[0], Runner: runner, Store: st, DB: o.DB, http: hs, srv: srv, cancel: cancel, done: make(chan struct{}), raw: map[string]*bytes.Buffer{}}
	go func() { defer close(s.done); _ = runner.Serve(ctx) }()
	t.Cleanup(func() {
		s.Stop()
		if KeepEvidence(t) {
			s.saveArtifacts()
		}
	})
	return s
}

// Stop ends streams, stops the runner (runs keep their checkpoints) and
// closes the store. A new Start on the same DB continues from there.
func (s *Server) Stop() {
	s.once.Do(func() {
		s.srv.Close()
		s.http.CloseClientConnections()
		s.http.Close()
		s.cancel()
		<-s.done
		s.Store.Close()
	})
}

func (s *Server) record(name string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := s.raw[name]
	if buf == nil {
		buf = &bytes.Buffer{}
		s.raw[name] = buf
	}
	buf.Write(b)
}

// KeepEvidence reports whether t's evidence (raw SSE, model requests,
// traces) is written: always for a failed test, and for every test when
// LUBAN_EVIDENCE=1 (CI sets it: docs/design.md §7 keeps the raw request, the raw SSE,
// the trace and the ToolResult of each acceptance row).
func KeepEvidence(t testing.TB) bool {
	return t.Failed() || os.Getenv("LUBAN_EVIDENCE") == "1"
}

// ArtifactDir is the directory of t's evidence: $LUBAN_ARTIFACTS (default
// artifacts/ at the repository root) / the test's name.
func ArtifactDir(t testing.TB) string { return artifactDir(t) }

func artifactDir(t testing.TB) string {
	dir := os.Getenv("LUBAN_ARTIFACTS")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "artifacts")
	}
	return filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
}

func (s *Server) saveArtifacts() {
	dir := artifactDir(s.t)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, b := range s.raw {
		_ = os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644)
	}
}

// Request sends an authenticated JSON request (body nil for none) with the
// given token ("" = s.Token) and returns the response; a transport error
// fails the test.
func (s *Server) Request(method, path string, body any, token string, hdr ...string) *http.Response {
	s.t.Helper()
	resp, err := s.TryRequest(method, path, body, token, hdr...)
	require.NoError(s.t, err)
	return resp
}

// TryRequest is Request that returns a transport error (a server killed
// in the middle of the request) instead of failing the test.
func (s *Server) TryRequest(method, path string, body any, token string, hdr ...string) (*http.Response, error) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		case []byte:
			rd = bytes.NewReader(b)
		default:
			j, err := json.Marshal(body)
			require.NoError(s.t, err)
			rd = bytes.NewReader(j)
		}
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	require.NoError(s.t, err)
	if token == "" {
		token = s.Token
	}
	if token != "-" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return http.DefaultClient.Do(req)
}

// JSON sends a request and decodes a JSON response into out (may be nil),
// returning the status code.
func (s *Server) JSON(method, path string, body any, out any) int {
	s.t.Helper()
	resp := s.Request(method, path, body, "")
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	s.record("http.log", []byte(method+" "+path+" -> "+resp.Status+"\n"+string(b)+"\n"))
	if out != nil {
		require.NoError(s.t, json.Unmarshal(b, out), "body: %s", b)
	}
	return resp.StatusCode
}
