package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lubanhq/luban/store"
)

const mcpTaskCols = `id, owner, session_id, request_id, protocol, ttl_ms, created_at, cancelled_at`

func scanMCPTask(sc interface{ Scan(...any) error }) (*store.MCPTask, error) {
	t := &store.MCPTask{}
	var ttl, c int64
	var x sql.NullInt64
	if err := sc.Scan(idTask.into(&t.ID), &t.Owner, &t.SessionID, idAsk.into(&t.RequestID), &t.Protocol, &ttl, &c, &x); err != nil {
		return nil, err
	}
	t.TTL, t.CreatedAt, t.CancelledAt = time.Duration(ttl)*time.Millisecond, tm(c), tm(x.Int64)
	return t, nil
}

// MCPTaskInsert implements store.MCPTasks.
func (e executor) MCPTaskInsert(ctx context.Context, p *store.MCPTaskInsertParams) (*store.MCPTask, error) {
	_, err := e.w.ExecContext(ctx, `INSERT INTO mcp_tasks (`+mcpTaskCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
		idTask.enc(p.ID), p.Owner, p.SessionID, idAsk.enc(p.RequestID), p.Protocol, p.TTL.Milliseconds(), ts(p.Now))
	if isUnique(err) {
		return nil, fmt.Errorf("mcp task %s: %w", p.ID, store.ErrDuplicate)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: mcp task insert: %w", err)
	}
	return &store.MCPTask{ID: p.ID, Owner: p.Owner, SessionID: p.SessionID, RequestID: p.RequestID, Protocol: p.Protocol,
		TTL: p.TTL.Truncate(time.Millisecond), CreatedAt: tm(ts(p.Now))}, nil
}

// MCPTaskGet implements store.MCPTasks.
func (e executor) MCPTaskGet(ctx context.Context, id string) (*store.MCPTask, error) {
	t, err := scanMCPTask(e.r.QueryRowContext(ctx, `SELECT `+mcpTaskCols+` FROM mcp_tasks WHERE id = ?`, idTask.enc(id)))
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
	q, args := `WHERE owner = ?`, []any{p.Owner}
	if !p.Before.IsZero() {
		q += ` AND (created_at < ? OR (created_at = ? AND id < ?))`
		args = append(args, ts(p.Before), ts(p.Before), idTask.enc(p.BeforeID))
	}
	rows, err := e.r.QueryContext(ctx, `SELECT `+mcpTaskCols+` FROM mcp_tasks `+q+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: mcp task list: %w", err)
	}
	defer rows.Close()
	var out []*store.MCPTask
	for rows.Next() {
		t, err := scanMCPTask(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: mcp task list: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// MCPTaskCancel implements store.MCPTasks.
func (e executor) MCPTaskCancel(ctx context.Context, p *store.MCPTaskCancelParams) (bool, error) {
	res, err := e.w.ExecContext(ctx, `UPDATE mcp_tasks SET cancelled_at = ? WHERE id = ? AND cancelled_at IS NULL`, ts(p.Now), idTask.enc(p.ID))
	return affected(res, err, "mcp task cancel")
}
