package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lubanhq/luban/store"
)

// An interaction's timeout (its deadline of Seq 0, due at its expiry) is
// kept in its row (migration 00017): timeout is its Data ('' for none;
// NULL: the row holds no timeout, one stored before the migration is a row
// of interaction_deadlines), timeout_fired is NULL until it fired or its
// interaction was resolved (every write that resolves an interaction
// closes its timeout, which is moot then: closeTimeout). So a timeout not
// fired is one of a pending interaction, and interactions_pending (by
// expires_at) finds the due ones. Only reminders and escalations (Seq 1,
// 2, …) are rows of interaction_deadlines.

// timeoutCols read an interaction's timeout as deadlineCols read a
// deadline.
const timeoutCols = `id, 0, session_id, 'timeout', expires_at, timeout_fired, NULLIF(timeout, '')`

// closeTimeout is the SET clause with which a write that resolves an
// interaction ($3 its time) closes its timeout.
const closeTimeout = `timeout_fired = COALESCE(timeout_fired, $3)`

// deadlineArgs are the arrays of interaction p's reminders and escalations
// (Seq 1, 2, …) for insertDeadlines' unnest.
func deadlineArgs(p *store.InteractionInsertParams) (seqs []int32, kinds []string, dues []time.Time, data []string) {
	for i, d := range p.Deadlines {
		seqs, kinds, dues, data = append(seqs, int32(i+1)), append(kinds, d.Kind), append(dues, d.DueAt.UTC()), append(data, string(d.Data))
	}
	return
}

// insertInteractionRow inserts an interaction with its timeout
// ($1..$10); ON CONFLICT or not is the caller's.
const insertInteractionRow = `INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at, route, timeout)
	VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $9, $10)`

// onConflictNothing makes insertInteractionRow report a duplicate tool
// call by inserting nothing.
const onConflictNothing = ` ON CONFLICT (session_id, tool_call_id) DO NOTHING`

// withDeadlines makes insert (insertInteractionRow, with or without
// onConflictNothing) insert the reminders and escalations of arrays
// $11..$14 too; they ride on its RETURNING, so a duplicate tool call
// writes none. It returns how many interactions it inserted.
func withDeadlines(insert string) string {
	return `WITH i AS (` + insert + ` RETURNING id, session_id),
	d AS (INSERT INTO interaction_deadlines (request_id, seq, session_id, kind, due_at, data)
	SELECT i.id, d.seq, i.session_id, d.kind, d.due_at, NULLIF(d.data, '')
	FROM i, unnest($11::int[], $12::text[], $13::timestamptz[], $14::text[]) AS d(seq, kind, due_at, data))
	SELECT count(*) FROM i`
}

const deadlineCols = `request_id, seq, session_id, kind, due_at, fired_at, data`

func scanDeadline(row pgx.Row) (*store.Deadline, error) {
	d := &store.Deadline{}
	var seq int32
	var due, fired pgtype.Timestamptz
	var data pgtype.Text
	if err := row.Scan(&d.RequestID, &seq, &d.SessionID, &d.Kind, &due, &fired, &data); err != nil {
		return nil, err
	}
	d.Seq, d.DueAt, d.FiredAt, d.Data = int(seq), tm(due), tm(fired), rawJSON(data)
	return d, nil
}

func (e executor) deadlineMany(ctx context.Context, query string, args ...any) ([]*store.Deadline, error) {
	rows, err := e.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: deadline list: %w", err)
	}
	return collect(rows, "deadline list", scanDeadline)
}

// DeadlineList implements store.Executor.
func (e executor) DeadlineList(ctx context.Context, requestID string) ([]*store.Deadline, error) {
	return e.deadlineMany(ctx, `SELECT `+deadlineCols+` FROM interaction_deadlines WHERE request_id = $1
		UNION ALL SELECT `+timeoutCols+` FROM interactions WHERE id = $1 AND timeout IS NOT NULL ORDER BY seq`, requestID)
}

// DeadlineListDue implements store.Executor.
func (e executor) DeadlineListDue(ctx context.Context, p *store.DeadlineListDueParams) ([]*store.Deadline, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return e.deadlineMany(ctx, `SELECT * FROM (
		(SELECT `+deadlineCols+` FROM interaction_deadlines WHERE fired_at IS NULL AND due_at <= $1 ORDER BY due_at LIMIT $2)
		UNION ALL (SELECT `+timeoutCols+` FROM interactions WHERE status = 'pending' AND expires_at <= $1 AND timeout IS NOT NULL AND timeout_fired IS NULL
			ORDER BY expires_at LIMIT $2)) d
		ORDER BY due_at, request_id, seq LIMIT $2`, tstz(p.Now), limit)
}

// DeadlineNextDue implements store.Executor.
func (e executor) DeadlineNextDue(ctx context.Context) (time.Time, error) {
	var due pgtype.Timestamptz
	if err := e.q.QueryRow(ctx, `SELECT LEAST((SELECT MIN(due_at) FROM interaction_deadlines WHERE fired_at IS NULL),
		(SELECT MIN(expires_at) FROM interactions WHERE status = 'pending' AND timeout IS NOT NULL AND timeout_fired IS NULL))`).Scan(&due); err != nil {
		return time.Time{}, fmt.Errorf("postgres: deadline next due: %w", err)
	}
	return tm(due), nil
}

// DeadlineFire implements store.Executor: one conditional UPDATE; of two
// replicas the second waits for the first's row lock, re-checks that the
// deadline is not fired and loses. A timeout is fired in its
// interaction's row, or, when the row holds none (stored before migration
// 00017), in interaction_deadlines.
func (e executor) DeadlineFire(ctx context.Context, p *store.DeadlineFireParams) (bool, error) {
	if p.Seq == 0 {
		q := `UPDATE interactions SET timeout_fired = $1 WHERE id = $2 AND timeout IS NOT NULL AND timeout_fired IS NULL`
		if p.Pending {
			q += ` AND status = 'pending'`
		}
		tag, err := e.q.Exec(ctx, q, tstz(p.Now), p.RequestID)
		if err != nil {
			return false, fmt.Errorf("postgres: deadline fire: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return true, nil
		}
	}
	q := `UPDATE interaction_deadlines SET fired_at = $1 WHERE request_id = $2 AND seq = $3 AND fired_at IS NULL`
	if p.Pending {
		q += ` AND EXISTS (SELECT 1 FROM interactions WHERE id = $2 AND status = 'pending')`
	}
	tag, err := e.q.Exec(ctx, q, tstz(p.Now), p.RequestID, p.Seq)
	if err != nil {
		return false, fmt.Errorf("postgres: deadline fire: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// AssigneeDelegate implements store.Executor in one statement: the
// interaction's row is locked (as a decision or a resolution locks it), the
// delegator's undecided row deleted, and To added only when it was.
func (e executor) AssigneeDelegate(ctx context.Context, p *store.AssigneeDelegateParams) (bool, error) {
	tag, err := e.q.Exec(ctx, `WITH i AS (SELECT id FROM interactions WHERE id = $1 AND status = 'pending' FOR UPDATE),
		d AS (DELETE FROM interaction_assignees a USING i WHERE a.request_id = i.id AND a.person = $2 AND a.decision = '' RETURNING a.request_id)
		INSERT INTO interaction_assignees (request_id, person, pos, via, added_at)
		SELECT d.request_id, $3, (SELECT COALESCE(MAX(x.pos), 0) + 1 FROM interaction_assignees x WHERE x.request_id = $1), $4, $5 FROM d
		ON CONFLICT (request_id, person) DO NOTHING`, p.RequestID, p.From, p.To, store.AssigneeDelegate, p.Now.UTC())
	if err != nil {
		return false, fmt.Errorf("postgres: assignee delegate: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
