package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
)

// modernProtocol is the first MCP protocol version with input_required
// results and requestState (multi round-trip requests): a client of this
// version or later is answered at once, an older one is held open.
const modernProtocol = "2026-07-28"

// inputRequestKey is the key of luban's one entry in an input_required
// result's inputRequests map.
const inputRequestKey = "luban"

// baseHeader carries the scheme and host the page is reached at from the
// outer handler to the tool handler (the SDK passes request headers, not
// the Host). Any value a client sends is dropped first.
const baseHeader = "Luban-Mcp-Base"

// Options configures NewHandler. Runner, Verify and Secret are required.
type Options struct {
	Runner *agent.Runner
	// Verify returns the principal of a bearer token, "" when the token is
	// not accepted: the same principals as /api (docs/design.md §8).
	Verify func(token string) string
	// Secret keys the HMAC of requestState. It must be the same across
	// restarts and replicas, or a retry after a restart is rejected.
	Secret []byte
	// KeepAlive is the interval of the progress notifications an older
	// client's held call receives. Default 10s.
	KeepAlive time.Duration
	// Done, when closed, ends every held call with an error saying the
	// question stays pending (luban is shutting down).
	Done <-chan struct{}
	// Version is reported as the server's version in serverInfo.
	Version string
	Logger  *slog.Logger
	// SessionTimeout ends an older client's session (protocol before
	// 2026-07-28, held in memory) after this long without a request; a
	// held call counts as a request while it is held. Default
	// DefaultSessionTimeout. A client whose session ended gets 404 and
	// initializes again.
	SessionTimeout time.Duration
	// Now is the clock for requestState expiry. Default the Runner's clock
	// (the one expiresAt is checked against).
	Now func() time.Time
	// Retry is the reconnection delay an older client's SSE stream
	// announces (the SSE "retry" field, whole milliseconds) before a client
	// whose stream dropped comes back with Last-Event-ID. Default 2s.
	Retry time.Duration
	// TaskPollInterval is the polling interval a task tells its host
	// (pollInterval, pollIntervalMs). Default 5s.
	TaskPollInterval time.Duration
	// EventStore keeps the events of the stateful sessions' streams so a
	// dropped stream resumes with Last-Event-ID (docs/design.md §27).
	// Default a memory store of the SDK's default size: the sessions it
	// serves live in memory and end with the process anyway.
	EventStore sdk.EventStore
}

// DefaultSessionTimeout is Options.SessionTimeout when it is zero
// (docs/design.md §11): sessions that only initialized, or whose client went
// away, do not pile up in memory.
const DefaultSessionTimeout = 10 * time.Minute

type handler struct {
	o                   Options
	stateful, stateless http.Handler
}

// NewHandler returns luban's MCP server (docs/design.md §11): streamable HTTP from
// the official SDK, Bearer auth (401 with luban's JSON error otherwise),
// tools ask_user and AskUser. A request announcing protocol 2026-07-28 or
// later in Mcp-Protocol-Version is served statelessly (that protocol has no
// sessions); older clients get the SDK's stateful sessions, which live in
// memory and end with the process. Their SSE streams begin with a "retry"
// field and carry event ids, so a held call whose stream drops resumes with
// Last-Event-ID (GET /mcp) and still gets its result.
func NewHandler(o Options) (http.Handler, error) {
	if o.Runner == nil || o.Verify == nil || len(o.Secret) == 0 {
		return nil, errors.New("mcp: Options.Runner, Verify and Secret are required")
	}
	if o.KeepAlive <= 0 {
		o.KeepAlive = 10 * time.Second
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = o.Runner.Now
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Retry <= 0 {
		o.Retry = 2 * time.Second
	}
	if o.TaskPollInterval <= 0 {
		o.TaskPollInterval = 5 * time.Second
	}
	if o.EventStore == nil {
		o.EventStore = sdk.NewMemoryEventStore(nil)
	}
	h := &handler{o: o}
	caps := &sdk.ServerCapabilities{Logging: &sdk.LoggingCapabilities{}}
	caps.AddExtension(extensionTasks, nil)
	srv := sdk.NewServer(&sdk.Implementation{Name: "luban", Title: "luban: a person answers", Version: o.Version},
		&sdk.ServerOptions{Logger: o.Logger, Instructions: "ask_user and AskUser put a question in front of a person on luban's page; the result is their answer.",
			Capabilities: caps})
	for _, d := range askuser.Definitions() {
		srv.AddTool(&sdk.Tool{Name: d.Name, Description: d.Description, InputSchema: json.RawMessage(d.Parameters),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}}, h.call)
	}
	if err := h.addTaskMethods(srv); err != nil {
		return nil, err
	}
	srv.AddReceivingMiddleware(h.middleware)
	get := func(*http.Request) *sdk.Server { return srv }
	verify := auth.RequireBearerToken(func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if p := o.Verify(token); p != "" {
			return &auth.TokenInfo{UserID: p}, nil
		}
		return nil, auth.ErrInvalidToken
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})
	h.stateful = verify(sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{Logger: o.Logger, EventStore: o.EventStore, SessionTimeout: o.SessionTimeout}))
	h.stateless = verify(sdk.NewStreamableHTTPHandler(get, &sdk.StreamableHTTPOptions{Stateless: true, Logger: o.Logger}))
	return h, nil
}

// ServeHTTP authenticates, then hands the request to the SDK.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || h.o.Verify(strings.TrimSpace(tok)) == "" {
		w.Header().Set("WWW-Authenticate", `Bearer realm="luban"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(api.ErrorBody{Error: api.ErrorDetail{Code: api.CodeUnauthorized,
			Message: "authentication required: send Authorization: Bearer <token>"}})
		return
	}
	// The scheme is canonical for the SDK's verifier.
	r.Header.Set("Authorization", "Bearer "+strings.TrimSpace(tok))
	r.Header.Del(baseHeader)
	s := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		s = "https"
	}
	r.Header.Set(baseHeader, s+"://"+r.Host)
	sniffTask(r)
	if r.Header.Get("Mcp-Protocol-Version") >= modernProtocol {
		h.stateless.ServeHTTP(w, r)
		return
	}
	h.stateful.ServeHTTP(&retryWriter{ResponseWriter: w, retry: h.o.Retry}, r)
}

// retryWriter writes an SSE "retry" field first in every event stream it
// answers, so that a client knows how long to wait before it resumes.
type retryWriter struct {
	http.ResponseWriter
	retry       time.Duration
	wroteHeader bool
}

// WriteHeader sends the status, then the retry field when the response is
// an event stream.
func (w *retryWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
	if code == http.StatusOK && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		_, _ = fmt.Fprintf(w.ResponseWriter, "retry: %d\n\n", w.retry.Milliseconds())
	}
}

// Write sends an implicit 200 first, like http.ResponseWriter.
func (w *retryWriter) Write(b []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController flush the underlying writer.
func (w *retryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// call is the handler of both tools.
func (h *handler) call(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	owner := ""
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		owner = req.Extra.TokenInfo.UserID
	}
	if owner == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unauthorized: no principal"}
	}
	modern := req.ProtocolVersion() >= modernProtocol
	p := req.Params
	if p.RequestState != "" {
		id, err := h.openState(owner, p.RequestState)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		return h.retry(ctx, req, owner, id)
	}
	if id, _ := p.Meta["requestId"].(string); id != "" {
		// An older client coming back to a question it was told about
		// (progress notifications and results name it): its state, never a
		// second question.
		return h.settle(ctx, req, owner, id, modern)
	}
	ir, res, err := h.ask(ctx, req, owner)
	if ir == nil {
		return res, err
	}
	return h.settle(ctx, req, owner, ir.ID, modern)
}

// ask puts the question of a tools/call in front of owner, or finds the
// same question already pending in the session (the same call again after
// a restart or a dropped connection: one question, never two). Without a
// question it returns the call's answer instead: an error result for
// invalid arguments, or a JSON-RPC error.
func (h *handler) ask(ctx context.Context, req *sdk.CallToolRequest, owner string) (*api.InputRequest, *sdk.CallToolResult, error) {
	p := req.Params
	sessionID, _ := p.Meta["sessionId"].(string)
	ir, err := h.o.Runner.Ask(ctx, agent.AskParams{Owner: owner, SessionID: sessionID, Tool: p.Name, Arguments: p.Arguments,
		Source: sourceOf(req)})
	var pe *agent.InteractionPendingError
	switch {
	case errors.As(err, &pe) && pe.Pending != nil && sameQuestion(pe.Pending, p.Name, p.Arguments):
		return pe.Pending, nil, nil
	case errors.Is(err, agent.ErrInvalidArguments):
		// Like a model's invalid call: an error result that says what is
		// wrong, so the caller can fix and retry (docs/design.md §2).
		return nil, &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "invalid arguments for " + p.Name + ": " +
			strings.TrimPrefix(err.Error(), agent.ErrInvalidArguments.Error()+": ")}}, IsError: true}, nil
	case errors.As(err, &pe):
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: string(api.CodeInteractionPending) +
			": session " + sessionID + " already waits on another question"}
	case errors.Is(err, agent.ErrSessionNotFound):
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: string(api.CodeSessionNotFound) + ": no session " + sessionID}
	case errors.Is(err, agent.ErrRunInProgress):
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: string(api.CodeRunInProgress) + ": session " + sessionID + " has a run in progress"}
	case err != nil:
		return nil, nil, h.internal("ask", err)
	}
	return ir, nil, nil
}

// sourceOf says which host asked: its clientInfo name and version as it
// sent them (the initialize of an older session, the request's _meta of a
// 2026-07-28 one).
func sourceOf(req *sdk.CallToolRequest) *api.InputSource {
	src := &api.InputSource{Kind: api.SourceMCP}
	if ci := req.ClientInfo(); ci != nil {
		src.Client, src.ClientVersion = ci.Name, ci.Version
	}
	return src
}

// sameQuestion reports whether a pending request is the question that tool
// with args would ask: same tool, same validated prompt, asked over MCP.
func sameQuestion(pending *api.InputRequest, tool string, args json.RawMessage) bool {
	if pending.Source == nil || pending.Source.Kind != api.SourceMCP || pending.Tool != tool {
		return false
	}
	p, err := askuser.ParseArgs(tool, string(args))
	if err != nil {
		return false
	}
	a, err1 := json.Marshal(p)
	b, err2 := json.Marshal(pending.Prompt)
	return err1 == nil && err2 == nil && string(a) == string(b)
}

// retry answers a 2026-07-28 retry carrying a valid requestState for
// question id. What the host's user did with the URL-mode request
// (inputResponses[inputRequestKey]) decides: decline or cancel cancels the
// question on luban, as the person's cancel on the page would, unless it is
// already resolved (the first resolution stands); accept means they went to
// luban's page, so the retry is held until the question is resolved (the
// SDKs' automatic loops then need two rounds, not one per poll); no
// response reads the state: input_required again while pending.
func (h *handler) retry(ctx context.Context, req *sdk.CallToolRequest, owner, id string) (*sdk.CallToolResult, error) {
	action := ""
	if er, ok := req.Params.InputResponses[inputRequestKey].(*sdk.ElicitResult); ok {
		action = er.Action
	}
	a, err := h.o.Runner.AskedState(ctx, owner, id)
	if err != nil {
		return nil, h.stateErr(err)
	}
	if a.Status != api.StatusPending {
		return resultOf(a), nil
	}
	switch action {
	case "decline", "cancel":
		_, err := h.o.Runner.Resolve(ctx, agent.ResolveParams{By: owner, SessionID: a.Request.SessionID, RequestID: id,
			Answer: api.ContinueRequest{Cancelled: true}, Surface: agent.SurfaceMCP})
		var ar *agent.AlreadyResolvedError
		var ee *agent.InteractionExpiredError
		if err != nil && !errors.As(err, &ar) && !errors.As(err, &ee) {
			h.o.Logger.Error("mcp cancel on decline", "request", id, "err", err)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the server log has the details"}
		}
		return h.settle(ctx, req, owner, id, true)
	case "accept":
		return h.hold(ctx, req.Session, req.Params.GetProgressToken(), owner, a)
	}
	return h.inputRequired(req, owner, a.Request), nil
}

// settle answers a call about question id: its result once resolved, else
// input_required (modern clients) or a held call (older ones).
func (h *handler) settle(ctx context.Context, req *sdk.CallToolRequest, owner, id string, modern bool) (*sdk.CallToolResult, error) {
	a, err := h.o.Runner.AskedState(ctx, owner, id)
	if err != nil {
		return nil, h.stateErr(err)
	}
	if a.Status != api.StatusPending {
		return resultOf(a), nil
	}
	if modern {
		return h.inputRequired(req, owner, a.Request), nil
	}
	return h.hold(ctx, req.Session, req.Params.GetProgressToken(), owner, a)
}

func (h *handler) stateErr(err error) error {
	if errors.Is(err, agent.ErrInteractionNotFound) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: string(api.CodeInteractionNotFound) + ": no such question"}
	}
	h.o.Logger.Error("mcp read question", "err", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the server log has the details"}
}

// meta names the question in a result or notification, so a client can
// come back to it (_meta.sessionId) after losing the connection.
func meta(r *api.InputRequest) sdk.Meta {
	return sdk.Meta{"sessionId": r.SessionID, "requestId": r.ID}
}

// resultOf is the ToolResult of a resolved question as an MCP result: the
// same content as the model's ToolResult (§3), its metadata as structured
// content.
func resultOf(a *agent.Asked) *sdk.CallToolResult {
	res := a.Result
	if res == nil {
		// Resolved without a ToolResult on its call (cannot happen: the
		// resolution writes both in one transaction); say so plainly.
		res = &api.ToolResult{Content: fmt.Sprintf("the question was resolved (%s) without a result", a.Status), IsError: true}
	}
	out := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Content}}, IsError: res.IsError, Meta: meta(a.Request)}
	out.Meta["status"] = string(a.Status)
	if len(res.Metadata) > 0 && res.Metadata[0] == '{' {
		out.StructuredContent = json.RawMessage(res.Metadata)
	}
	return out
}

// inputRequired is the 2026-07-28 answer to a pending question: a URL-mode
// elicitation of the question's own page and a signed requestState.
func (h *handler) inputRequired(req *sdk.CallToolRequest, owner string, r *api.InputRequest) *sdk.CallToolResult {
	base := ""
	if req.Extra != nil && req.Extra.Header != nil {
		base = req.Extra.Header.Get(baseHeader)
	}
	return &sdk.CallToolResult{
		InputRequests: sdk.InputRequestMap{inputRequestKey: &sdk.ElicitParams{Mode: "url", ElicitationID: r.ID,
			URL: base + "/q/" + r.ID, Message: "Answer on luban: " + r.Title}},
		RequestState: h.sealState(owner, r.ID, r.ExpiresAt),
		Meta:         meta(r),
	}
}

// hold keeps an older client's call (or a tasks/result) open on session ss
// until the question is resolved, sending a progress notification at once
// and then every KeepAlive when the request carried a progress token. A
// dropped connection or a shutdown ends the call; the question stays
// pending.
func (h *handler) hold(ctx context.Context, ss *sdk.ServerSession, token any, owner string, a *agent.Asked) (*sdk.CallToolResult, error) {
	// The session's events wake the loop; the state is read again on every
	// wake and every tick, so nothing depends on catching one event.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	changed := make(chan struct{}, 1)
	go func() {
		for _, err := range h.o.Runner.Events(wctx, a.Request.SessionID, 0) {
			if err != nil {
				return
			}
			select {
			case changed <- struct{}{}:
			default:
			}
		}
	}()
	tick := time.NewTicker(h.o.KeepAlive)
	defer tick.Stop()
	n := 0
	progress := func() {
		if token == nil {
			return
		}
		n++
		m := meta(a.Request)
		_ = ss.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Meta: m,
			Message: fmt.Sprintf("waiting for an answer on luban (session %s, request %s)", a.Request.SessionID, a.Request.ID)})
	}
	progress()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.o.Done:
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: "luban is shutting down; the question stays pending: call again with _meta.requestId " + a.Request.ID + " (or the same requestState)"}
		case <-tick.C:
			progress()
		case <-changed:
		}
		cur, err := h.o.Runner.AskedState(ctx, owner, a.Request.ID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, h.stateErr(err)
		}
		if cur.Status != api.StatusPending {
			return resultOf(cur), nil
		}
	}
}
