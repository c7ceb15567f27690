package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lubanhq/luban/store"
)

const mcpTaskCols = `id, owner, session_id, request_id, protocol, ttl_ms, created_at, cancelled_at`

func scanMCPTask(row pgx.Row) (*store.MCPTask, error) {
	t := &store.MCPTask{}
	var ttl int64
	var c, x pgtype.Timestamptz
	if err := row.Scan(&t.ID, &t.Owner, &t.SessionID, &t.RequestID, &t.Protocol, &ttl, &c, &x); err != nil {
		return nil, err
	}
	t.TTL, t.CreatedAt, t.CancelledAt = time.Duration(ttl)*time.Millisecond, tm(c), tm(x)
	return t, nil
}

// MCPTaskInsert implements store.MCPTasks.
func (e executor) MCPTaskInsert(ctx context.Context, p *store.MCPTaskInsertParams) (*store.MCPTask, error) {
	_, err := e.q.Exec(ctx, `INSERT INTO mcp_tasks (`+mcpTaskCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL)`,
		p.ID, p.Owner, p.SessionID, p.RequestID, p.Protocol, p.TTL.Milliseconds(), p.Now.UTC())
	if isUnique(err) {
		return nil, fmt.Errorf("mcp task %s: %w", p.ID, store.ErrDuplicate)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: mcp task insert: %w", err)
	}
	return &store.MCPTask{ID: p.ID, Owner: p.Owner, SessionID: p.SessionID, RequestID: p.RequestID, Protocol: p.Protocol,
		TTL: p.TTL.Truncate(time.Millisecond), CreatedAt: p.Now.UTC().Truncate(time.Microsecond)}, nil
}

// MCPTaskGet implements store.MCPTasks.
func (e executor) MCPTaskGet(ctx context.Context, id string) (*store.MCPTask, error) {
	t, err := scanMCPTask(e.q.QueryRow(ctx, `SELECT `+mcpTaskCols+` FROM mcp_tasks WHERE id = $1`, id))
	if err != nil {
		return nil, notFound(err, "mcp task "+id)
	}
	return t, nil
}

// MCPTaskList implements store.MCPTasks.
func (e executor) MCPTaskList(ctx context.Context, p *store.MCPTaskListParams) ([]*store.MCPTask, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	q, args := `WHERE owner = $1`, []any{p.Owner}
	if !p.Before.IsZero() {
		q += ` AND (created_at, id) < ($2, $3)`
		args = append(args, p.Before.UTC(), p.BeforeID)
	}
	args = append(args, limit)
	rows, err := e.q.Query(ctx, `SELECT `+mcpTaskCols+` FROM mcp_tasks `+q+fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: mcp task list: %w", err)
	}
	return collect(rows, "mcp task list", scanMCPTask)
}

// MCPTaskCancel implements store.MCPTasks.
func (e executor) MCPTaskCancel(ctx context.Context, p *store.MCPTaskCancelParams) (bool, error) {
	tag, err := e.q.Exec(ctx, `UPDATE mcp_tasks SET cancelled_at = $1 WHERE id = $2 AND cancelled_at IS NULL`, p.Now.UTC(), p.ID)
	if err != nil {
		return false, fmt.Errorf("postgres: mcp task cancel: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
