// Package server is luban's HTTP API (docs/design.md §3): decode, authorize, call
// the agent.Runner, stream events. It never builds ToolResults itself.
package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/schemaerr"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/telemetry"
)

// Options configures a Server. Runner and at least one token are required.
type Options struct {
	Runner *agent.Runner
	// Tokens are the accepted bearer tokens; each one is its own principal
	// and sees only its own sessions.
	Tokens []string
	// People are the configuration's people (docs/design.md §16): a
	// person's token authenticates the person, whose id is the principal.
	// Nil: Tokens only.
	People *principal.Directory
	// OIDC, when set, signs people into the page through OpenID Connect
	// (docs/design.md §16): a page opened without a valid sign-in is sent
	// to the provider. It needs People (with emails).
	OIDC *OIDC
	// Web serves the page for every path outside /api. Nil serves 404.
	Web http.Handler
	// Heartbeat is the interval of SSE comment lines. Default 15s.
	Heartbeat time.Duration
	// MaxBodyBytes bounds request bodies. Default 1 MiB.
	MaxBodyBytes int64
	// BodyReadTimeout bounds the time to receive a request's body, counted
	// from when its headers were read. Default 30s.
	BodyReadTimeout time.Duration
	// AskTools lists the ask tools the default agent offers (for /api/info).
	AskTools []string
	Logger   *slog.Logger
	// Metrics, when set, records the HTTP metrics and is served at GET
	// /metrics, without a token like /livez and /readyz (docs/design.md §14).
	Metrics *telemetry.Metrics
	// ReadyChecks are asked by GET /readyz beside the store (MCP servers).
	ReadyChecks []ReadyCheck
	// MCPAuth, when set, serves the OAuth authorization of MCP servers
	// (docs/design.md §11, "OAuth"): GET /api/mcp/authorizations, GET
	// /oauth/start/{server} and GET and POST /oauth/callback.
	MCPAuth MCPAuthorizer
	// Keys are the signing keys (docs/design.md §17): their public half is
	// served at GET /.well-known/luban/keys (no token) and they sign and
	// check action links' grants. Nil: no JWKS, no action links.
	Keys *signing.Keys
	// PublicURL is the absolute base URL of action links (server.publicUrl,
	// e.g. https://luban.example.com; luban serve defaults it to the listen
	// address): ActionLinks makes links on it. "": no ActionLinks.
	PublicURL string
	// Slack, when set, answers POST /api/slack/interactions (docs/design.md
	// §17); without it that route is 404.
	Slack *Slack
}

// Server is an http.Handler for the API and the page.
type Server struct {
	opts      Options
	log       *slog.Logger
	mux, api  *http.ServeMux
	handler   http.Handler
	closing   chan struct{}
	closeOnce sync.Once
	routes    []string // patterns of the /api routes
	loginKey  []byte
	sso       *sso // nil without Options.OIDC
	// tokenPrincipals[i] is principalOf(opts.Tokens[i]), made once.
	tokenPrincipals []string
}

// New returns a Server.
func New(opts Options) (*Server, error) {
	if opts.Runner == nil {
		return nil, errors.New("server: Options.Runner is required")
	}
	if len(opts.Tokens) == 0 && len(opts.People.Tokens()) == 0 && opts.OIDC == nil {
		return nil, errors.New("server: at least one token (or single sign-on) is required")
	}
	if opts.OIDC != nil && opts.People.Len() == 0 {
		return nil, errors.New("server: single sign-on (Options.OIDC) needs Options.People")
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 15 * time.Second
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 1 << 20
	}
	if opts.BodyReadTimeout <= 0 {
		opts.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Server{opts: opts, log: opts.Logger, mux: http.NewServeMux(), closing: make(chan struct{}), loginKey: loginKey(opts.allTokens())}
	for _, t := range opts.Tokens {
		s.tokenPrincipals = append(s.tokenPrincipals, principalOf(t))
	}
	// Slack signs its requests instead of sending a token
	// (handleSlackInteractions): the route is outside requireAuth.
	slackRoute := "POST " + api.SlackInteractionsPath
	api := &routeMux{ServeMux: http.NewServeMux()}
	api.HandleFunc("POST /api/chat", s.handleChat)
	api.HandleFunc("POST /api/chat/continue", s.handleContinue)
	// Not in api.Endpoints: AG-UI's own protocol (docs/design.md §13, docs/agui.md).
	api.Handle("POST /api/agui", s.aguiHandler())
	api.HandleFunc("GET /api/interactions/pending", s.handlePending)
	api.HandleFunc("GET /api/sessions", s.handleSessions)
	api.HandleFunc("GET /api/interactions", s.handleInbox)
	api.HandleFunc("GET /api/interactions/{id}", s.handleInteraction)
	api.HandleFunc("POST /api/interactions/{id}/delegate", s.handleDelegate)
	api.HandleFunc("GET /api/events", s.handlePrincipalEvents)
	api.HandleFunc("GET /api/sessions/{id}", s.handleSession)
	api.HandleFunc("GET /api/sessions/{id}/events", s.handleEvents)
	api.HandleFunc("POST /api/sessions/{id}/cancel", s.handleCancel)
	api.HandleFunc("GET /api/sessions/{id}/trace", s.handleTrace)
	api.HandleFunc("GET /api/info", s.handleInfo)
	api.HandleFunc("GET /api/agents", s.handleAgents)
	api.HandleFunc("GET /api/mcp/authorizations", s.handleMCPAuthorizations)
	api.HandleFunc("GET /api/openapi.json", handleOpenAPI)
	api.HandleFunc("DELETE /api/sessions/{id}", s.handleDeleteSession)
	api.HandleFunc("PATCH /api/sessions/{id}", s.handleRenameSession)
	api.HandleFunc("/api/", handleNoEndpoint)
	s.routes = append(api.patterns, slackRoute)
	s.mux.Handle("/api/", s.requireAuth(api))
	s.mux.HandleFunc(slackRoute, s.handleSlackInteractions)
	s.mux.Handle("/mcp", s.mcpHandler())
	s.mux.HandleFunc("GET /readyz", s.handleReadyz)
	if opts.Keys != nil {
		s.mux.HandleFunc("GET /.well-known/luban/keys", s.handleKeys)
	}
	s.mux.HandleFunc("GET /livez", handleLivez)
	if opts.Metrics != nil {
		s.mux.Handle("GET /metrics", opts.Metrics.Handler())
	}
	s.mux.HandleFunc("POST /login", s.handleLogin)
	s.mux.Handle("GET /oauth/start/{server}", s.requireAuth(http.HandlerFunc(s.handleOAuthStart)))
	s.mux.HandleFunc("GET /oauth/callback", s.handleOAuthCallback)
	s.mux.Handle("POST /oauth/callback", s.requireAuth(http.HandlerFunc(s.handleOAuthComplete)))
	if opts.OIDC != nil {
		s.sso = newSSO(*opts.OIDC, opts.allTokens())
		s.mux.HandleFunc("GET /auth/login", s.handleSSOLogin)
		s.mux.HandleFunc("GET /auth/callback", s.handleSSOCallback)
	}
	if opts.Keys != nil {
		// Action links (docs/design.md §17): /q/{id} with a grant is the
		// one question, without a session; without one it is the page.
		s.mux.HandleFunc("GET /q/{id}", s.handleLink)
		s.mux.HandleFunc("POST /q/{id}", s.handleLinkAnswer)
		s.mux.HandleFunc("GET /q/{id}/receipt", s.handleLinkReceipt)
	}
	s.mux.HandleFunc("/", s.servePage)
	s.api, s.handler = api.ServeMux, s.observe(s.mux)
	return s, nil
}

// servePage serves the page (Options.Web) on its routes, after a token
// login or a single sign-on redirect; every other path is 404.
func (s *Server) servePage(w http.ResponseWriter, r *http.Request) {
	if !pageRoute(r.URL.Path) {
		notFound(w, r)
		return
	}
	if signInRoute(r.URL.Path) && s.tokenLogin(w, r) {
		return
	}
	if s.ssoRedirect(w, r) {
		return
	}
	if s.opts.Web == nil {
		http.NotFound(w, r)
		return
	}
	pageHeaders(w)
	s.opts.Web.ServeHTTP(w, r)
}

// pageHeaders are the headers of every response of the page (Options.Web):
// no sniffing, no framing, its CSP, and no Referer to another site.
func pageHeaders(w http.ResponseWriter) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Content-Security-Policy", pageCSP)
	w.Header().Set("Referrer-Policy", "same-origin")
}

// ServeHTTP implements http.Handler. Every request body is bounded in size
// and in time before it is routed (boundBody).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.boundBody(w, r)
	s.handler.ServeHTTP(w, r)
}

// Close ends every open SSE stream cleanly (register it with
// http.Server.RegisterOnShutdown: Shutdown does not end long streams).
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// decode reads a JSON body of at most MaxBodyBytes into v and refuses a
// field v does not have: 400 invalid_request whose message and details name
// it (a misspelt "selection" would otherwise be an empty answer, a misspelt
// "sessionId" a new session). Every request body of /api is closed, as the
// OpenAPI document says (additionalProperties false); /api/agui decodes its
// own, lenient body (docs/agui.md).
func (s *Server) decode(w http.ResponseWriter, r *http.Request, v any) bool {
	// The body is JSON whatever Content-Type says (curl -d sends a form
	// type); cross-site forms are stopped by the Origin check in requireAuth.
	// It is read whole first: a field error names its place in the text
	// (schemaerr.DecodeText), which encoding/json's errors do not.
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil && s.bodyFailed(w, r, err) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err == nil {
		err = dec.Decode(v)
	}
	if err != nil {
		fe := schemaerr.DecodeText(err, "", data, v)
		msg := "malformed JSON body: " + fe.Message
		switch fe.Code {
		case api.DetailUnknownField:
			msg = fmt.Sprintf("unknown field %q in the body", fe.Field)
		case api.DetailInvalidType:
			msg = fe.Message
		}
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: msg, Details: []api.FieldError{fe}})
		return false
	}
	if _, err := dec.Token(); err != io.EOF {
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "malformed JSON body: trailing data after the object",
			Details: []api.FieldError{{Field: "", Code: api.DetailInvalidJSON, Message: "trailing data after the object"}}})
		return false
	}
	return true
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, d := errorFor(err)
	if status == http.StatusInternalServerError {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	writeError(w, status, d)
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	var req api.ChatRequest
	if !s.decode(w, r, &req) {
		return
	}
	// The stream is handed the start's events: it follows the session
	// from before the start's commit.
	follow := s.opts.Runner.Follow(req.SessionID)
	defer follow.Close()
	res, err := s.opts.Runner.Start(r.Context(), agent.StartParams{Owner: Principal(r.Context()), SessionID: req.SessionID, Message: req.Message, Agent: req.Agent,
		Follow: follow})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.stream(w, r, res.SessionID, res.AfterSeq, true, s.runEnds(r.Context(), res.SessionID, res.RunID), follow)
}

func (s *Server) handleContinue(w http.ResponseWriter, r *http.Request) {
	batch, ok := s.continueForm(w, r)
	if !ok {
		return
	}
	var res *agent.ContinueResult
	var err error
	var sessionID string
	// A continuation streamed is handed the answer's events: it follows
	// the session from before the answer's commit (an assignee who does
	// not own it gets the receipt alone, below, and nothing of it).
	var follow *agent.Following
	defer func() { follow.Close() }()
	streamed := !wantsJSON(r)
	if batch {
		var req api.ContinueBatchRequest
		if !s.decode(w, r, &req) {
			return
		}
		sessionID = req.SessionID
		if streamed {
			follow = s.opts.Runner.Follow(sessionID)
		}
		entries := make([]agent.ResolveEntry, len(req.Answers))
		for i, e := range req.Answers {
			entries[i] = agent.ResolveEntry{RequestID: e.RequestID, Answer: e.Continue(req.SessionID)}
		}
		res, err = s.opts.Runner.ResolveBatch(r.Context(), agent.ResolveBatchParams{By: Principal(r.Context()), SessionID: req.SessionID, Entries: entries,
			Surface: agent.SurfaceContinue, Field: "answers"})
	} else {
		var req api.ContinueRequest
		if !s.decode(w, r, &req) {
			return
		}
		sessionID = req.SessionID
		if streamed {
			follow = s.opts.Runner.Follow(sessionID)
		}
		res, err = s.opts.Runner.Resolve(r.Context(), agent.ResolveParams{By: Principal(r.Context()), SessionID: req.SessionID, RequestID: req.RequestID,
			Answer: req, Surface: agent.SurfaceContinue})
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if wantsJSON(r) || res.Pending != nil || res.Owner != Principal(r.Context()) {
		// An assignee who does not own the session reads no more of it
		// than the receipt (docs/design.md §16).
		writeJSON(w, http.StatusAccepted, api.ContinueAccepted{Receipt: res.Receipt, Receipts: res.Receipts, Pending: res.Pending})
		return
	}
	s.stream(w, r, sessionID, res.AfterSeq, true, s.continuationEnds(r.Context(), sessionID, res), follow)
}

// continueForm reads the body of POST /api/chat/continue (bounded as
// decode bounds it) and reports which form it is: the batch form
// (docs/design.md §32) when an entry of its answers carries requestId. The
// body is left for decode to read again. It answers the request itself
// (ok false) when the body cannot be read.
func (s *Server) continueForm(w http.ResponseWriter, r *http.Request) (batch, ok bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		if s.bodyFailed(w, r, err) {
			return false, false
		}
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "the body could not be read"})
		return false, false
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	var probe struct {
		RequestID *string                       `json:"requestId"`
		Answers   *[]map[string]json.RawMessage `json:"answers"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return false, true // decode names what is wrong
	}
	if probe.Answers == nil {
		return false, true
	}
	if len(*probe.Answers) == 0 && probe.RequestID == nil {
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest,
			Message: "answers is empty: a batch answer needs at least one entry {requestId, …} (or send requestId to answer one question)",
			Details: []api.FieldError{{Field: "answers", Code: api.DetailRequired, Message: "at least one entry"}}})
		return false, false
	}
	for _, a := range *probe.Answers {
		if _, has := a["requestId"]; has {
			if probe.RequestID != nil {
				writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest,
					Message: "a batch answer (answers entries with requestId) has no top-level requestId: send one form or the other",
					Details: []api.FieldError{{Field: "requestId", Code: api.DetailNotAllowed, Message: "not allowed beside batch entries"}}})
				return false, false
			}
			return true, true
		}
	}
	return false, true
}

// continuationEnds stops the stream of an answer at the run's pause or end,
// or, when the run still waits on other questions it asked at once
// (docs/design.md §32), after the resolution's own events.
func (s *Server) continuationEnds(ctx context.Context, sessionID string, res *agent.ContinueResult) func(agent.Event) bool {
	if res.Waiting {
		return func(ev agent.Event) bool { return ev.Seq >= res.LastSeq }
	}
	return s.runEnds(ctx, sessionID, res.RunID)
}

func wantsJSON(r *http.Request) bool {
	a := r.Header.Get("Accept")
	return strings.Contains(a, "application/json") && !strings.Contains(a, "text/event-stream")
}

func (s *Server) handlePending(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("sessionId")
	if id == "" {
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "sessionId is required"})
		return
	}
	res, err := s.opts.Runner.Pending(r.Context(), Principal(r.Context()), id)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
