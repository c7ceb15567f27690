package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/lubanhq/luban/store"
)

// An interaction's timeout (its deadline of Seq 0, due at its expiry) is
// kept in its row (migration 00022): timeout_data is its Data (the data
// luban writes, timeoutDatas, as a small integer), and
// timeout_fired is NULL until it fired, then the time it fired; -1 says
// the row holds no timeout (one stored before, kept in
// interaction_deadlines, or none). Only its reminders and escalations
// (Seq 1, 2, …) are rows of interaction_deadlines. The partial index
// interactions_timeout (expires_at, while not fired) finds the due ones.
const (
	// timeoutNone is timeout_fired of an interaction whose row holds no
	// timeout.
	timeoutNone = -1
	// timeoutCols read an interaction i's timeout as deadlineCols read a
	// deadline.
	timeoutCols = `i.id, 0, i.session_id, 0, i.expires_at, i.timeout_fired, i.timeout_data`
)

// timeoutDatas are the timeout data stored as small integers: what the
// agent writes for each action (any other data is stored as its text), in
// code order: append, never reorder (stored).
var timeoutDatas = enum{`{"onTimeout":"expire"}`, `{"onTimeout":"reject"}`, `{"onTimeout":"approve"}`,
	`{"onTimeout":"cancel"}`, `{"onTimeout":"default"}`}

// insertDeadlines writes interaction p's reminders and escalations
// (p.Deadlines, Seq 1, 2, …), in InteractionInsert's transaction, in one
// statement; its timeout is in its row.
func (e executor) insertDeadlines(ctx context.Context, p *store.InteractionInsertParams) error {
	if len(p.Deadlines) == 0 {
		return nil
	}
	rid := e.enc(idAsk, p.ID)
	args := make([]any, 0, 5*len(p.Deadlines))
	for i, d := range p.Deadlines {
		args = append(args, rid, i+1, deadlineKinds.enc(d.Kind), ts(d.DueAt), nullJSON(d.Data))
	}
	q := `INSERT INTO interaction_deadlines (request_id, seq, kind, due_at, data) VALUES (?, ?, ?, ?, ?)` +
		strings.Repeat(`, (?, ?, ?, ?, ?)`, len(p.Deadlines)-1)
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
	var data any
	if err := sc.Scan(idAsk.into(&d.RequestID), &d.Seq, &d.SessionID, deadlineKinds.into(&d.Kind), &due, &fired, &data); err != nil {
		return nil, fmt.Errorf("sqlite: deadline scan: %w", err)
	}
	d.DueAt, d.FiredAt = tm(due), tm(fired.Int64)
	if data != nil {
		v, err := timeoutDatas.dec(data)
		if err != nil {
			return nil, fmt.Errorf("sqlite: deadline scan: %w", err)
		}
		d.Data = rawJSON(sql.NullString{String: v, Valid: true})
	}
	return d, nil
}

func (e executor) deadlineMany(ctx context.Context, query string, args ...any) ([]*store.Deadline, error) {
	rows, err := e.r.QueryContext(ctx, query, args...)
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

// deadlineRows is the start of a query of interaction_deadlines rows.
const deadlineRows = `SELECT ` + deadlineCols + ` FROM interaction_deadlines d LEFT JOIN interactions i ON i.id = d.request_id `

// DeadlineList implements store.Executor.
func (e executor) DeadlineList(ctx context.Context, requestID string) ([]*store.Deadline, error) {
	return e.deadlineMany(ctx, `SELECT * FROM (`+deadlineRows+`WHERE d.request_id = ?1
		UNION ALL SELECT `+timeoutCols+` FROM interactions i WHERE i.id = ?1 AND i.timeout_fired IS NOT `+fmt.Sprint(timeoutNone)+`) ORDER BY 2`, idAsk.enc(requestID))
}

// DeadlineListDue implements store.Executor.
func (e executor) DeadlineListDue(ctx context.Context, p *store.DeadlineListDueParams) ([]*store.Deadline, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return e.deadlineMany(ctx, `SELECT * FROM (SELECT * FROM (`+deadlineRows+`WHERE d.fired_at IS NULL AND d.due_at <= ?1 ORDER BY d.due_at LIMIT ?2)
		UNION ALL SELECT * FROM (SELECT `+timeoutCols+` FROM interactions i WHERE i.timeout_fired IS NULL AND i.expires_at <= ?1 ORDER BY i.expires_at LIMIT ?2))
		ORDER BY 5, 1, 2 LIMIT ?2`, ts(p.Now), limit)
}

// DeadlineNextDue implements store.Executor.
func (e executor) DeadlineNextDue(ctx context.Context) (time.Time, error) {
	var due sql.NullInt64
	if err := e.r.QueryRowContext(ctx, `SELECT MIN(COALESCE((SELECT MIN(due_at) FROM interaction_deadlines WHERE fired_at IS NULL), 9223372036854775807),
		COALESCE((SELECT expires_at FROM interactions WHERE timeout_fired IS NULL ORDER BY expires_at LIMIT 1), 9223372036854775807))`).Scan(&due); err != nil {
		return time.Time{}, fmt.Errorf("sqlite: deadline next due: %w", err)
	}
	if due.Int64 == math.MaxInt64 {
		return time.Time{}, nil
	}
	return tm(due.Int64), nil
}

// DeadlineFire implements store.Executor: one conditional UPDATE, which
// the single writer serializes (a timeout kept in interaction_deadlines,
// not in its interaction's row, takes a second).
func (e executor) DeadlineFire(ctx context.Context, p *store.DeadlineFireParams) (bool, error) {
	rid := idAsk.enc(p.RequestID)
	if p.Seq == 0 {
		q := `UPDATE interactions SET timeout_fired = ? WHERE id = ? AND timeout_fired IS NULL`
		if p.Pending {
			q += ` AND status = 0`
		}
		res, err := e.w.ExecContext(ctx, q, ts(p.Now), rid)
		if err != nil {
			return false, fmt.Errorf("sqlite: deadline fire: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return n == 1, err
		}
	}
	q := `UPDATE interaction_deadlines SET fired_at = ? WHERE request_id = ? AND seq = ? AND fired_at IS NULL`
	if p.Pending {
		q += ` AND EXISTS (SELECT 1 FROM interactions WHERE id = ? AND status = 0)`
	}
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

// timeoutData is the value an interaction's timeout data is stored as:
// NULL for none, a small integer for one of timeoutDatas, else the text.
func timeoutData(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return timeoutDatas.enc(string(b))
}
