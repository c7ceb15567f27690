package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"github.com/lubanhq/luban/api"
)

// SessionPage returns one page of the caller's sessions, most recently
// updated first (GET /api/sessions?before=&limit=): before is the Next of
// the previous page ("" for the first), limit the page size (0 means the
// server's default, 100; at most api.MaxPageLimit). The answer's Next is ""
// on the last page. Errors: 400 invalid_request (a bad limit, or a before
// that is not one of the caller's sessions).
func (c *Client) SessionPage(ctx context.Context, before string, limit int) (*api.SessionList, error) {
	q := url.Values{}
	if before != "" {
		q.Set("before", before)
	}
	if limit != 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	return getAs[api.SessionList](ctx, c, http.MethodGet, withQuery("/api/sessions", q), nil)
}

// InboxQuery selects a page of the caller's inbox (Inbox). The zero value
// is the first page of pending requests with the server's default size.
type InboxQuery struct {
	// Status is api.InboxPending (the default when empty) or
	// api.InboxResolved.
	Status api.InboxStatus
	// After is the Next of the previous page of pending requests.
	After string
	// Before is the Next of the previous page of resolved ones.
	Before string
	// Limit is the page size; 0 means the server's default (100), at most
	// api.MaxPageLimit.
	Limit int
}

// Inbox returns the caller's interactions across all its sessions (GET
// /api/interactions): with Status pending the open requests, oldest first;
// with Status resolved the receipts, most recently resolved first. Each
// entry is the InputRequest plus its status, receipt, session title and
// agent (docs/design.md §12). Errors: 400 invalid_request (a bad status,
// limit or cursor).
func (c *Client) Inbox(ctx context.Context, q InboxQuery) (*api.InteractionList, error) {
	v := url.Values{}
	if q.Status != "" {
		v.Set("status", string(q.Status))
	}
	if q.After != "" {
		v.Set("after", q.After)
	}
	if q.Before != "" {
		v.Set("before", q.Before)
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return getAs[api.InteractionList](ctx, c, http.MethodGet, withQuery("/api/interactions", v), nil)
}

// Interaction returns one question by its request id (GET
// /api/interactions/{id}): the request as asked, its status, and its receipt
// once resolved (nil while pending). Errors: 404 interaction_not_found (also
// for another principal's question).
func (c *Client) Interaction(ctx context.Context, requestID string) (*api.InteractionView, error) {
	return getAs[api.InteractionView](ctx, c, http.MethodGet, "/api/interactions/"+url.PathEscape(requestID), nil)
}

// PrincipalEvents subscribes to the caller's own event stream across all
// its sessions (GET /api/events): the user_input_required,
// user_input_resolved and done events of every session it owns, each
// payload with its sessionId, numbered by the caller's own feed. With
// lastEventID 0 only events from now on are sent; otherwise every event
// after it is replayed first (pass a previous stream's LastEventID to
// resume). The stream stays open until ctx ends or the server shuts down.
// Errors: 400 invalid_request.
func (c *Client) PrincipalEvents(ctx context.Context, lastEventID int64) (*Stream, error) {
	return c.events(ctx, "/api/events", lastEventID)
}

// Rename sets the title of the caller's session (PATCH /api/sessions/{id})
// and returns the session as listed; its updatedAt (the list's order) does
// not change. Errors: 400 invalid_request (an empty or too long title),
// 404 session_not_found.
func (c *Client) Rename(ctx context.Context, sessionID, title string) (*api.SessionView, error) {
	return getAs[api.SessionView](ctx, c, http.MethodPatch, "/api/sessions/"+url.PathEscape(sessionID), api.RenameRequest{Title: title})
}

// Delete deletes the caller's session with its runs, messages,
// interactions, events and trace (DELETE /api/sessions/{id}); audit entries
// are kept. While a run is active the answer is 409 run_in_progress, unless
// force is true, which cancels the run first. Errors: 404
// session_not_found, 409 run_in_progress.
func (c *Client) Delete(ctx context.Context, sessionID string, force bool) (*api.DeleteResponse, error) {
	path := "/api/sessions/" + url.PathEscape(sessionID)
	if force {
		path += "?force=true"
	}
	return getAs[api.DeleteResponse](ctx, c, http.MethodDelete, path, nil)
}

// Agents returns the server's configured agents, the default first (GET
// /api/agents): the names Start takes as api.ChatRequest.Agent.
func (c *Client) Agents(ctx context.Context) ([]api.AgentView, error) {
	var out api.AgentList
	if err := c.getJSON(ctx, http.MethodGet, "/api/agents", nil, &out); err != nil {
		return nil, err
	}
	return out.Agents, nil
}

// MCPAuthorizations lists the MCP servers waiting for an OAuth
// authorization the caller may give (GET /api/mcp/authorizations,
// docs/design.md §11): open each one's ConnectURL, relative to the
// server's URL, in a browser signed in to luban.
func (c *Client) MCPAuthorizations(ctx context.Context) ([]api.MCPAuthorization, error) {
	var out api.MCPAuthorizationList
	if err := c.getJSON(ctx, http.MethodGet, "/api/mcp/authorizations", nil, &out); err != nil {
		return nil, err
	}
	return out.Authorizations, nil
}

// OpenAPI returns the server's OpenAPI 3.1 document of /api (GET
// /api/openapi.json) as the JSON bytes it sent.
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	resp, err := c.do(ctx, http.MethodGet, "/api/openapi.json", nil, "application/json", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxDocumentBytes+1))
	if err != nil {
		return nil, fmt.Errorf("client: read /api/openapi.json: %w", err)
	}
	if len(b) > maxDocumentBytes {
		return nil, fmt.Errorf("client: /api/openapi.json is larger than %d bytes", maxDocumentBytes)
	}
	return b, nil
}

// maxDocumentBytes bounds the OpenAPI document OpenAPI reads.
const maxDocumentBytes = 16 << 20

// withQuery appends q to path when it has any values.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// Delegate hands pending question requestID to person to, with an optional
// message for them (POST /api/interactions/{id}/delegate, docs/design.md
// §16): the caller, an assignee, may no longer answer it. Errors (*Error):
// 403 not_assignee, 404 interaction_not_found, 409 already_resolved, 410
// interaction_expired, 422 invalid_delegation (to oneself, a stranger, an
// assignee).
func (c *Client) Delegate(ctx context.Context, requestID, to, message string) (*api.DelegateResult, error) {
	return getAs[api.DelegateResult](ctx, c, http.MethodPost, "/api/interactions/"+url.PathEscape(requestID)+"/delegate", api.DelegateRequest{To: to, Message: message})
}
