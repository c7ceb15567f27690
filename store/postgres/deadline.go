package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/lubanhq/luban/store"
)

// deadlineArgs are the arrays of interaction p's deadlines, its timeout
// (seq 0) first, for insertInteraction's unnest.
func deadlineArgs(p *store.InteractionInsertParams) (seqs []int32, kinds []string, dues []time.Time, data []string) {
	add := func(seq int, kind string, due time.Time, d []byte) {
		seqs, kinds, dues, data = append(seqs, int32(seq)), append(kinds, kind), append(dues, due.UTC()), append(data, string(d))
	}
	add(0, store.DeadlineTimeout, p.ExpiresAt, p.TimeoutData)
	for i, d := range p.Deadlines {
		add(i+1, d.Kind, d.DueAt, d.Data)
	}
	return
}

// insertInteraction is InteractionInsert's one statement: the interaction
// and its deadlines (the deadlines ride on the insert's RETURNING, so a
// duplicate tool call writes neither). It reports how many deadlines it
// wrote: 0 when the tool call had an interaction already.
const insertInteraction = `WITH i AS (
	INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at, route)
	VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $13) ON CONFLICT (session_id, tool_call_id) DO NOTHING
	RETURNING id, session_id)
INSERT INTO interaction_deadlines (request_id, seq, session_id, kind, due_at, data)
SELECT i.id, d.seq, i.session_id, d.kind, d.due_at, NULLIF(d.data, '')
FROM i, unnest($9::int[], $10::text[], $11::timestamptz[], $12::text[]) AS d(seq, kind, due_at, data)`

// insertInteractionNew is insertInteraction for a MustWin insert, without
// ON CONFLICT (a speculative insertion's check and WAL record): the
// statement fails (a unique violation of interactions_tool_call) when the
// tool call had an interaction already, so that, queued in a pipeline, it
// keeps the statements after it, COMMIT included, from running.
const insertInteractionNew = `WITH i AS (
	INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at, route)
	VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7, $8, $13)
	RETURNING id, session_id)
INSERT INTO interaction_deadlines (request_id, seq, session_id, kind, due_at, data)
SELECT i.id, d.seq, i.session_id, d.kind, d.due_at, NULLIF(d.data, '')
FROM i, unnest($9::int[], $10::text[], $11::timestamptz[], $12::text[]) AS d(seq, kind, due_at, data)`

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
	rows, err := e.q.Query(ctx, `SELECT `+deadlineCols+` FROM interaction_deadlines `+query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: deadline list: %w", err)
	}
	return collect(rows, "deadline list", scanDeadline)
}

// DeadlineList implements store.Executor.
func (e executor) DeadlineList(ctx context.Context, requestID string) ([]*store.Deadline, error) {
	return e.deadlineMany(ctx, `WHERE request_id = $1 ORDER BY seq`, requestID)
}

// DeadlineListDue implements store.Executor.
func (e executor) DeadlineListDue(ctx context.Context, p *store.DeadlineListDueParams) ([]*store.Deadline, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return e.deadlineMany(ctx, `WHERE fired_at IS NULL AND due_at <= $1 ORDER BY due_at, request_id, seq LIMIT $2`, p.Now.UTC(), limit)
}

// DeadlineNextDue implements store.Executor.
func (e executor) DeadlineNextDue(ctx context.Context) (time.Time, error) {
	var due pgtype.Timestamptz
	if err := e.q.QueryRow(ctx, `SELECT MIN(due_at) FROM interaction_deadlines WHERE fired_at IS NULL`).Scan(&due); err != nil {
		return time.Time{}, fmt.Errorf("postgres: deadline next due: %w", err)
	}
	return tm(due), nil
}

// DeadlineFire implements store.Executor: one conditional UPDATE; of two
// replicas the second waits for the first's row lock, re-checks fired_at
// and loses.
func (e executor) DeadlineFire(ctx context.Context, p *store.DeadlineFireParams) (bool, error) {
	q := `UPDATE interaction_deadlines SET fired_at = $1 WHERE request_id = $2 AND seq = $3 AND fired_at IS NULL`
	if p.Pending {
		q += ` AND EXISTS (SELECT 1 FROM interactions WHERE id = $2 AND status = 'pending')`
	}
	tag, err := e.q.Exec(ctx, q, p.Now.UTC(), p.RequestID, p.Seq)
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
