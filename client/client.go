package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/lubanhq/luban/api"
)

// Options configures a Client. The zero value (and nil) is valid.
type Options struct {
	// HTTPClient sends the requests. Default: a client with no overall
	// timeout (streams are long-lived; bound calls with ctx).
	HTTPClient *http.Client
}

// Client talks to one luban server as one principal (its token). It is safe
// for concurrent use.
type Client struct {
	base  string
	token string
	hc    *http.Client
}

// New returns a client of the server at baseURL (e.g.
// "http://127.0.0.1:8080", with or without a trailing slash) that sends
// token as "Authorization: Bearer <token>". An empty token sends no
// Authorization header (every /api call then fails with 401 unauthorized).
// It returns an error when baseURL is not an absolute http(s) URL.
func New(baseURL, token string, opts *Options) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q must be an absolute http:// or https:// URL", baseURL)
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: &http.Client{}}
	if opts != nil && opts.HTTPClient != nil {
		c.hc = opts.HTTPClient
	}
	return c, nil
}

// BaseURL returns the server's base URL without a trailing slash.
func (c *Client) BaseURL() string { return c.base }

// do sends a request with a JSON body (nil for none) and returns the 2xx
// response; anything else is a *Error (or a transport error).
func (c *Client) do(ctx context.Context, method, path string, body any, accept string, hdr http.Header) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("client: encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, errorOf(resp)
	}
	return resp, nil
}

// getAs is getJSON into a new T.
func getAs[T any](ctx context.Context, c *Client, method, path string, body any) (*T, error) {
	var out T
	if err := c.getJSON(ctx, method, path, body, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// getJSON sends a request and decodes the JSON answer into out.
func (c *Client) getJSON(ctx context.Context, method, path string, body, out any) error {
	resp, err := c.do(ctx, method, path, body, "application/json", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("client: decode %s %s: %w", method, path, err)
	}
	return nil
}

// stream sends a request whose answer is an SSE stream.
func (c *Client) stream(ctx context.Context, method, path string, body any, hdr http.Header, after int64) (*Stream, error) {
	resp, err := c.do(ctx, method, path, body, "text/event-stream", hdr)
	if err != nil {
		return nil, err
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		resp.Body.Close()
		return nil, fmt.Errorf("client: %s %s answered %q, not an event stream", method, path, ct)
	}
	return newStream(resp, after), nil
}

// Chat sends message (POST /api/chat) in sessionID, or in a new session when
// sessionID is empty, and returns the run's events: first session
// {sessionId, runId}, then the user's message, then the run's until it
// pauses (user_input_required) or ends (done). Errors (*Error): 400
// invalid_request (empty message), 404 session_not_found, 409
// interaction_pending (Pending is the question to answer first), 409
// run_in_progress, 413 payload_too_large.
func (c *Client) Chat(ctx context.Context, sessionID, message string) (*Stream, error) {
	return c.Start(ctx, api.ChatRequest{SessionID: sessionID, Message: message})
}

// Start is Chat with the whole request (POST /api/chat): req.Agent names the
// agent of a new session (one of Agents; empty means the default agent). A
// session keeps its agent: naming another one for an existing session, or
// an agent the server does not have, is 400 invalid_request. Other errors as
// Chat.
func (c *Client) Start(ctx context.Context, req api.ChatRequest) (*Stream, error) {
	return c.stream(ctx, http.MethodPost, "/api/chat", req, nil, 0)
}

// Continue answers a pending request once (POST /api/chat/continue, docs/design.md
// §A.2) and returns the continuation's events: user_input_resolved (the
// receipt) first, then the run's until it pauses again or ends. Errors
// (*Error): 404 interaction_not_found, 409 already_resolved (Receipt), 410
// interaction_expired (Receipt) or not_resumable, 413 payload_too_large, 422
// invalid_answer (Details; the request stays pending, so correct and send
// again).
func (c *Client) Continue(ctx context.Context, req api.ContinueRequest) (*Stream, error) {
	return c.stream(ctx, http.MethodPost, "/api/chat/continue", req, nil, 0)
}

// ContinueBatch answers several pending requests of a session at once
// with the batch form of POST /api/chat/continue (docs/design.md §32): all
// or none. The stream is the continuation's, as for Continue; while the
// run still waits on other requests it ends after the resolutions' events.
// Errors as Continue (422 details name the entry: answers[1].decision).
func (c *Client) ContinueBatch(ctx context.Context, req api.ContinueBatchRequest) (*Stream, error) {
	return c.stream(ctx, http.MethodPost, "/api/chat/continue", req, nil, 0)
}

// ContinueNoStream answers like Continue but asks for JSON (Accept:
// application/json): the server answers 202 with the receipt at once and
// the run continues without this caller; follow it with Events if needed.
// Errors as Continue.
func (c *Client) ContinueNoStream(ctx context.Context, req api.ContinueRequest) (*api.Receipt, error) {
	var out api.ContinueAccepted
	if err := c.getJSON(ctx, http.MethodPost, "/api/chat/continue", req, &out); err != nil {
		return nil, err
	}
	if out.Receipt == nil {
		return nil, errors.New("client: continue answered without a receipt")
	}
	return out.Receipt, nil
}

// Pending returns the session's pending request and last receipt (GET
// /api/interactions/pending), what a restarted front end needs to show the
// question again. Errors: 404 session_not_found.
func (c *Client) Pending(ctx context.Context, sessionID string) (*api.PendingResponse, error) {
	return getAs[api.PendingResponse](ctx, c, http.MethodGet, "/api/interactions/pending?sessionId="+url.QueryEscape(sessionID), nil)
}

// Sessions lists the caller's sessions, newest first (GET /api/sessions).
func (c *Client) Sessions(ctx context.Context) ([]api.SessionView, error) {
	var out api.SessionList
	if err := c.getJSON(ctx, http.MethodGet, "/api/sessions", nil, &out); err != nil {
		return nil, err
	}
	return out.Sessions, nil
}

// Session returns the session's transcript (GET /api/sessions/{id}).
// Errors: 404 session_not_found (also for another principal's session).
func (c *Client) Session(ctx context.Context, sessionID string) (*api.Transcript, error) {
	return getAs[api.Transcript](ctx, c, http.MethodGet, "/api/sessions/"+url.PathEscape(sessionID), nil)
}

// Trace returns what happened in the session (GET /api/sessions/{id}/trace).
func (c *Client) Trace(ctx context.Context, sessionID string) (*api.TraceView, error) {
	return getAs[api.TraceView](ctx, c, http.MethodGet, "/api/sessions/"+url.PathEscape(sessionID)+"/trace", nil)
}

// Info returns the server's model name and ask tools (GET /api/info).
func (c *Client) Info(ctx context.Context) (*api.Info, error) {
	return getAs[api.Info](ctx, c, http.MethodGet, "/api/info", nil)
}

// Events subscribes to the session's event log (GET
// /api/sessions/{id}/events with Last-Event-ID): every event after
// lastEventID (0 = from the start), then live ones; the stream stays open
// (heartbeats are skipped) until ctx ends or the server shuts down. To
// resume after a lost connection, call it again with the old stream's
// LastEventID. Errors: 404 session_not_found.
func (c *Client) Events(ctx context.Context, sessionID string, lastEventID int64) (*Stream, error) {
	return c.events(ctx, "/api/sessions/"+url.PathEscape(sessionID)+"/events", lastEventID)
}

// events is GET path as an event stream resumed after lastEventID (0: none).
func (c *Client) events(ctx context.Context, path string, lastEventID int64) (*Stream, error) {
	hdr := http.Header{}
	if lastEventID > 0 {
		hdr.Set("Last-Event-ID", strconv.FormatInt(lastEventID, 10))
	}
	return c.stream(ctx, http.MethodGet, path, nil, hdr, lastEventID)
}

// Cancel stops the session's active run (POST /api/sessions/{id}/cancel): a
// pending request is resolved as cancelled and the run stops with no
// further model turn. It returns the session's resulting status
// ("cancelled", or the status it already had when nothing was active).
// Errors: 404 session_not_found.
func (c *Client) Cancel(ctx context.Context, sessionID string) (string, error) {
	var out api.CancelResponse
	if err := c.getJSON(ctx, http.MethodPost, "/api/sessions/"+url.PathEscape(sessionID)+"/cancel", nil, &out); err != nil {
		return "", err
	}
	return out.Status, nil
}
