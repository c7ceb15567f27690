package store

import (
	"context"
	"time"
)

// MCPTasks is the part of a Store that keeps the tasks luban's MCP server
// hands to hosts that speak MCP Tasks (docs/design.md §11 "MCP Tasks"). A
// task is a durable handle on one host question (an interaction): its
// status is the interaction's, read through RequestID, except that a task
// the host cancelled stays cancelled. Rows go with their session
// (Maintainer.SessionDelete).
type MCPTasks interface {
	// MCPTaskInsert stores a new task. A second task with the same ID is
	// ErrDuplicate.
	MCPTaskInsert(ctx context.Context, p *MCPTaskInsertParams) (*MCPTask, error)
	// MCPTaskGet reads task id (ErrNotFound when there is none). The caller
	// checks Owner.
	MCPTaskGet(ctx context.Context, id string) (*MCPTask, error)
	// MCPTaskList lists the owner's tasks newest first (CreatedAt, then ID,
	// descending), those strictly after the cursor (Before, BeforeID) when
	// Before is set, at most Limit (default 100). Another owner's tasks are
	// never returned.
	MCPTaskList(ctx context.Context, p *MCPTaskListParams) ([]*MCPTask, error)
	// MCPTaskCancel marks task ID cancelled at Now, once: it reports false
	// (and writes nothing) when the task was cancelled already or does not
	// exist.
	MCPTaskCancel(ctx context.Context, p *MCPTaskCancelParams) (bool, error)
}

// MCPTask is one task row. Protocol is the tasks dialect the host spoke
// when it created the task ("2025-11-25": the tasks utility; "extension":
// the io.modelcontextprotocol/tasks extension), which decides the shapes
// it is answered in. TTL is the lifetime from CreatedAt that the host was
// told (0: unlimited). CancelledAt is zero unless the host cancelled it.
type MCPTask struct {
	ID          string
	Owner       string
	SessionID   string
	RequestID   string
	Protocol    string
	TTL         time.Duration
	CreatedAt   time.Time
	CancelledAt time.Time
}

// MCPTaskInsertParams is a new task; its fields are MCPTask's, Now its
// CreatedAt.
type MCPTaskInsertParams struct {
	ID, Owner, SessionID, RequestID, Protocol string
	TTL                                       time.Duration
	Now                                       time.Time
}

// MCPTaskListParams selects a page of the owner's tasks (MCPTaskList).
type MCPTaskListParams struct {
	Owner    string
	Before   time.Time
	BeforeID string
	Limit    int
}

// MCPTaskCancelParams cancels task ID at Now (MCPTaskCancel).
type MCPTaskCancelParams struct {
	ID  string
	Now time.Time
}
