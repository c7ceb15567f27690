package agent

import (
	"context"
	"errors"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// ErrMCPTaskNotFound: no task with that id belongs to the caller (unknown,
// deleted with its session, or another principal's: they are not told
// apart).
var ErrMCPTaskNotFound = errors.New("mcp task not found")

// MCPTask is a task luban's MCP server handed to a host for one of its
// questions (docs/design.md §11 "MCP Tasks"): a durable handle, bound to the
// principal that created it, on the question RequestID of SessionID. Its
// status is the question's (AskedState), except that a task the host
// cancelled (CancelledAt set) stays cancelled. Protocol is the tasks
// dialect the host spoke ("2025-11-25" or "extension"); TTL is the
// lifetime from CreatedAt it was told (0: unlimited).
type MCPTask struct {
	ID, SessionID, RequestID, Protocol string
	TTL                                time.Duration
	CreatedAt, CancelledAt             time.Time
}

func mcpTaskOf(t *store.MCPTask) *MCPTask {
	return &MCPTask{ID: t.ID, SessionID: t.SessionID, RequestID: t.RequestID, Protocol: t.Protocol, TTL: t.TTL,
		CreatedAt: t.CreatedAt, CancelledAt: t.CancelledAt}
}

// MCPTaskCreate stores a new task of owner for question requestID (one of
// owner's: ErrInteractionNotFound otherwise) with an unguessable id
// ("task_" + 26 base32 characters of crypto/rand). It returns once the row
// is committed, so the task can be read by the time its id is sent.
func (r *Runner) MCPTaskCreate(ctx context.Context, owner, requestID, protocol string, ttl time.Duration) (*MCPTask, error) {
	it, err := r.interaction(ctx, owner, requestID)
	if err != nil {
		return nil, err
	}
	t, err := r.st.MCPTaskInsert(ctx, &store.MCPTaskInsertParams{ID: NewID("task"), Owner: owner, SessionID: it.SessionID,
		RequestID: it.ID, Protocol: protocol, TTL: ttl, Now: r.now()})
	if err != nil {
		return nil, err
	}
	return mcpTaskOf(t), nil
}

// MCPTaskGet reads task id of owner. Errors: ErrMCPTaskNotFound.
func (r *Runner) MCPTaskGet(ctx context.Context, owner, id string) (*MCPTask, error) {
	t, err := r.st.MCPTaskGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && t.Owner != owner) {
		return nil, ErrMCPTaskNotFound
	}
	if err != nil {
		return nil, err
	}
	return mcpTaskOf(t), nil
}

// MCPTaskList lists owner's tasks newest first, at most limit (1–100), those
// after the task after (a previous page's last, nil for the first page).
func (r *Runner) MCPTaskList(ctx context.Context, owner string, after *MCPTask, limit int) ([]*MCPTask, error) {
	p := &store.MCPTaskListParams{Owner: owner, Limit: min(max(limit, 1), 100)}
	if after != nil {
		p.Before, p.BeforeID = after.CreatedAt, after.ID
	}
	rows, err := r.st.MCPTaskList(ctx, p)
	if err != nil {
		return nil, err
	}
	out := make([]*MCPTask, len(rows))
	for i, t := range rows {
		out[i] = mcpTaskOf(t)
	}
	return out, nil
}

// MCPTaskCancel cancels task id of owner: the task is marked cancelled (for
// good, even when the question was resolved meanwhile), then its question,
// if still pending, is cancelled as the person's cancel on the page would
// (the run gets the cancelled ToolResult). It returns the task as it now
// is. Errors: ErrMCPTaskNotFound.
func (r *Runner) MCPTaskCancel(ctx context.Context, owner, id string) (*MCPTask, error) {
	t, err := r.MCPTaskGet(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	if _, err := r.st.MCPTaskCancel(ctx, &store.MCPTaskCancelParams{ID: id, Now: r.now()}); err != nil {
		return nil, err
	}
	_, err = r.Resolve(ctx, ResolveParams{By: owner, SessionID: t.SessionID, RequestID: t.RequestID,
		Answer: api.ContinueRequest{Cancelled: true}, Surface: SurfaceMCP})
	var ar *AlreadyResolvedError
	var ee *InteractionExpiredError
	var nr *NotResumableError
	if err != nil && !errors.As(err, &ar) && !errors.As(err, &ee) && !errors.As(err, &nr) && !errors.Is(err, ErrInteractionNotFound) {
		return nil, err
	}
	return r.MCPTaskGet(ctx, owner, id)
}
