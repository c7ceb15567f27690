// Package mcpclient makes luban an MCP client (docs/design.md §11): it connects to
// the servers of the config's mcp.servers (stdio or streamable HTTP, with
// the official go-sdk), registers their tools in the tool registry as
// <server>__<tool> with their JSON Schemas, keeps them current on
// notifications/tools/list_changed, calls them with a timeout, and brings
// a server's elicitations to the person behind the call (tool.Elicitor; a
// 2026-07-28 input_required result becomes a *tool.InputRequired error, so the run
// can keep the question across a restart).
//
// A server that is down at start, or goes down later, is retried with
// backoff (Options.MinBackoff doubling to Options.MaxBackoff) and reported
// in the log and in Status; it is never fatal. Close stops every stdio
// server's process.
package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/internal/schemac"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

// ReceiptMetaKey is the _meta key of a tools/call that carries the signed
// receipt of the person's approval of the call (docs/design.md §29): a
// compact JWS over api.ReceiptClaims, verifiable against the luban
// server's GET /.well-known/luban/keys. Absent when the call needed no
// approval of its own.
const ReceiptMetaKey = "luban/approvalReceipt"

// DefaultTimeout bounds a tool call of a server without timeout in the
// config. Time a person spends on the server's elicitation does not count.
const DefaultTimeout = 2 * time.Minute

// DefaultConnectTimeout bounds connecting to a server without
// connectTimeout in the config: starting it (stdio) or reaching it (HTTP),
// the initialize handshake, and the first tools/list. Generous, because a
// first `npx -y` downloads the server before it answers.
const DefaultConnectTimeout = 2 * time.Minute

// maxConnectTimeout caps the connect timeout, which doubles after each
// attempt that ran out of it (a download killed half-way would otherwise
// start again from nothing, and never finish, on every attempt).
const maxConnectTimeout = 10 * time.Minute

// Separator joins a server's name and its tool's name: <server>__<tool>.
const Separator = "__"

// Options configures a Manager.
type Options struct {
	// Registry receives every server's tools (required).
	Registry *tool.Registry
	// Logger logs connections, failures and retries (nil: slog.Default).
	Logger *slog.Logger
	// Version is luban's version, sent as clientInfo.version.
	Version string
	// MinBackoff and MaxBackoff bound the wait between two connection
	// attempts to a server that is down (defaults 1 s and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// Environ is luban's environment, from which a stdio server gets only
	// the variables Inherited lets through (nil: os.Environ).
	Environ func() []string

	// RedirectURL is luban's OAuth callback, the public URL's
	// /oauth/callback (docs/design.md §11, "OAuth"): required by a server
	// with oauth, which is otherwise reported down with the reason.
	RedirectURL string
	// Tokens keeps the servers' OAuth grants across restarts (nil: they
	// last until luban stops).
	Tokens TokenStore
	// AuthorizationTTL bounds one authorization round, from its URL to the
	// person's return (default DefaultAuthorizationTTL).
	AuthorizationTTL time.Duration
	// OAuthHTTPClient makes the OAuth requests: metadata, registration,
	// token (nil: a client with a 30 s timeout that follows redirects
	// only within an origin).
	OAuthHTTPClient *http.Client
	// OnAuthorization, when set, is told when a server starts waiting for
	// a person to authorize luban (it must not block).
	OnAuthorization func(Authorization)
}

// Manager holds the connections to the configured MCP servers.
type Manager struct {
	opts    Options
	log     *slog.Logger
	servers []*server
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	authMu sync.Mutex
	auths  map[string]*pendingAuth // by state
}

// State is how a server stands: connecting (first attempt running), ready,
// or down (waiting for the next attempt).
type State string

// The states of a server.
const (
	StateConnecting State = "connecting"
	StateReady      State = "ready"
	StateDown       State = "down"
)

// Status is one server as /readyz reports it (docs/design.md §11): its transport
// ("stdio" or "http"), state, number of tools listed, failed attempts since
// it was last ready, when the state began and, while down, when the next
// attempt is due. Error texts stay in the log (/readyz needs no token).
type Status struct {
	Name        string     `json:"name"`
	Transport   string     `json:"transport"`
	State       State      `json:"state"`
	Tools       int        `json:"tools"`
	Failures    int        `json:"failures"`
	Since       time.Time  `json:"since"`
	NextAttempt *time.Time `json:"nextAttempt,omitempty"`
	// Skipped lists the tools of the last tools/list that are not offered
	// to the model (docs/design.md §13): a name a provider refuses, or an
	// inputSchema that does not compile without loading anything.
	Skipped []SkippedTool `json:"skipped,omitempty"`
}

// SkippedTool is a tool a server listed that luban does not offer: Name is
// the tool's name as a Go-quoted ASCII string of at most 80 characters (it
// may hold control or bidi characters), Reason is "invalid_name" or
// "invalid_schema" (the log has the details).
type SkippedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// MaxSkipped bounds Status.Skipped; the log has every skipped tool.
const MaxSkipped = 20

// toolName is what providers accept as a tool's name; a server's tool is
// offered as <server>__<tool>, and that whole name must match.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// New returns a Manager for servers; Start connects.
func New(servers []config.MCPServer, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = time.Second
	}
	if opts.MaxBackoff < opts.MinBackoff {
		opts.MaxBackoff = 30 * time.Second
		if opts.MaxBackoff < opts.MinBackoff {
			opts.MaxBackoff = opts.MinBackoff
		}
	}
	if opts.Environ == nil {
		opts.Environ = os.Environ
	}
	if opts.AuthorizationTTL <= 0 {
		opts.AuthorizationTTL = DefaultAuthorizationTTL
	}
	m := &Manager{opts: opts, log: opts.Logger, auths: map[string]*pendingAuth{}}
	for _, c := range servers {
		s := &server{cfg: c, m: m, state: StateConnecting, since: time.Now().UTC(), inflight: map[*call]struct{}{}}
		if c.Timeout <= 0 {
			s.cfg.Timeout = DefaultTimeout
		}
		if c.ConnectTimeout <= 0 {
			s.cfg.ConnectTimeout = DefaultConnectTimeout
		}
		m.servers = append(m.servers, s)
	}
	return m
}

// Start connects to every server in the background and returns at once.
// ready, when not nil, is closed once every server has had its first
// attempt (connected or failed) and its Status reports that attempt's
// outcome (ready with its tools, or down), so that a caller may wait for the
// tools of the servers that are up before it serves.
func (m *Manager) Start(ctx context.Context, ready chan<- struct{}) {
	ctx, m.cancel = context.WithCancel(ctx)
	var first sync.WaitGroup
	for _, s := range m.servers {
		first.Add(1)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			s.run(ctx, first.Done)
		}()
	}
	if ready != nil {
		go func() {
			first.Wait()
			close(ready)
		}()
	}
}

// Close disconnects from every server and waits until each stdio server's
// process has exited (closing its stdin, then SIGTERM, then SIGKILL).
func (m *Manager) Close() {
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
}

// Status reports every server, in config order.
func (m *Manager) Status() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

// Names lists the configured servers' names, in config order.
func (m *Manager) Names() []string {
	out := make([]string, len(m.servers))
	for i, s := range m.servers {
		out[i] = s.cfg.Name
	}
	return out
}

// Check returns nil when server name is ready, an error saying how it
// stands otherwise (unknown name included).
func (m *Manager) Check(name string) error {
	for _, s := range m.servers {
		if s.cfg.Name == name {
			st := s.status()
			if st.State == StateReady {
				return nil
			}
			return fmt.Errorf("mcp server %s is %s", name, st.State)
		}
	}
	return fmt.Errorf("no mcp server %s", name)
}

type server struct {
	cfg config.MCPServer
	m   *Manager

	mu       sync.Mutex
	cs       *sdk.ClientSession
	state    State
	since    time.Time
	next     time.Time
	failures int
	tools    int
	skipped  []SkippedTool
	inflight map[*call]struct{}
	// attemptPause stops the running connection attempt's timeout while
	// a person authorizes (nil between attempts).
	attemptPause func() func()
	// firstDone ends Start's wait for the first attempt (a server that
	// waits for a person has had it).
	firstDone func()
	oauth     *oauthHandler // nil without oauth; built on the first connect
	auth      *pendingAuth  // the round waiting for a person (Manager.authMu)
}

// call is one tool call in flight; the elicitations the server sends while
// it runs go to its Elicitor.
type call struct {
	ctx   context.Context
	pause func() func() // stops the call's timeout while a person answers; the func resumes it
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Transport: "stdio", State: s.state, Tools: s.tools, Failures: s.failures, Since: s.since, Skipped: s.skipped}
	if s.cfg.URL != "" {
		st.Transport = "http"
	}
	if s.state == StateDown && !s.next.IsZero() {
		n := s.next
		st.NextAttempt = &n
	}
	return st
}

func (s *server) set(state State, next time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != state {
		s.since = time.Now().UTC()
	}
	s.state, s.next = state, next
	switch state {
	case StateReady:
		s.failures = 0
	case StateDown:
		s.failures++
		s.cs = nil
	}
}

// run connects, serves until the session ends, and reconnects with
// backoff, until ctx ends.
func (s *server) run(ctx context.Context, firstDone func()) {
	log := s.m.log.With("mcpServer", s.cfg.Name)
	backoff := s.m.opts.MinBackoff
	connectTimeout := s.cfg.ConnectTimeout
	// The first attempt is done once its outcome is the server's state.
	attempted := sync.OnceFunc(firstDone)
	defer attempted()
	s.firstDone = attempted
	for ctx.Err() == nil {
		level := slog.LevelDebug
		if s.status().Failures == 0 {
			level = slog.LevelInfo
		}
		log.Log(ctx, level, "mcp server connecting", "target", s.target(), "connectTimeout", connectTimeout.String())
		cs, err := s.attempt(ctx, connectTimeout)
		var se *stepError
		if errors.As(err, &se) && se.timedOut && connectTimeout < maxConnectTimeout {
			// A slow first start (npx downloading the server) gets more
			// time on the next attempt.
			connectTimeout = min(2*connectTimeout, maxConnectTimeout)
		}
		if err == nil {
			s.set(StateReady, time.Time{})
			attempted()
			log.Info("mcp server ready", "tools", s.status().Tools)
			backoff, connectTimeout = s.m.opts.MinBackoff, s.cfg.ConnectTimeout
			done := make(chan error, 1)
			go func() { done <- cs.Wait() }()
			select {
			case <-ctx.Done():
				// Close closes the stdio server's stdin and waits for it
				// to exit (SIGTERM, then SIGKILL, when it does not).
				_ = cs.Close()
				<-done
				return
			case err = <-done:
				if err == nil {
					err = errors.New("the connection closed")
				}
			}
		}
		if ctx.Err() != nil {
			return
		}
		next := time.Now().Add(backoff)
		s.set(StateDown, next.UTC())
		attempted()
		step := "session"
		if se != nil {
			step = se.step
		}
		log.Warn("mcp server unavailable; retrying", "step", step, "err", err, "retryIn", backoff.String(), "failures", s.status().Failures)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff *= 2
		if backoff > s.m.opts.MaxBackoff {
			backoff = s.m.opts.MaxBackoff
		}
	}
}

// connect starts (stdio) or reaches (HTTP) the server and initializes a
// session that declares the elicitation capability, form and URL.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	client := sdk.NewClient(&sdk.Implementation{Name: "luban", Version: s.m.opts.Version}, &sdk.ClientOptions{
		Logger: s.m.log.With("mcpServer", s.cfg.Name),
		Capabilities: &sdk.ClientCapabilities{
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}},
		},
		ElicitationHandler: s.elicit,
		ToolListChangedHandler: func(ctx context.Context, _ *sdk.ToolListChangedRequest) {
			s.mu.Lock()
			cs := s.cs
			s.mu.Unlock()
			if cs == nil {
				return
			}
			// A handler must not block the connection's reader: list in
			// the background.
			go func() {
				lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.Timeout)
				defer cancel()
				if err := s.refresh(lctx, cs); err != nil {
					s.m.log.Warn("mcp tools/list after list_changed failed", "mcpServer", s.cfg.Name, "err", err)
					return
				}
				s.m.log.Info("mcp tools changed", "mcpServer", s.cfg.Name, "tools", s.status().Tools)
			}()
		},
		// The run keeps an input_required result with its question, so
		// the answer may come after a restart: no automatic retry loop.
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	})
	var tr sdk.Transport
	if s.cfg.URL != "" {
		st := &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: &http.Client{Transport: headers{base: http.DefaultTransport, h: s.cfg.Headers}, CheckRedirect: sameOrigin}}
		if s.cfg.OAuth != nil {
			if s.oauth == nil {
				h, err := s.newOAuthHandler()
				if err != nil {
					return nil, fmt.Errorf("oauth: %w", err)
				}
				s.oauth = h
			}
			st.OAuthHandler = s.oauth
		}
		tr = st
	} else {
		cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
		cmd.Env = Inherited(s.m.opts.Environ(), s.cfg.Env)
		cmd.Stderr = &logWriter{log: s.m.log, server: s.cfg.Name}
		detach(cmd)
		tr = &stdioTransport{inner: &sdk.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}}
	}
	return client.Connect(ctx, tr, nil)
}

// attempt connects and lists the tools within timeout (the server's
// connectTimeout, docs/design.md §13): the session, its tools registered,
// or a *stepError naming the step that failed.
func (s *server) attempt(ctx context.Context, timeout time.Duration) (*sdk.ClientSession, error) {
	// The timeout stops while a person authorizes luban (fetchCode).
	cctx, cancelCause := context.WithCancelCause(ctx)
	cancel := func() { cancelCause(nil) }
	defer cancel()
	var tmu sync.Mutex
	timer := time.AfterFunc(timeout, func() { cancelCause(errConnectTimeout) })
	s.mu.Lock()
	s.attemptPause = func() func() {
		tmu.Lock()
		timer.Stop()
		tmu.Unlock()
		return func() {
			tmu.Lock()
			timer.Reset(timeout)
			tmu.Unlock()
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.attemptPause = nil
		s.mu.Unlock()
		tmu.Lock()
		timer.Stop()
		tmu.Unlock()
	}()
	step := "initialize"
	if s.cfg.URL == "" {
		step = "start and initialize"
	}
	fail := func(step string, err error) error {
		if errors.Is(context.Cause(cctx), errConnectTimeout) {
			return &stepError{step: step, timedOut: true, err: fmt.Errorf("did not finish within the connectTimeout of %s (%v)", timeout, err)}
		}
		return &stepError{step: step, err: err}
	}
	cs, err := s.connect(cctx)
	if err != nil {
		return nil, fail(step, err)
	}
	// The session is the tools' before they are registered: a call the
	// moment a tool appears finds it.
	s.mu.Lock()
	s.cs = cs
	s.mu.Unlock()
	if err := s.refresh(cctx, cs); err != nil {
		s.mu.Lock()
		s.cs = nil
		s.mu.Unlock()
		_ = cs.Close()
		return nil, fail("tools/list", err)
	}
	return cs, nil
}

var errConnectTimeout = errors.New("mcp: connect timed out")

// stdioTransport is the SDK's CommandTransport that, when the connect
// timeout runs out while the process runs, sends it SIGTERM at once: the
// failed attempt's close then does not wait the transport's grace
// (TerminateDuration) for a server that never answered to exit on its own,
// so an attempt lasts its connectTimeout, not 3 s more. A server that
// ignores SIGTERM still gets the SDK's SIGTERM and SIGKILL after the grace.
type stdioTransport struct{ inner *sdk.CommandTransport }

// Connect starts the command (sdk.CommandTransport.Connect) and watches ctx,
// the attempt's, for the connect timeout.
func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	proc := t.inner.Command.Process
	context.AfterFunc(ctx, func() {
		if errors.Is(context.Cause(ctx), errConnectTimeout) {
			_ = proc.Signal(syscall.SIGTERM)
		}
	})
	return conn, nil
}

// stepError is a failed connection attempt: the step (start and
// initialize, initialize, tools/list) and whether the connect timeout cut
// it.
type stepError struct {
	step     string
	timedOut bool
	err      error
}

func (e *stepError) Error() string { return e.step + ": " + e.err.Error() }
func (e *stepError) Unwrap() error { return e.err }

// target names what a connection attempt starts or reaches, for the log:
// the command of a stdio server (not its arguments, which may hold a
// secret), the scheme, host and path of an HTTP one's URL.
func (s *server) target() string {
	if s.cfg.URL == "" {
		return s.cfg.Command
	}
	u, err := url.Parse(s.cfg.URL)
	if err != nil {
		return "(an unparsable url)"
	}
	return u.Scheme + "://" + u.Host + u.Path
}

// refresh lists the server's tools (every page) and replaces its group in
// the registry.
func (s *server) refresh(ctx context.Context, cs *sdk.ClientSession) error {
	var entries []*tool.Entry
	var skipped []SkippedTool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		e, reason, err := s.entry(t)
		if err != nil {
			s.m.log.Warn("mcp tool skipped", "mcpServer", s.cfg.Name, "tool", quoteName(t.Name), "reason", reason, "err", err)
			if len(skipped) < MaxSkipped {
				skipped = append(skipped, SkippedTool{Name: quoteName(t.Name), Reason: reason})
			}
			continue
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Spec.Name < entries[j].Spec.Name })
	if err := s.m.opts.Registry.ReplaceGroup(s.cfg.Name+Separator, entries); err != nil {
		return err
	}
	s.mu.Lock()
	s.tools, s.skipped = len(entries), skipped
	s.mu.Unlock()
	return nil
}

// quoteName is a tool name fit for a log line and /readyz: Go-quoted in
// ASCII, at most 80 characters of the name.
func quoteName(n string) string {
	if r := []rune(n); len(r) > 80 {
		return strconv.QuoteToASCII(string(r[:80])) + "…"
	}
	return strconv.QuoteToASCII(n)
}

// entry is the registry entry of a listed tool, or the reason
// ("invalid_name", "invalid_schema") and error it is skipped for.
func (s *server) entry(t *sdk.Tool) (*tool.Entry, string, error) {
	if !toolName.MatchString(s.cfg.Name + Separator + t.Name) {
		return nil, "invalid_name", fmt.Errorf("the name %s is not what a model provider accepts: %s%s<name> must be 1 to 64 of a-z, A-Z, 0-9, _ and -", quoteName(t.Name), s.cfg.Name, Separator)
	}
	schema, err := json.Marshal(t.InputSchema)
	if err != nil || string(schema) == "null" {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	if _, err := schemac.Compile(schema, schemac.Options{}); err != nil {
		return nil, "invalid_schema", fmt.Errorf("inputSchema: %w", err)
	}
	desc := t.Description
	if desc == "" && t.Title != "" {
		desc = t.Title
	}
	rt := &remoteTool{s: s, name: t.Name, spec: model.ToolSpec{Name: s.cfg.Name + Separator + t.Name, Description: desc, Parameters: schema}}
	idem := t.Annotations != nil && (t.Annotations.ReadOnlyHint || t.Annotations.IdempotentHint)
	return &tool.Entry{Spec: rt.spec, Tool: rt, Idempotent: idem}, "", nil
}

// remoteTool is one tool of an MCP server.
type remoteTool struct {
	s    *server
	name string
	spec model.ToolSpec
}

func (t *remoteTool) Spec() model.ToolSpec { return t.spec }
func (t *remoteTool) Server() string       { return t.s.cfg.Name }

// Call calls the tool with the model's arguments (a JSON object), bounded by
// the server's timeout, which stops while a person answers an elicitation.
// An unreachable server, a protocol error or a timeout is an error result
// naming the server; the model can try again later.
func (t *remoteTool) Call(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
	s := t.s
	s.mu.Lock()
	cs := s.cs
	state := s.state
	s.mu.Unlock()
	if cs == nil {
		return api.ToolResult{Content: fmt.Sprintf("MCP server %s is unavailable (%s); try again later", s.cfg.Name, state), IsError: true}, nil
	}
	var a map[string]any
	if len(args) > 0 {
		if err := json.Unmarshal(args, &a); err != nil {
			return api.ToolResult{Content: "invalid arguments: not a JSON object: " + err.Error(), IsError: true}, nil
		}
	}
	if a == nil {
		a = map[string]any{}
	}
	params := &sdk.CallToolParams{Name: t.name, Arguments: a}
	if jws, ok := tool.ApprovalReceipt(ctx); ok {
		// The server's tool gets the person's signed approval of this
		// call (docs/design.md §29), as a local tool gets it from ctx.
		params.Meta = sdk.Meta{ReceiptMetaKey: jws}
	}
	if r := tool.InputResponsesFrom(ctx); r != nil {
		params.RequestState = r.RequestState
		params.InputResponses = sdk.InputResponseMap{}
		for k, v := range r.Responses {
			params.InputResponses[k] = &sdk.ElicitResult{Action: v.Action, Content: v.Content}
		}
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	timeout := s.cfg.Timeout
	var tmu sync.Mutex
	timer := time.AfterFunc(timeout, func() { cancel(errTimeout) })
	c := &call{ctx: ctx, pause: func() func() {
		tmu.Lock()
		timer.Stop()
		tmu.Unlock()
		return func() {
			tmu.Lock()
			timer.Reset(timeout)
			tmu.Unlock()
		}
	}}
	s.mu.Lock()
	s.inflight[c] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.inflight, c)
		s.mu.Unlock()
		tmu.Lock()
		timer.Stop()
		tmu.Unlock()
	}()
	res, err := cs.CallTool(cctx, params)
	if err != nil {
		if ctx.Err() != nil {
			return api.ToolResult{}, ctx.Err()
		}
		if errors.Is(context.Cause(cctx), errTimeout) {
			return api.ToolResult{Content: fmt.Sprintf("MCP server %s: %s timed out after %s", s.cfg.Name, t.name, timeout), IsError: true}, nil
		}
		return api.ToolResult{Content: fmt.Sprintf("MCP server %s: %v", s.cfg.Name, err), IsError: true}, nil
	}
	if len(res.InputRequests) > maxInputRequests {
		return api.ToolResult{Content: fmt.Sprintf("MCP server %s asked for input luban refuses: %d requests at once, at most %d", s.cfg.Name, len(res.InputRequests), maxInputRequests), IsError: true}, nil
	}
	if len(res.InputRequests) > 0 {
		in := &tool.InputRequired{Requests: map[string]tool.Elicitation{}, RequestState: res.RequestState}
		for k, v := range res.InputRequests {
			p, ok := v.(*sdk.ElicitParams)
			if !ok {
				return api.ToolResult{Content: fmt.Sprintf("MCP server %s asked for input luban cannot give (%T); only elicitation is supported", s.cfg.Name, v), IsError: true}, nil
			}
			e := s.elicitation(p)
			// Every request of the result is stored with the question,
			// not only the one shown first: each is bounded before the
			// run keeps it (docs/design.md §13).
			if err := elicit.CheckSize(e); err != nil {
				s.m.log.Warn("mcp input_required refused", "mcpServer", s.cfg.Name, "tool", t.name, "err", err)
				return api.ToolResult{Content: fmt.Sprintf("MCP server %s asked for input luban refuses: %v", s.cfg.Name, err), IsError: true}, nil
			}
			in.Requests[k] = e
		}
		return api.ToolResult{}, in
	}
	return mapResult(res), nil
}

var errTimeout = errors.New("mcp: tool call timed out")

// maxInputRequests bounds the requests of one input_required result.
const maxInputRequests = 16

// mapResult turns a CallToolResult into the model's ToolResult: the text of
// every content block (other blocks described in a line), or the
// structured content as JSON when there is no text; structuredContent, when
// present, also rides in Metadata as {"structuredContent": ...}; isError is
// kept.
func mapResult(res *sdk.CallToolResult) api.ToolResult {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s, %d bytes]", c.Resource.URI, len(c.Resource.Blob)))
			}
		default:
			if b, err := json.Marshal(c); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	out := api.ToolResult{Content: strings.Join(parts, "\n"), IsError: res.IsError}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			if out.Content == "" {
				out.Content = string(b)
			}
			out.Metadata, _ = json.Marshal(map[string]json.RawMessage{"structuredContent": b})
		}
	}
	return out
}

func (s *server) elicitation(p *sdk.ElicitParams) tool.Elicitation {
	e := tool.Elicitation{Server: s.cfg.Name, Mode: p.Mode, Message: p.Message, URL: p.URL, ElicitationID: p.ElicitationID}
	if e.Mode == "" {
		e.Mode = "form"
		if p.URL != "" {
			e.Mode = "url"
		}
	}
	if p.RequestedSchema != nil {
		e.RequestedSchema, _ = json.Marshal(p.RequestedSchema)
	}
	return e
}

// elicit is the session's elicitation/create handler: the request goes to
// the person behind the one call in flight on this server. With none, or
// with several (the protocol does not say which call a request belongs
// to, and a wrong guess would show one person another's question), it is
// refused.
func (s *server) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	s.mu.Lock()
	var c *call
	n := len(s.inflight)
	for x := range s.inflight {
		c = x
	}
	s.mu.Unlock()
	if n != 1 {
		s.m.log.Warn("mcp elicitation refused: it cannot be tied to one tool call", "mcpServer", s.cfg.Name, "callsInFlight", n)
		return nil, fmt.Errorf("luban takes elicitations only during a tool call, and only when one call to this server is in flight (%d are)", n)
	}
	el := tool.ElicitorFrom(c.ctx)
	if el == nil {
		return nil, errors.New("this tool call has no person to ask")
	}
	resume := c.pause()
	defer resume()
	ans, err := el.Elicit(ctx, s.elicitation(req.Params))
	if err != nil {
		return nil, err
	}
	return &sdk.ElicitResult{Action: ans.Action, Content: ans.Content}, nil
}

// inherited are the variables of luban's environment a stdio server gets
// (docs/agents.md, docs/mcp.md): where programs are, the home and user,
// the locale, the time zone and the temporary directory; on Windows also
// what a process needs to start. Names are compared case-insensitively.
var inherited = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TMPDIR": true, "TMP": true, "TEMP": true,
	"SYSTEMROOT": true, "WINDIR": true, "COMSPEC": true, "PATHEXT": true, "SYSTEMDRIVE": true,
	"USERPROFILE": true, "HOMEDRIVE": true, "HOMEPATH": true, "APPDATA": true, "LOCALAPPDATA": true,
	"PROGRAMDATA": true, "PROGRAMFILES": true, "PROGRAMFILES(X86)": true,
}

// Inherited is the environment of a stdio server (docs/design.md §13):
// the entries of environ whose names are in the minimal set (PATH, HOME,
// USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TZ, TMPDIR, TMP, TEMP, and
// Windows' own), then env (the server's `env:`), which wins over them.
// Nothing else of luban's environment (tokens, model keys, base URLs)
// reaches the server.
func Inherited(environ []string, env map[string]string) []string {
	out := make([]string, 0, len(env)+16)
	for _, kv := range environ {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if _, set := env[k]; set {
			continue
		}
		u := strings.ToUpper(k)
		if inherited[u] || strings.HasPrefix(u, "LC_") {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	return out
}

// headers adds a server's configured headers to every request.
// sameOrigin is the CheckRedirect of an HTTP server's client: a redirect is
// followed only within the origin (scheme, host and port) of the request
// that was redirected, at most 10 times. A server is untrusted, and headers
// re-adds the configured headers (a token) to every request, so a redirect
// elsewhere would hand them to whoever it names.
func sameOrigin(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	from := via[len(via)-1].URL
	if req.URL.Scheme != from.Scheme || req.URL.Host != from.Host {
		return fmt.Errorf("redirect to another origin (%s://%s) refused: configure the server's final URL", req.URL.Scheme, req.URL.Host)
	}
	return nil
}

type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (t headers) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.h {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// logWriter logs a stdio server's stderr, one entry a line.
type logWriter struct {
	log    *slog.Logger
	server string
	mu     sync.Mutex
	buf    []byte
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := strings.IndexByte(string(w.buf), '\n')
		if i < 0 {
			break
		}
		w.log.Info("mcp server stderr", "mcpServer", w.server, "line", string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.log.Info("mcp server stderr", "mcpServer", w.server, "line", string(w.buf))
		w.buf = w.buf[:0]
	}
	return len(p), nil
}
