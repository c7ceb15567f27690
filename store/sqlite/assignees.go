package sqlite

import (
	"context"
	"fmt"
	"strings"

	"github.com/lubanhq/luban/store"
)

// AssigneeAdd implements store.Executor in one statement.
func (e executor) AssigneeAdd(ctx context.Context, p *store.AssigneeAddParams) error {
	if len(p.Persons) == 0 {
		return nil
	}
	var vals []string
	var args []any
	rid := idAsk.enc(p.RequestID)
	for i, person := range p.Persons {
		vals = append(vals, `(?, ?, (SELECT COALESCE(MAX(a.pos), 0) FROM interaction_assignees a WHERE a.request_id = ?) + ?, ?, ?)`)
		args = append(args, rid, person, rid, i+1, assigneeVias.enc(p.Via), ts(p.Now))
	}
	_, err := e.w.ExecContext(ctx, `INSERT INTO interaction_assignees (request_id, person, pos, via, added_at) VALUES `+
		strings.Join(vals, ", ")+` ON CONFLICT (request_id, person) DO NOTHING`, args...)
	if err != nil {
		return fmt.Errorf("sqlite: assignee add: %w", err)
	}
	return nil
}

// AssigneeDecide implements store.Executor: the single writer serializes
// the decisions of one interaction.
func (e executor) AssigneeDecide(ctx context.Context, p *store.AssigneeDecideParams) (int, bool, error) {
	rid := idAsk.enc(p.RequestID)
	res, err := e.w.ExecContext(ctx, `UPDATE interaction_assignees SET decision = ?, decided_at = ?
		WHERE request_id = ? AND person = ? AND decision = 0
		AND EXISTS (SELECT 1 FROM interactions i WHERE i.id = ? AND i.status = 0)`,
		assigneeDecisions.enc(p.Decision), ts(p.Now), rid, p.Person, rid)
	if err != nil {
		return 0, false, fmt.Errorf("sqlite: assignee decide: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return 0, false, err
	}
	var approvals int
	if err := e.w.QueryRowContext(ctx, `SELECT COUNT(*) FROM interaction_assignees WHERE request_id = ? AND decision = 1`,
		rid).Scan(&approvals); err != nil {
		return 0, false, fmt.Errorf("sqlite: assignee decide: %w", err)
	}
	return approvals, true, nil
}

// AssigneeList implements store.Executor.
func (e executor) AssigneeList(ctx context.Context, requestID string) ([]*store.Assignee, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT request_id, person, via, decision, added_at, decided_at
		FROM interaction_assignees WHERE request_id = ? ORDER BY pos`, idAsk.enc(requestID))
	if err != nil {
		return nil, fmt.Errorf("sqlite: assignee list: %w", err)
	}
	defer rows.Close()
	var out []*store.Assignee
	for rows.Next() {
		a := &store.Assignee{}
		var added, decided int64
		if err := rows.Scan(idAsk.into(&a.RequestID), &a.Person, assigneeVias.into(&a.Via), assigneeDecisions.into(&a.Decision), &added, &decided); err != nil {
			return nil, fmt.Errorf("sqlite: assignee list: %w", err)
		}
		a.AddedAt, a.DecidedAt = tm(added), tm(decided)
		out = append(out, a)
	}
	return out, rows.Err()
}
