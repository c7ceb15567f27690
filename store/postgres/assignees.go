package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lubanhq/luban/store"
)

// AssigneeAdd implements store.Executor in one statement.
func (e executor) AssigneeAdd(ctx context.Context, p *store.AssigneeAddParams) error {
	if len(p.Persons) == 0 {
		return nil
	}
	args := []any{p.RequestID, p.Via, p.Now.UTC()}
	var vals []string
	for i, person := range p.Persons {
		args = append(args, person)
		vals = append(vals, fmt.Sprintf(`($%d, %d)`, len(args), i+1))
	}
	_, err := e.q.Exec(ctx, `INSERT INTO interaction_assignees (request_id, person, pos, via, added_at)
		SELECT $1, v.person, (SELECT COALESCE(MAX(a.pos), 0) FROM interaction_assignees a WHERE a.request_id = $1) + v.n, $2, $3
		FROM (VALUES `+strings.Join(vals, ", ")+`) AS v (person, n)
		ON CONFLICT (request_id, person) DO NOTHING`, args...)
	if err != nil {
		return fmt.Errorf("postgres: assignee add: %w", err)
	}
	return nil
}

// AssigneeDecide implements store.Executor. The interaction's row is
// locked first; the decision and the count are a second statement, whose
// snapshot (READ COMMITTED) sees every decision committed before the lock
// was granted.
func (e executor) AssigneeDecide(ctx context.Context, p *store.AssigneeDecideParams) (int, bool, error) {
	var one int
	err := e.q.QueryRow(ctx, `SELECT 1 FROM interactions WHERE id = $1 AND status = 'pending' FOR UPDATE`, p.RequestID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("postgres: assignee decide: %w", err)
	}
	var won, approvals int
	err = e.q.QueryRow(ctx, `WITH d AS (UPDATE interaction_assignees SET decision = $3, decided_at = $4
			WHERE request_id = $1 AND person = $2 AND decision = '' RETURNING decision)
		SELECT (SELECT COUNT(*) FROM d),
			(SELECT COUNT(*) FROM interaction_assignees WHERE request_id = $1 AND decision = 'approve')
			+ (SELECT COUNT(*) FROM d WHERE decision = 'approve')`,
		p.RequestID, p.Person, p.Decision, p.Now.UTC()).Scan(&won, &approvals)
	if err != nil {
		return 0, false, fmt.Errorf("postgres: assignee decide: %w", err)
	}
	if won != 1 {
		return 0, false, nil
	}
	return approvals, true, nil
}

// AssigneeList implements store.Executor.
func (e executor) AssigneeList(ctx context.Context, requestID string) ([]*store.Assignee, error) {
	rows, err := e.q.Query(ctx, `SELECT request_id, person, via, decision, added_at, decided_at
		FROM interaction_assignees WHERE request_id = $1 ORDER BY pos`, requestID)
	if err != nil {
		return nil, fmt.Errorf("postgres: assignee list: %w", err)
	}
	return collect(rows, "assignee list", func(row pgx.Row) (*store.Assignee, error) {
		a := &store.Assignee{}
		var added, decided pgtype.Timestamptz
		if err := row.Scan(&a.RequestID, &a.Person, &a.Via, &a.Decision, &added, &decided); err != nil {
			return nil, err
		}
		a.AddedAt, a.DecidedAt = tm(added), tm(decided)
		return a, nil
	})
}
