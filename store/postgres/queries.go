package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lubanhq/luban/store"
)

type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// executor implements store.Executor on the pool (pool set, onCommit told of
// appended events) or inside a transaction (touched collects the sessions
// whose events InTx must NOTIFY).
type executor struct {
	q        querier
	pool     *pgxpool.Pool
	channel  string
	onCommit func(sessionID string)
	touched  map[string]struct{}
}

// ts converts a time for a nullable column: the zero time is NULL.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return tstz(t)
}

// tstz is t as a timestamptz argument: pgx encodes a pgtype.Timestamptz
// as it is, a time.Time only once wrapped in a value of its own (one
// allocation more per argument).
func tstz(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t.UTC(), Valid: true}
}

func tm(v pgtype.Timestamptz) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return v.Time.UTC()
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func rawJSON(s pgtype.Text) json.RawMessage {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.RawMessage(s.String)
}

func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// violates reports whether err is a unique violation of index.
func violates(err error, index string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505" && pe.ConstraintName == index
}

func notFound(err error, what string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("postgres: %s: %w", what, err)
}

// ---- audit

// AuditInsert implements store.Executor.
func (e executor) AuditInsert(ctx context.Context, p *store.AuditInsertParams) error {
	err := e.execLater(ctx, `INSERT INTO audit (session_id, request_id, tool_call_id, run_id, action, reason, summary, at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, p.SessionID, p.RequestID, p.ToolCallID, p.RunID, p.Action, p.Reason, nullJSON(p.Summary), tstz(p.Now))
	if err != nil {
		return fmt.Errorf("postgres: audit insert: %w", err)
	}
	return nil
}

// AuditList implements store.Executor.
func (e executor) AuditList(ctx context.Context, sessionID string) ([]*store.AuditEntry, error) {
	rows, err := e.q.Query(ctx, `SELECT id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at
		FROM audit WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("postgres: audit list: %w", err)
	}
	return collect(rows, "audit list", func(row pgx.Row) (*store.AuditEntry, error) {
		a := &store.AuditEntry{}
		var sum pgtype.Text
		var at pgtype.Timestamptz
		if err := row.Scan(&a.ID, &a.SessionID, &a.RequestID, &a.ToolCallID, &a.RunID, &a.Action, &a.Reason, &sum, &at); err != nil {
			return nil, err
		}
		a.Summary, a.At = rawJSON(sum), tm(at)
		return a, nil
	})
}

// collect scans every row with scan and closes rows.
func collect[T any](rows pgx.Rows, what string, scan func(pgx.Row) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("postgres: %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return out, nil
}

// ---- events

// EventAppend takes the session's next sequence number (the UPDATE's row lock
// orders concurrent appends) and inserts the event. Outside a transaction it
// runs in one of its own that also NOTIFYs, so the event and its notification
// are committed together.
func (e executor) EventAppend(ctx context.Context, p *store.EventAppendParams) (*store.Event, error) {
	if e.pool == nil {
		ev, feedKeys, err := appendEvent(ctx, e.q, p)
		if err == nil {
			e.touched[p.SessionID] = struct{}{}
			for _, k := range feedKeys {
				e.touched[k] = struct{}{}
			}
		}
		return ev, err
	}
	var ev *store.Event
	var feedKeys []string
	err := pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error {
		var err error
		if ev, feedKeys, err = appendEvent(ctx, textQuerier{tx}, p); err != nil {
			return err
		}
		return notifyAll(ctx, tx, e.channel, append([]string{p.SessionID}, feedKeys...))
	})
	if err != nil {
		return nil, err
	}
	e.onCommit(p.SessionID)
	for _, k := range feedKeys {
		e.onCommit(k)
	}
	return ev, nil
}

// appendEventSQL takes session $1's next sequence number (the UPDATE's row
// lock orders concurrent appends) and inserts the event with it, in one
// statement; no row for an unknown session. It returns the number and the
// session's owner (for the feed).
const appendEventSQL = `WITH s AS (UPDATE sessions SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq, owner)
	INSERT INTO events (session_id, seq, name, data, ref, run_id, created_at) SELECT $1, s.last_seq, $2, $3, NULLIF($4, ''), NULLIF($5, ''), $6 FROM s
	RETURNING seq, (SELECT owner FROM s)`

// appendEvent inserts the event and, for a store.FeedEvents name, its feed
// entry (appendFeed), whose Subscribe keys it returns for NOTIFY. In a
// transaction that holds the session's row already (pipeTx.sess: it
// created the session, appended to it or changed one of its runs) the
// event is queued (pipeTx.queueEvent: the session's queued events are one
// statement) and the append costs no round trip. Its number is known and
// checked when the statement comes back, or, while a MustWin run write that
// locks the row is queued too (txSession.deferred), set then.
func appendEvent(ctx context.Context, q querier, p *store.EventAppendParams) (*store.Event, []string, error) {
	data, ref := string(p.Data), ""
	if p.Ref != "" {
		data, ref = "", p.Ref
	} else if p.MessageRef != "" {
		ref = p.MessageRef
	}
	ev := &store.Event{SessionID: p.SessionID, Name: p.Name, Data: p.Data, RunID: p.RunID, CreatedAt: p.Now}
	pipe, _ := q.(*pipeTx)
	var owner string
	held := pipe.held(p.SessionID)
	if held != nil {
		owner = held.owner
		pipe.queueEvent(ev, data, ref)
	} else {
		if err := q.QueryRow(ctx, appendEventSQL, p.SessionID, p.Name, data, ref, p.RunID, tstz(p.Now)).Scan(&ev.Seq, &owner); err != nil {
			return nil, nil, notFound(err, "event append: session "+p.SessionID)
		}
		pipe.hold(p.SessionID, ev.Seq, owner)
		if held = pipe.held(p.SessionID); held != nil {
			held.n++
		}
	}
	feedKeys, err := appendFeed(ctx, q, p, ev.Seq, owner, held)
	if err != nil {
		return nil, nil, err
	}
	return ev, feedKeys, nil
}

// EventList implements store.Executor.
func (e executor) EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	// A reference names an interaction (the event is its request) or a
	// message of the event's session (the event carries its content or a
	// call's arguments, store.SpliceMessage; messages are found by
	// session: their ids have no index of their own).
	rows, err := e.q.Query(ctx, `SELECT e.seq, e.name, COALESCE(i.request, e.data), m.content, m.tool_calls, COALESCE(e.run_id, ''), e.created_at
		FROM events e LEFT JOIN interactions i ON i.id = e.ref LEFT JOIN messages m ON m.session_id = e.session_id AND m.id = e.ref AND i.id IS NULL
		WHERE e.session_id = $1 AND e.seq > $2 ORDER BY e.seq LIMIT $3`, p.SessionID, p.AfterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: event list: %w", err)
	}
	return collect(rows, "event list", func(row pgx.Row) (*store.Event, error) {
		ev := &store.Event{SessionID: p.SessionID}
		var data string
		var content, calls pgtype.Text // NULL without a message reference
		var at pgtype.Timestamptz
		if err := row.Scan(&ev.Seq, &ev.Name, &data, &content, &calls, &ev.RunID, &at); err != nil {
			return nil, err
		}
		ev.Data, ev.CreatedAt = json.RawMessage(data), tm(at)
		if content.Valid {
			ev.Data = store.SpliceMessage(ev.Data, content.String, []byte(calls.String))
		}
		return ev, nil
	})
}

// EventDelete implements store.Executor.
func (e executor) EventDelete(ctx context.Context, p *store.EventDeleteParams) (int64, error) {
	if len(p.Names) == 0 || p.FromSeq > p.ToSeq {
		return 0, nil
	}
	tag, err := e.q.Exec(ctx, `DELETE FROM events WHERE session_id = $1 AND seq BETWEEN $2 AND $3 AND name = ANY($4)`,
		p.SessionID, p.FromSeq, p.ToSeq, p.Names)
	if err != nil {
		return 0, fmt.Errorf("postgres: event delete: %w", err)
	}
	return tag.RowsAffected(), nil
}

// ---- interactions

const interactionCols = `id, session_id, run_id, tool_call_id, tool, request, status, answer, created_at, expires_at, resolved_at, receipt_jws, route, decided_by`

func scanInteraction(row pgx.Row) (*store.Interaction, error) {
	it := &store.Interaction{}
	var req string
	var ans, route, by pgtype.Text
	var c, x, r pgtype.Timestamptz
	if err := row.Scan(&it.ID, &it.SessionID, &it.RunID, &it.ToolCallID, &it.Tool, &req, &it.Status, &ans, &c, &x, &r, &it.ReceiptJWS, &route, &by); err != nil {
		return nil, err
	}
	it.Request, it.Answer, it.Route, it.DecidedBy = json.RawMessage(req), rawJSON(ans), rawJSON(route), rawJSON(by)
	it.CreatedAt, it.ExpiresAt, it.ResolvedAt = tm(c), tm(x), tm(r)
	return it, nil
}

func (e executor) interactionOne(ctx context.Context, what, query string, args ...any) (*store.Interaction, error) {
	it, err := scanInteraction(e.q.QueryRow(ctx, `SELECT `+interactionCols+` FROM interactions `+query, args...))
	if err != nil {
		return nil, notFound(err, what)
	}
	return it, nil
}

// InteractionGet implements store.Executor.
func (e executor) InteractionGet(ctx context.Context, id string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "interaction "+id, `WHERE id = $1`, id)
}

// InteractionGetByToolCall implements store.Executor.
func (e executor) InteractionGetByToolCall(ctx context.Context, sessionID, toolCallID string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "interaction for tool call "+toolCallID, `WHERE session_id = $1 AND tool_call_id = $2`, sessionID, toolCallID)
}

// InteractionGetPending implements store.Executor.
func (e executor) InteractionGetPending(ctx context.Context, sessionID string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "pending interaction", `WHERE session_id = $1 AND status = 'pending' ORDER BY created_at LIMIT 1`, sessionID)
}

// InteractionGetLastResolved implements store.Executor.
func (e executor) InteractionGetLastResolved(ctx context.Context, sessionID string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "resolved interaction", `WHERE session_id = $1 AND status <> 'pending' ORDER BY resolved_at DESC NULLS LAST, created_at DESC LIMIT 1`, sessionID)
}

// InteractionInsert uses ON CONFLICT DO NOTHING on the one-per-tool-call
// index, so a duplicate reports store.ErrDuplicate without aborting the
// surrounding transaction (as in SQLite).
//
// A MustWin insert inside InTx is queued (pipeTx) as a statement that
// fails the transaction on a duplicate (no ON CONFLICT): InTx then
// returns an error wrapping store.ErrDuplicate.
func (e executor) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	args := []any{p.ID, p.SessionID, p.RunID, p.ToolCallID, p.Tool, string(p.Request), tstz(p.Now), tstz(p.ExpiresAt), nullJSON(p.Route), string(p.TimeoutData)}
	if len(p.Deadlines) > 0 {
		seqs, kinds, dues, data := deadlineArgs(p)
		args = append(args, seqs, kinds, dues, data)
	}
	if pipe, ok := e.q.(*pipeTx); ok && p.MustWin {
		q := insertInteractionRow
		if len(p.Deadlines) > 0 {
			q = withDeadlines(q)
		}
		toolCall := p.ToolCallID
		pipe.laterRead(func(br pgx.BatchResults) error {
			_, err := br.Exec()
			if violates(err, "interactions_tool_call") {
				return fmt.Errorf("interaction for tool call %s: %w", toolCall, store.ErrDuplicate)
			}
			if err != nil {
				return fmt.Errorf("interaction insert: %w", err)
			}
			return nil
		}, q, args...)
	} else {
		var n int64
		var err error
		if len(p.Deadlines) > 0 {
			err = e.q.QueryRow(ctx, withDeadlines(insertInteractionRow+onConflictNothing), args...).Scan(&n)
		} else {
			var tag pgconn.CommandTag
			tag, err = e.q.Exec(ctx, insertInteractionRow+onConflictNothing, args...)
			n = tag.RowsAffected()
		}
		if err != nil {
			return nil, fmt.Errorf("postgres: interaction insert: %w", err)
		}
		if n == 0 {
			return nil, fmt.Errorf("interaction for tool call %s: %w", p.ToolCallID, store.ErrDuplicate)
		}
	}
	if e.touched != nil {
		e.touched[store.DeadlineKey] = struct{}{}
	}
	return &store.Interaction{ID: p.ID, SessionID: p.SessionID, RunID: p.RunID, ToolCallID: p.ToolCallID, Tool: p.Tool,
		Request: p.Request, Status: "pending", CreatedAt: p.Now, ExpiresAt: p.ExpiresAt, Route: p.Route}, nil
}

func (e executor) interactionMany(ctx context.Context, query string, args ...any) ([]*store.Interaction, error) {
	rows, err := e.q.Query(ctx, `SELECT `+interactionCols+` FROM interactions `+query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: interaction list: %w", err)
	}
	return collect(rows, "interaction list", scanInteraction)
}

// InteractionList implements store.Executor.
func (e executor) InteractionList(ctx context.Context, sessionID string) ([]*store.Interaction, error) {
	return e.interactionMany(ctx, `WHERE session_id = $1 ORDER BY created_at, id`, sessionID)
}

// InteractionListPending implements store.Executor: through
// interactions_session_pending.
func (e executor) InteractionListPending(ctx context.Context, sessionID string) ([]*store.Interaction, error) {
	return e.interactionMany(ctx, `WHERE session_id = $1 AND status = 'pending' ORDER BY created_at, id`, sessionID)
}

// InteractionListExpired implements store.Executor.
func (e executor) InteractionListExpired(ctx context.Context, p *store.InteractionListExpiredParams) ([]*store.Interaction, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	return e.interactionMany(ctx, `WHERE status = 'pending' AND expires_at <= $1 ORDER BY expires_at LIMIT $2`, tstz(p.Now), limit)
}

// InteractionResolve is the one-time consumption (docs/design.md §A.6.2): a single
// conditional UPDATE; of two racing replicas the second waits for the
// first's row lock, re-checks status = 'pending' and loses.
func (e executor) InteractionResolve(ctx context.Context, p *store.InteractionResolveParams) (bool, error) {
	cmp := `expires_at > $6`
	if p.Status == "expired" {
		cmp = `expires_at <= $6`
	}
	update := `UPDATE interactions SET status = $1, answer = $2, resolved_at = $3, receipt_jws = $7, decided_by = $8, ` + closeTimeout + `
		WHERE id = $4 AND session_id = $5 AND status = 'pending' AND ` + cmp
	args := []any{p.Status, nullJSON(p.Answer), tstz(p.Now), p.ID, p.SessionID, tstz(p.Now), p.ReceiptJWS, nullJSON(p.DecidedBy)}
	if pipe, ok := e.q.(*pipeTx); ok && p.MustWin {
		pipe.laterRead(mustWin("interaction resolve"), mustWinSQL(update), args...)
		return true, nil
	}
	tag, err := e.q.Exec(ctx, update, args...)
	if err != nil {
		return false, fmt.Errorf("postgres: interaction resolve: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// InteractionSign implements store.Executor.
func (e executor) InteractionSign(ctx context.Context, p *store.InteractionSignParams) error {
	if _, err := e.q.Exec(ctx, `UPDATE interactions SET receipt_jws = $1 WHERE id = $2`, p.ReceiptJWS, p.ID); err != nil {
		return fmt.Errorf("postgres: interaction sign: %w", err)
	}
	return nil
}

// InteractionResolveRun implements store.Executor.
func (e executor) InteractionResolveRun(ctx context.Context, p *store.InteractionResolveRunParams) ([]*store.Interaction, error) {
	rows, err := e.q.Query(ctx, `UPDATE interactions SET status = $1, answer = $2, resolved_at = $3, `+closeTimeout+`
		WHERE session_id = $4 AND run_id = $5 AND status = 'pending' RETURNING `+interactionCols,
		p.Status, nullJSON(p.Answer), tstz(p.Now), p.SessionID, p.RunID)
	if err != nil {
		return nil, fmt.Errorf("postgres: interaction resolve run: %w", err)
	}
	out, err := collect(rows, "interaction resolve run", scanInteraction)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *store.Interaction) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// ---- messages

// insertMessageSQL inserts a message and returns its number; none for a
// second ToolResult of a tool call (ON CONFLICT on the partial unique
// index, so the surrounding transaction stays usable).
const insertMessageSQL = insertNewMessageSQL + `
	ON CONFLICT (session_id, tool_call_id) WHERE role = 'tool' DO NOTHING RETURNING seq`

// insertNewMessageSQL inserts a message that cannot be a duplicate (any
// but a tool result), or one whose duplicate fails the statement
// (messages_one_result, SQLSTATE 23505), with no ON CONFLICT clause: an
// insert with one is a speculative insertion, which costs the server a
// check and a WAL record of its own. With " RETURNING seq" appended it
// returns the message's number.
const insertNewMessageSQL = `INSERT INTO messages (id, session_id, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`

// MessageInsert: a second ToolResult for a tool call reports
// store.ErrDuplicate. In a transaction a message that cannot be a
// duplicate (any but a tool result) is queued (pipeTx): the insert rides
// with the transaction's next round trip, and the returned message's Seq
// is set when that comes back, by the time InTx returns (nothing reads it
// sooner).
func (e executor) MessageInsert(ctx context.Context, p *store.MessageInsertParams) (*store.Message, error) {
	m, args := newMessage(p), messageArgs(p)
	if pipe, ok := e.q.(*pipeTx); ok && p.Role != "tool" {
		pipe.laterRead(func(br pgx.BatchResults) error {
			if err := br.QueryRow().Scan(&m.Seq); err != nil {
				return fmt.Errorf("message insert: %w", err)
			}
			return nil
		}, insertNewMessageSQL+` RETURNING seq`, args...)
		return m, nil
	}
	q := insertMessageSQL
	if p.Role != "tool" {
		q = insertNewMessageSQL + ` RETURNING seq`
	}
	err := e.q.QueryRow(ctx, q, args...).Scan(&m.Seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("tool result for %s: %w", p.ToolCallID, store.ErrDuplicate)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: message insert: %w", err)
	}
	return m, nil
}

// newMessage is the message MessageInsert writes, without its Seq.
func newMessage(p *store.MessageInsertParams) *store.Message {
	return &store.Message{ID: p.ID, SessionID: p.SessionID, RunID: p.RunID, Role: p.Role, Content: p.Content,
		ToolCalls: p.ToolCalls, Calls: p.DecodedCalls(), ToolCallID: p.ToolCallID, Name: p.Name, IsError: p.IsError, Metadata: p.Metadata,
		ParentID: p.ParentID, CallIndex: p.CallIndex, CreatedAt: p.Now}
}

// messageArgs are insertMessageSQL's arguments.
func messageArgs(p *store.MessageInsertParams) []any {
	return []any{p.ID, p.SessionID, p.RunID, p.Role, p.Content, nullJSON(p.ToolCalls), p.ToolCallID, p.Name, p.IsError, nullJSON(p.Metadata), p.ParentID, p.CallIndex, tstz(p.Now)}
}

// MessageList implements store.Executor.
func (e executor) MessageList(ctx context.Context, sessionID string) ([]*store.Message, error) {
	rows, err := e.q.Query(ctx, `SELECT `+messageCols+` FROM messages WHERE session_id = $1 ORDER BY seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("postgres: message list: %w", err)
	}
	return collect(rows, "message list", scanMessage)
}

const messageCols = `seq, id, session_id, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at`

func scanMessage(row pgx.Row) (*store.Message, error) {
	m := &store.Message{}
	var calls, meta pgtype.Text
	var at pgtype.Timestamptz
	if err := row.Scan(&m.Seq, &m.ID, &m.SessionID, &m.RunID, &m.Role, &m.Content, &calls, &m.ToolCallID, &m.Name, &m.IsError, &meta, &m.ParentID, &m.CallIndex, &at); err != nil {
		return nil, err
	}
	m.ToolCalls, m.Metadata, m.CreatedAt = rawJSON(calls), rawJSON(meta), tm(at)
	m.Calls = store.DecodeCalls(m.ToolCalls)
	return m, nil
}

// ---- runs

const runCols = `id, session_id, agent, status, steps, invalid_streak, error, lease_owner, lease_until, created_at, updated_at`

func scanRun(row pgx.Row) (*store.Run, error) {
	r := &store.Run{}
	var lu, c, u pgtype.Timestamptz
	if err := row.Scan(&r.ID, &r.SessionID, &r.Agent, &r.Status, &r.Steps, &r.InvalidStreak, &r.Error, &r.LeaseOwner, &lu, &c, &u); err != nil {
		return nil, err
	}
	r.LeaseUntil, r.CreatedAt, r.UpdatedAt = tm(lu), tm(c), tm(u)
	return r, nil
}

// RunGet implements store.Executor.
func (e executor) RunGet(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(e.q.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1`, id))
	if err != nil {
		return nil, notFound(err, "run "+id)
	}
	return r, nil
}

// RunGetActive implements store.Executor.
func (e executor) RunGetActive(ctx context.Context, sessionID string) (*store.Run, error) {
	r, err := scanRun(e.q.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE session_id = $1 AND status IN ('running', 'waiting_input')`, sessionID))
	if err != nil {
		return nil, notFound(err, "active run")
	}
	return r, nil
}

// RunInsert reports store.ErrRunActive through ON CONFLICT on the
// one-active-run index (the transaction stays usable).
//
// The first run of a session its transaction created cannot meet another
// (nobody else sees the session yet): its insert is queued, and should it
// conflict all the same, the transaction fails with store.ErrRunActive.
func (e executor) RunInsert(ctx context.Context, p *store.RunInsertParams) (*store.Run, error) {
	const insertNew = `INSERT INTO runs (id, session_id, agent, status, lease_owner, lease_until, created_at, updated_at)
		VALUES ($1, $2, $3, 'running', $4, $5, $6, $6)`
	const insert = insertNew + `
		ON CONFLICT (session_id) WHERE status IN ('running', 'waiting_input') DO NOTHING`
	args := []any{p.ID, p.SessionID, p.Agent, p.LeaseOwner, ts(p.LeaseUntil), tstz(p.Now)}
	run := &store.Run{ID: p.ID, SessionID: p.SessionID, Agent: p.Agent, Status: store.RunRunning,
		LeaseOwner: p.LeaseOwner, LeaseUntil: p.LeaseUntil, CreatedAt: p.Now, UpdatedAt: p.Now}
	if pipe, ok := e.q.(*pipeTx); ok {
		pipe.learn(p.ID, p.SessionID)
		if held := pipe.held(p.SessionID); held != nil && held.created && held.runs == 0 {
			held.runs++
			// Without ON CONFLICT (a speculative insertion's check and
			// WAL record): a conflict fails the statement.
			pipe.laterRead(func(br pgx.BatchResults) error {
				_, err := br.Exec()
				if violates(err, "runs_one_active") {
					err = store.ErrRunActive
				}
				if err != nil {
					return fmt.Errorf("run insert: %w", err)
				}
				return nil
			}, insertNew, args...)
			return run, nil // the session was created running, at Now
		}
	}
	tag, err := e.q.Exec(ctx, insert, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: run insert: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return nil, fmt.Errorf("run insert: %w", store.ErrRunActive)
	}
	// The session is running (store.RunInsertParams): with its events
	// when the transaction appends some (pipeTx.running).
	if pipe, ok := e.q.(*pipeTx); ok && pipe.held(p.SessionID) == nil {
		if pipe.running == nil {
			pipe.running = map[string]time.Time{}
		}
		pipe.running[p.SessionID] = p.Now.UTC()
		return run, nil
	}
	if err := e.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: p.SessionID, Status: string(store.RunRunning), Now: p.Now}); err != nil {
		return nil, fmt.Errorf("postgres: run insert: %w", err)
	}
	return run, nil
}

// RunLease takes or extends a lease in one conditional UPDATE. A NULL
// lease_until (a released lease) counts as expired.
func (e executor) RunLease(ctx context.Context, p *store.RunLeaseParams) (bool, error) {
	tag, err := e.q.Exec(ctx, `UPDATE runs SET lease_owner = $1, lease_until = $2
		WHERE id = $3 AND status = 'running'
		  AND (lease_owner = '' OR lease_owner = $1 OR lease_until IS NULL OR lease_until < $4)`,
		p.Owner, ts(p.Until), p.ID, tstz(p.Now))
	if err != nil {
		return false, fmt.Errorf("postgres: run lease: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// RunListRecoverable implements store.Executor.
func (e executor) RunListRecoverable(ctx context.Context, p *store.RunListRecoverableParams) ([]*store.Run, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.q.Query(ctx, `SELECT `+runCols+` FROM runs WHERE status = 'running' AND (lease_until IS NULL OR lease_until < $1)
		ORDER BY updated_at LIMIT $2`, tstz(p.Now), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: run list recoverable: %w", err)
	}
	return collect(rows, "run list recoverable", scanRun)
}

// releaseLease is the SET clause that frees a run's lease: a run that
// pauses or ends holds none (RunPause, RunFinish).
const releaseLease = `lease_owner = '', lease_until = NULL`

// runWrite runs sql, a conditional UPDATE of one run (no RETURNING), and
// reports whether it changed the row. In a transaction it also locks the
// run's session row, as the transaction's event appends will (FOR NO KEY
// UPDATE, the lock of an UPDATE that changes no key; run row first, then
// session row: only for a write whose transaction takes no other row lock
// before its events: RunPause, RunResume, RunFinish to completed), and
// returns the session's id with its last event number and owner, so that
// the events that follow are queued (appendEvent): the same round trip.
// session is "" outside a transaction.
//
// A MustWin write (must) of a run whose session and owner the store
// knows (runSessions) is queued instead: it fails the transaction if it
// loses (mustWinSQL), and the session's events queued after it are
// numbered by the server (txSession.deferred).
func (e executor) runWrite(ctx context.Context, what, runID string, must bool, sql string, args ...any) (ok bool, session string, err error) {
	pipe, inTx := e.q.(*pipeTx)
	if !inTx {
		ok, err = won(what)(e.q.Exec(ctx, sql, args...))
		return ok, "", err
	}
	if rs, known := pipe.known.get(runID); must && known {
		pipe.laterRead(mustWin(what), `WITH r AS (`+sql+` RETURNING session_id),
			s AS (SELECT s.id FROM r JOIN sessions s ON s.id = r.session_id FOR NO KEY UPDATE OF s)
			SELECT CASE WHEN count(*) = 1 THEN 1 ELSE luban_lost('') END FROM s`, args...)
		if pipe.sess[rs.session] == nil {
			pipe.sess[rs.session] = &txSession{owner: rs.owner, deferred: true}
		}
		return true, rs.session, nil
	}
	var seq int64
	var owner string
	err = e.q.QueryRow(ctx, `WITH r AS (`+sql+` RETURNING session_id)
		SELECT s.id, s.last_seq, s.owner FROM r JOIN sessions s ON s.id = r.session_id FOR NO KEY UPDATE OF s`, args...).Scan(&session, &seq, &owner)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return false, "", nil
	case isUnique(err):
		return false, "", fmt.Errorf("%s: %w", what, store.ErrRunActive)
	case err != nil:
		return false, "", fmt.Errorf("postgres: %s: %w", what, err)
	}
	pipe.hold(session, seq, owner)
	pipe.learn(runID, session)
	return true, session, nil
}

// mustWinSQL wraps update, a conditional write of at most one row (no
// RETURNING), so that the statement fails (luban_lost, SQLSTATE LB001) when
// it changes none: queued in a pipeline, it keeps the statements after it,
// COMMIT included, from running.
func mustWinSQL(update string) string {
	return `WITH u AS (` + update + ` RETURNING 1) SELECT CASE WHEN count(*) = 1 THEN 1 ELSE luban_lost('') END FROM u`
}

// mustWin reads the result of a mustWinSQL statement: an error wrapping
// store.ErrLost when it lost.
func mustWin(what string) func(pgx.BatchResults) error {
	return func(br pgx.BatchResults) error {
		_, err := br.Exec()
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "LB001" {
			return fmt.Errorf("%s: %w", what, store.ErrLost)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
}

// won reports whether the conditional update what changed its one row.
func won(what string) func(tag pgconn.CommandTag, err error) (bool, error) {
	return func(tag pgconn.CommandTag, err error) (bool, error) {
		if isUnique(err) {
			return false, fmt.Errorf("%s: %w", what, store.ErrRunActive)
		}
		if err != nil {
			return false, fmt.Errorf("postgres: %s: %w", what, err)
		}
		return tag.RowsAffected() == 1, nil
	}
}

// RunCheckpoint implements store.Executor.
func (e executor) RunCheckpoint(ctx context.Context, p *store.RunCheckpointParams) (bool, error) {
	return won("run checkpoint")(e.q.Exec(ctx, `UPDATE runs SET updated_at = $1, steps = COALESCE($2, steps), invalid_streak = COALESCE($3, invalid_streak)
		WHERE id = $4 AND status = 'running' AND lease_owner = $5`, tstz(p.Now), p.Steps, p.InvalidStreak, p.ID, p.LeaseOwner))
}

// RunPause implements store.Executor.
func (e executor) RunPause(ctx context.Context, p *store.RunPauseParams) (bool, error) {
	ok, session, err := e.runWrite(ctx, "run pause", p.ID, p.MustWin, `UPDATE runs SET status = 'waiting_input', updated_at = $1, `+releaseLease+`,
		steps = COALESCE($4, steps), invalid_streak = COALESCE($5, invalid_streak)
		WHERE id = $2 AND status = 'running' AND lease_owner = $3`, tstz(p.Now), p.ID, p.LeaseOwner, p.Steps, p.InvalidStreak)
	if err != nil || !ok {
		return ok, err
	}
	// The session's updated_at moves when a run starts or ends, not here
	// (store.Executor's RunPause and RunResume); a run started in this
	// transaction keeps its time.
	pipe, _ := e.q.(*pipeTx)
	started := pipe.startedAt(session)
	switch {
	case pipe.queueStatus(session, "waiting_input", started):
	case session != "":
		err = e.execLater(ctx, `UPDATE sessions SET status = 'waiting_input', updated_at = COALESCE($1, updated_at) WHERE id = $2`, ts(started), session)
	default:
		err = e.execLater(ctx, `UPDATE sessions SET status = 'waiting_input' WHERE id = (SELECT session_id FROM runs WHERE id = $1)`, p.ID)
	}
	if err != nil {
		return false, fmt.Errorf("postgres: run pause: session status: %w", err)
	}
	return true, nil
}

// RunHold implements store.Executor.
func (e executor) RunHold(ctx context.Context, p *store.RunHoldParams) (bool, error) {
	ok, _, err := e.runWrite(ctx, "run hold", p.ID, false, `UPDATE runs SET updated_at = $1 WHERE id = $2 AND status = 'waiting_input'`, tstz(p.Now), p.ID)
	return ok, err
}

// RunResume implements store.Executor.
func (e executor) RunResume(ctx context.Context, p *store.RunResumeParams) (bool, error) {
	q := `UPDATE runs SET status = 'running', updated_at = $1, lease_owner = $2, lease_until = $3
		WHERE id = $4 AND status = 'waiting_input'`
	args := []any{tstz(p.Now), p.LeaseOwner, ts(p.LeaseUntil), p.ID}
	if p.Settled {
		resolving := p.Resolving
		if resolving == nil {
			resolving = []string{}
		}
		q += ` AND NOT EXISTS (SELECT 1 FROM interactions i WHERE i.session_id = runs.session_id AND i.run_id = runs.id
			AND i.status = 'pending' AND NOT (i.id = ANY($5::text[])))`
		args = append(args, resolving)
	}
	ok, session, err := e.runWrite(ctx, "run resume", p.ID, p.MustWin, q, args...)
	if err != nil || !ok {
		return ok, err
	}
	// The session's updated_at moves when a run starts or ends, not here
	// (store.Executor's RunPause and RunResume); a run started in this
	// transaction keeps its time.
	pipe, _ := e.q.(*pipeTx)
	started := pipe.startedAt(session)
	switch {
	case pipe.queueStatus(session, "running", started):
	case session != "":
		err = e.execLater(ctx, `UPDATE sessions SET status = 'running', updated_at = COALESCE($1, updated_at) WHERE id = $2`, ts(started), session)
	default:
		err = e.execLater(ctx, `UPDATE sessions SET status = 'running' WHERE id = (SELECT session_id FROM runs WHERE id = $1)`, p.ID)
	}
	if err != nil {
		return false, fmt.Errorf("postgres: run resume: session status: %w", err)
	}
	return true, nil
}

// RowsInsert implements store.Executor. Inside InTx the writes whose
// results nobody reads (traces, audits) ride the pipeline of the next
// statement (pipeTx), and so does a tool result: a duplicate fails the
// transaction (its insert violates messages_one_result) with an error
// wrapping store.ErrDuplicate, and
// its Seq is set when the statement comes back.
func (e executor) RowsInsert(ctx context.Context, p *store.RowsInsertParams) (*store.RowsInserted, error) {
	pipe, ok := e.q.(*pipeTx)
	if !ok {
		return store.InsertRows(ctx, e, p)
	}
	msgs := make([]*store.Message, 0, len(p.Messages))
	for _, mp := range p.Messages {
		if mp.Role != "tool" {
			m, err := e.MessageInsert(ctx, mp)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, m)
			continue
		}
		m := newMessage(mp)
		pipe.laterRead(func(br pgx.BatchResults) error {
			err := br.QueryRow().Scan(&m.Seq)
			if violates(err, "messages_one_result") {
				return fmt.Errorf("tool result for %s: %w", mp.ToolCallID, store.ErrDuplicate)
			}
			if err != nil {
				return fmt.Errorf("message insert: %w", err)
			}
			return nil
		}, insertNewMessageSQL+` RETURNING seq`, messageArgs(mp)...)
		msgs = append(msgs, m)
	}
	out, err := store.InsertRows(ctx, e, &store.RowsInsertParams{Events: p.Events, Traces: p.Traces, Audits: p.Audits})
	if err != nil {
		return nil, err
	}
	out.Messages = msgs
	return out, nil
}

// InteractionGetState implements store.Executor in one round trip: the
// interaction, its session, its run and (when asked for) its session's
// messages are four statements of one batch, each finding its rows through
// the interaction's id.
func (e executor) InteractionGetState(ctx context.Context, p *store.InteractionGetStateParams) (*store.InteractionState, error) {
	id := encodeText(p.ID)
	reads := []queued{
		{sql: `SELECT ` + interactionCols + ` FROM interactions WHERE id = $1`, args: []any{id}},
		{sql: `SELECT ` + sessionCols + ` FROM sessions WHERE id = (SELECT session_id FROM interactions WHERE id = $1)`, args: []any{id}},
		{sql: `SELECT ` + runCols + ` FROM runs WHERE id = (SELECT run_id FROM interactions WHERE id = $1)`, args: []any{id}},
	}
	if p.Messages {
		reads = append(reads, queued{sql: `SELECT ` + messageCols + ` FROM messages WHERE session_id = (SELECT session_id FROM interactions WHERE id = $1) ORDER BY seq`, args: []any{id}})
	}
	var br pgx.BatchResults
	if pipe, ok := e.q.(*pipeTx); ok {
		var err error
		if br, err = pipe.send(ctx, false, reads...); err != nil {
			return nil, fmt.Errorf("postgres: interaction state: %w", err)
		}
	} else {
		b := &pgx.Batch{}
		for _, r := range reads {
			b.Queue(r.sql, r.args...)
		}
		br = e.pool.SendBatch(ctx, b)
	}
	defer br.Close()
	it, err := scanInteraction(textRow{br.QueryRow()})
	if err != nil {
		return nil, notFound(err, "interaction "+p.ID)
	}
	out := &store.InteractionState{Interaction: it}
	if out.Session, err = scanSession(textRow{br.QueryRow()}); err != nil {
		return nil, notFound(err, "session "+it.SessionID)
	}
	if out.Run, err = scanRun(textRow{br.QueryRow()}); errors.Is(err, pgx.ErrNoRows) {
		out.Run = nil
	} else if err != nil {
		return nil, fmt.Errorf("postgres: interaction state: run: %w", err)
	}
	if p.Messages {
		rows, err := br.Query()
		if err != nil {
			return nil, fmt.Errorf("postgres: interaction state: messages: %w", err)
		}
		if out.Messages, err = collect(textRows{rows}, "interaction state: messages", scanMessage); err != nil {
			return nil, err
		}
	}
	if err := br.Close(); err != nil {
		return nil, fmt.Errorf("postgres: interaction state: %w", err)
	}
	return out, nil
}

// RunFinish implements store.Executor.
func (e executor) RunFinish(ctx context.Context, p *store.RunFinishParams) (bool, error) {
	if !p.To.Terminal() {
		return false, fmt.Errorf("postgres: run finish: %q is not an end state", p.To)
	}
	from := p.From
	if len(from) == 0 {
		from = []store.RunStatus{store.RunRunning, store.RunWaitingInput}
	}
	fs := make([]string, len(from))
	for i, f := range from {
		fs[i] = string(f)
	}
	const finish = `UPDATE runs SET status = $1, updated_at = $2, error = CASE WHEN $3 <> '' THEN $3 ELSE error END, ` + releaseLease + `,
		steps = COALESCE($7, steps), invalid_streak = COALESCE($8, invalid_streak)
		WHERE id = $4 AND status = ANY($5) AND ($6 = '' OR lease_owner = $6)`
	args := []any{string(p.To), tstz(p.Now), p.Error, p.ID, fs, p.LeaseOwner, p.Steps, p.InvalidStreak}
	pipe, inTx := e.q.(*pipeTx)
	if !inTx {
		// One statement: the run's row and its session's status (not its
		// updated_at: store.Session.UpdatedAt).
		return won("run finish")(e.q.Exec(ctx, `WITH r AS (`+finish+` RETURNING session_id)
			UPDATE sessions s SET status = $1 FROM r WHERE s.id = r.session_id`, args...))
	}
	if p.To != store.RunCompleted {
		// Not runWrite: a run that ends otherwise closes its pending
		// interactions (InteractionResolveRun) before it appends events,
		// and a transaction that answers one of them locks the interaction
		// and then the session; locking the session here would take the
		// two in the other order. A run completes while running, without
		// a pending interaction. The session's status is written after
		// every other statement of the transaction.
		ok, err := won("run finish")(e.q.Exec(ctx, finish, args...))
		if err != nil || !ok {
			return ok, err
		}
		pipe.atEnd(nil, `UPDATE sessions SET status = $1 WHERE id = (SELECT session_id FROM runs WHERE id = $2)`, string(p.To), p.ID)
		return true, nil
	}
	ok, session, err := e.runWrite(ctx, "run finish", p.ID, p.MustWin, finish, args...)
	if err != nil || !ok {
		return ok, err
	}
	// A run started in this transaction keeps its time as the session's
	// updated_at.
	started := pipe.startedAt(session)
	if !pipe.queueStatus(session, string(p.To), started) {
		err = e.execLater(ctx, `UPDATE sessions SET status = $1, updated_at = COALESCE($2, updated_at) WHERE id = $3`, string(p.To), ts(started), session)
	}
	if err != nil {
		return false, fmt.Errorf("postgres: run finish: session status: %w", err)
	}
	return true, nil
}

// ---- sessions

const sessionCols = `id, owner, title, status, last_seq, created_at, updated_at, agent`

func scanSession(row pgx.Row) (*store.Session, error) {
	s := &store.Session{}
	var c, u pgtype.Timestamptz
	if err := row.Scan(&s.ID, &s.Owner, &s.Title, &s.Status, &s.LastSeq, &c, &u, &s.Agent); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = tm(c), tm(u)
	return s, nil
}

// SessionCreate implements store.Executor.
func (e executor) SessionCreate(ctx context.Context, p *store.SessionCreateParams) (*store.Session, error) {
	status := p.Status
	if status == "" {
		status = "idle"
	}
	// In a transaction the insert is queued (an error, such as an id taken,
	// fails the transaction at its next round trip), and the transaction
	// holds the new row: its events are numbered from 1 without asking.
	if err := e.execLater(ctx, `INSERT INTO sessions (id, owner, title, status, created_at, updated_at, agent) VALUES ($1, $2, $3, $6, $4, $4, $5)`,
		p.ID, p.Owner, p.Title, tstz(p.Now), p.Agent, status); err != nil {
		return nil, fmt.Errorf("postgres: session create: %w", err)
	}
	if pipe, ok := e.q.(*pipeTx); ok {
		pipe.hold(p.ID, 0, p.Owner)
		pipe.sess[p.ID].created = true
	}
	return &store.Session{ID: p.ID, Owner: p.Owner, Title: p.Title, Status: status, Agent: p.Agent, CreatedAt: p.Now, UpdatedAt: p.Now}, nil
}

// SessionGet implements store.Executor.
func (e executor) SessionGet(ctx context.Context, id string) (*store.Session, error) {
	s, err := scanSession(e.q.QueryRow(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = $1`, id))
	if err != nil {
		return nil, notFound(err, "session "+id)
	}
	return s, nil
}

// SessionList implements store.Executor.
func (e executor) SessionList(ctx context.Context, p *store.SessionListParams) ([]*store.Session, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.q.Query(ctx, `SELECT `+sessionCols+` FROM sessions WHERE owner = $1 ORDER BY updated_at DESC, id LIMIT $2`, p.Owner, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: session list: %w", err)
	}
	return collect(rows, "session list", scanSession)
}

// SessionSetStatus implements store.Executor. In a transaction that holds
// the session's row the status rides in the statement of the session's
// events (pipeTx.queueStatus).
func (e executor) SessionSetStatus(ctx context.Context, p *store.SessionSetStatusParams) error {
	if pipe, _ := e.q.(*pipeTx); pipe.queueStatus(p.ID, p.Status, p.Now.UTC()) {
		return nil
	}
	if err := e.execLater(ctx, `UPDATE sessions SET status = $1, updated_at = $2 WHERE id = $3`, p.Status, tstz(p.Now), p.ID); err != nil {
		return fmt.Errorf("postgres: session set status: %w", err)
	}
	return nil
}

// ---- trace

// TraceInsert implements store.Executor.
func (e executor) TraceInsert(ctx context.Context, p *store.TraceInsertParams) error {
	if pipe, ok := e.q.(*pipeTx); ok {
		pipe.queueTrace(p.SessionID, p.RunID, p.Kind, string(p.Data), p.Now.UTC())
		return nil
	}
	if err := e.execLater(ctx, `INSERT INTO trace (session_id, run_id, kind, data, at) VALUES ($1, $2, $3, $4, $5)`,
		p.SessionID, p.RunID, p.Kind, string(p.Data), tstz(p.Now)); err != nil {
		return fmt.Errorf("postgres: trace insert: %w", err)
	}
	return nil
}

// TraceList implements store.Executor.
func (e executor) TraceList(ctx context.Context, sessionID string) ([]*store.TraceEntry, error) {
	rows, err := e.q.Query(ctx, `SELECT id, session_id, run_id, kind, data, at FROM trace WHERE session_id = $1 ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("postgres: trace list: %w", err)
	}
	return collect(rows, "trace list", func(row pgx.Row) (*store.TraceEntry, error) {
		t := &store.TraceEntry{}
		var data string
		var at pgtype.Timestamptz
		if err := row.Scan(&t.ID, &t.SessionID, &t.RunID, &t.Kind, &data, &at); err != nil {
			return nil, err
		}
		t.Data, t.At = json.RawMessage(data), tm(at)
		return t, nil
	})
}
