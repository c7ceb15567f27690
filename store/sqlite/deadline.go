package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lubanhq/luban/store"
)

// insertDeadlines writes interaction p's deadlines: its timeout (seq 0) and
// p.Deadlines (seq 1, 2, …), in InteractionInsert's transaction, in one
// statement.
func (e executor) insertDeadlines(ctx context.Context, p *store.InteractionInsertParams) error {
	rid := e.enc(idAsk, p.ID)
	args := make([]any, 0, 5*(1+len(p.Deadlines)))
	args = append(args, rid, 0, deadlineKinds.enc(store.DeadlineTimeout), ts(p.ExpiresAt), nullJSON(p.TimeoutData))
	for i, d := range p.Deadlines {
		args = append(args, rid, i+1, deadlineKinds.enc(d.Kind), ts(d.DueAt), nullJSON(d.Data))
	}
	q := `INSERT INTO interaction_deadlines (request_id, seq, kind, due_at, data) VALUES (?, ?, ?, ?, ?)` +
		strings.Repeat(`, (?, ?, ?, ?, ?)`, len(p.Deadlines))
	if _, err := e.w.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("sqlite: deadline insert: %w", err)
	}
	return nil
}

// deadlineCols read a deadline as d with its interaction's session (i).
const deadlineCols = `d.request_id, d.seq, COALESCE(i.session_id, ''), d.kind, d.due_at, d.fired_at, d.data`

func scanDeadline(sc interface{ Scan(...any) error }) (*store.Deadline, error) {
	d := &store.Deadline{}
	var due int64
	var fired sql.NullInt64
	var data sql.NullString
	if err := sc.Scan(idAsk.into(&d.RequestID), &d.Seq, &d.SessionID, deadlineKinds.into(&d.Kind), &due, &fired, &data); err != nil {
		return nil, fmt.Errorf("sqlite: deadline scan: %w", err)
	}
	d.DueAt, d.FiredAt, d.Data = tm(due), tm(fired.Int64), rawJSON(data)
	return d, nil
}

func (e executor) deadlineMany(ctx context.Context, query string, args ...any) ([]*store.Deadline, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT `+deadlineCols+` FROM interaction_deadlines d LEFT JOIN interactions i ON i.id = d.request_id `+query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: deadline list: %w", err)
	}
	defer rows.Close()
	var out []*store.Deadline
	for rows.Next() {
		d, err := scanDeadline(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, rows.Err()
}

// DeadlineList implements store.Executor.
func (e executor) DeadlineList(ctx context.Context, requestID string) ([]*store.Deadline, error) {
	return e.deadlineMany(ctx, `WHERE d.request_id = ? ORDER BY d.seq`, idAsk.enc(requestID))
}

// DeadlineListDue implements store.Executor.
func (e executor) DeadlineListDue(ctx context.Context, p *store.DeadlineListDueParams) ([]*store.Deadline, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return e.deadlineMany(ctx, `WHERE d.fired_at IS NULL AND d.due_at <= ? ORDER BY d.due_at, d.request_id, d.seq LIMIT ?`, ts(p.Now), limit)
}

// DeadlineNextDue implements store.Executor.
func (e executor) DeadlineNextDue(ctx context.Context) (time.Time, error) {
	var due sql.NullInt64
	if err := e.r.QueryRowContext(ctx, `SELECT MIN(due_at) FROM interaction_deadlines WHERE fired_at IS NULL`).Scan(&due); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: deadline next due: %w", err)
	}
	return tm(due.Int64), nil
}

// DeadlineFire implements store.Executor: one conditional UPDATE, which
// the single writer serializes.
func (e executor) DeadlineFire(ctx context.Context, p *store.DeadlineFireParams) (bool, error) {
	q := `UPDATE interaction_deadlines SET fired_at = ? WHERE request_id = ? AND seq = ? AND fired_at IS NULL`
	if p.Pending {
		q += ` AND EXISTS (SELECT 1 FROM interactions WHERE id = ? AND status = 0)`
	}
	rid := idAsk.enc(p.RequestID)
	args := []any{ts(p.Now), rid, p.Seq}
	if p.Pending {
		args = append(args, rid)
	}
	res, err := e.w.ExecContext(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("sqlite: deadline fire: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AssigneeDelegate implements store.Executor: the removal is the
// conditional write (the single writer serializes it with every decision
// and resolution); To is added only when it won, in the same transaction.
func (e executor) AssigneeDelegate(ctx context.Context, p *store.AssigneeDelegateParams) (bool, error) {
	if _, autocommit := e.w.(cachedDB); autocommit && e.group != nil {
		var won bool
		err := e.group(ctx, func(tx store.Tx) error {
			var err error
			won, err = tx.AssigneeDelegate(ctx, p)
			return err
		})
		return won, err
	}
	rid := idAsk.enc(p.RequestID)
	res, err := e.w.ExecContext(ctx, `DELETE FROM interaction_assignees WHERE request_id = ? AND person = ? AND decision = 0
		AND EXISTS (SELECT 1 FROM interactions i WHERE i.id = ? AND i.status = 0)`, rid, p.From, rid)
	if err != nil {
		return false, fmt.Errorf("sqlite: assignee delegate: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return false, err
	}
	if err := e.AssigneeAdd(ctx, &store.AssigneeAddParams{RequestID: p.RequestID, Persons: []string{p.To}, Via: store.AssigneeDelegate, Now: p.Now}); err != nil {
		return false, err
	}
	return true, nil
}
