package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lubanhq/luban/store"
)

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (rowsReader, error)
	QueryRowContext(ctx context.Context, query string, args ...any) rowScanner
}

// executor implements store.Executor on a reader (r) and a writer (w); in a
// transaction both are the *sql.Tx. onEvent is told of every appended event.
type executor struct {
	r, w    querier
	onEvent func(sessionID string)
	// group is Store.InTx, for a multi-statement write made outside one.
	group func(ctx context.Context, fn func(tx store.Tx) error) error
	// buf holds a group commit member's log rows (rowbuf.go); nil
	// elsewhere.
	buf *rowBuf
}

func ts(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func tm(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}

func nullJSON(b json.RawMessage) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

func rawJSON(s sql.NullString) json.RawMessage {
	if !s.Valid || s.String == "" {
		return nil
	}
	return json.RawMessage(s.String)
}

func isUnique(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

func notFound(err error, what string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s: %w", what, store.ErrNotFound)
	}
	return fmt.Errorf("sqlite: %s: %w", what, err)
}

// ---- audit

// AuditInsert implements store.Executor.
func (e executor) AuditInsert(ctx context.Context, p *store.AuditInsertParams) error {
	if e.buf != nil {
		return e.buf.appendAudit(ctx, p)
	}
	// A session's entry is a row of trace with the next number of the
	// session's range (rowbuf.go, nextLogOf); an entry of no session a
	// row of audit with the next id of no session's.
	sum := packSummary(p.Summary)
	data := sum
	if data == nil {
		data = ""
	}
	res, err := e.w.ExecContext(ctx, `INSERT INTO trace (id, run_id, kind, data, at, request_id, tool_call_id, action, reason)
		SELECT (s.k << 32) + `+nextLogOf("s.k")+` + 1, ?, `+auditKind+`, ?, ?, ?, ?, ?, ? FROM sessions s WHERE s.id = ?`,
		idRun.enc(p.RunID), data, ts(p.Now), idAsk.enc(p.RequestID), idCall.enc(p.ToolCallID), auditActions.enc(p.Action), auditReasons.enc(p.Reason), p.SessionID)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err == nil && n == 0 {
		_, err = e.w.ExecContext(ctx, `INSERT INTO audit (id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at)
			VALUES (`+nextAuditID+`, ?, ?, ?, ?, ?, ?, ?, ?)`, idSession.enc(p.SessionID), idAsk.enc(p.RequestID), idCall.enc(p.ToolCallID), idRun.enc(p.RunID),
			auditActions.enc(p.Action), auditReasons.enc(p.Reason), sum, ts(p.Now))
	}
	if err != nil {
		return fmt.Errorf("sqlite: audit insert: %w", err)
	}
	return nil
}

// AuditList implements store.Executor.
func (e executor) AuditList(ctx context.Context, sessionID string) ([]*store.AuditEntry, error) {
	// The session's range in trace and in audit (rowbuf.go, auditOf) and
	// the entries stored before it had one (audit_session).
	const cols = `SELECT id, session_id, request_id, tool_call_id, run_id, action, reason, summary, at FROM audit`
	rows, err := e.r.QueryContext(ctx, `SELECT id, ?1, request_id, tool_call_id, run_id, action, reason, data, at FROM trace
		WHERE `+traceOf(`(SELECT k FROM sessions WHERE id = ?2)`)+` AND kind = `+auditKind+`
		UNION ALL `+cols+` WHERE `+auditOf(`(SELECT k FROM sessions WHERE id = ?2)`)+` AND session_id = ?1
		UNION ALL `+cols+` WHERE session_id = ?1 AND `+auditOld+` ORDER BY id`, idSession.enc(sessionID), sessionID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: audit list: %w", err)
	}
	defer rows.Close()
	var out []*store.AuditEntry
	for rows.Next() {
		a := &store.AuditEntry{}
		var sum any
		var at int64
		if err := rows.Scan(&a.ID, idSession.into(&a.SessionID), idAsk.into(&a.RequestID), idCall.into(&a.ToolCallID), idRun.into(&a.RunID),
			auditActions.into(&a.Action), auditReasons.into(&a.Reason), &sum, &at); err != nil {
			return nil, err
		}
		if a.Summary, err = unpackSummary(sum); err != nil {
			return nil, err
		}
		a.At = tm(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// ---- events

// EventAppend implements store.Executor.
func (e executor) EventAppend(ctx context.Context, p *store.EventAppendParams) (*store.Event, error) {
	if e.buf != nil {
		ev, keys, err := e.buf.appendEvent(ctx, p)
		if err != nil {
			return nil, err
		}
		if e.buf.follows(p.SessionID) {
			e.buf.handing().event(ev, p)
		}
		if e.onEvent != nil {
			e.onEvent(p.SessionID)
			for _, k := range keys {
				e.onEvent(k)
			}
		}
		return ev, nil
	}
	// Outside InTx (message_delta events): the event and its feed entry
	// are one transaction, committed with whatever else is waiting for the
	// writer (group commit), whose members hold their log rows back
	// (rowbuf.go).
	if e.group == nil {
		return nil, fmt.Errorf("sqlite: event append: no writer")
	}
	var ev *store.Event
	err := e.group(ctx, func(tx store.Tx) error {
		var err error
		ev, err = tx.EventAppend(ctx, p)
		return err
	})
	return ev, err
}

// EventList implements store.Executor.
func (e executor) EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 1000
	}
	// A reference names an interaction (a blob: the event is its request)
	// or a message of the session (the event carries its content or a
	// call's arguments, store.SpliceMessage): its number in the session (an
	// integer, rowBuf.messageRef; migration 00024 stored another session's
	// as its whole seq), or its id as text when there was none.
	rows, err := e.r.QueryContext(ctx, `SELECT `+eventSeq+`, e.name, e.data, `+requestCols+`, m.content, m.tool_calls, e.ref, m.id, e.run_id, e.created_at
		FROM sessions s JOIN events e ON e.k > s.k * 4294967296 + ? AND e.k < (s.k + 1) * 4294967296
		LEFT JOIN interactions i ON i.id = e.ref
		LEFT JOIN messages m ON m.seq = `+eventRefSeq("e", "s.k")+` AND typeof(e.ref) = 'integer'
		WHERE s.id = ? ORDER BY e.k LIMIT ?`, max(p.AfterSeq, 0), p.SessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: event list: %w", err)
	}
	defer rows.Close()
	var out []*store.Event
	for rows.Next() {
		ev := &store.Event{SessionID: p.SessionID}
		var data, ref any
		var content, calls sql.NullString
		var msgID string
		var at int64
		var rq requestRef
		if err := rows.Scan(append(append([]any{&ev.Seq, eventNames.into(&ev.Name), &data}, rq.dest()...), &content, &calls, &ref, idMessage.into(&msgID), idRun.into(&ev.RunID), &at)...); err != nil {
			return nil, err
		}
		ev.CreatedAt = tm(at)
		if req, err := rq.request(); err != nil {
			return nil, err
		} else if req != nil {
			ev.Data = req
		} else {
			mref, ok := ref.(string)
			if !ok {
				mref = msgID
			}
			if ev.Data, err = unpackEventData(data, p.SessionID, ev.RunID, mref); err != nil {
				return nil, err
			}
		}
		if content.Valid {
			ev.Data = store.SpliceMessage(ev.Data, content.String, []byte(calls.String))
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}

// numbered is n numbered parameters from ?from, comma-separated.
func numbered(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "?%d", from+i)
	}
	return b.String()
}

// EventDelete implements store.Executor.
func (e executor) EventDelete(ctx context.Context, p *store.EventDeleteParams) (int64, error) {
	if len(p.Names) == 0 || p.FromSeq > p.ToSeq {
		return 0, nil
	}
	// A session's events are numbered 1 … 2³²−1 (eventKey).
	args := []any{p.SessionID, max(p.FromSeq, 1), min(p.ToSeq, 1<<32-1)}
	for _, n := range p.Names {
		args = append(args, eventNames.enc(n))
	}
	res, err := e.w.ExecContext(ctx, `DELETE FROM events AS e WHERE e.k BETWEEN (SELECT k * 4294967296 FROM sessions WHERE id = ?1) + ?2
		AND (SELECT k * 4294967296 FROM sessions WHERE id = ?1) + ?3 AND e.name IN (`+
		numbered(4, len(p.Names))+`)`, args...)
	if err != nil {
		return 0, fmt.Errorf("sqlite: event delete: %w", err)
	}
	return res.RowsAffected()
}

// ---- interactions

const interactionCols = `id, session_id, run_id, tool_call_id, tool, request, status, answer, created_at, expires_at, resolved_at, receipt_jws, route, decided_by`

// interactionRow is an interaction being scanned: dest are the Scan
// destinations of interactionCols, done decodes what they read.
type interactionRow struct {
	it             store.Interaction
	req            any
	ans, route, by sql.NullString
	c, x, r        int64
	// The decoding destinations, here so that none is an allocation.
	id, run, call idDest
	st            enumDest
}

func (ir *interactionRow) dest() []any {
	it := &ir.it
	ir.id, ir.run, ir.call, ir.st = idAsk.into(&it.ID), idRun.into(&it.RunID), idCall.into(&it.ToolCallID), interactionStatuses.into(&it.Status)
	return []any{&ir.id, &it.SessionID, &ir.run, &ir.call, &it.Tool, &ir.req,
		&ir.st, &ir.ans, &ir.c, &ir.x, &ir.r, &it.ReceiptJWS, &ir.route, &ir.by}
}

func (ir *interactionRow) done() (*store.Interaction, error) {
	it := &ir.it
	req, err := unpackRequest(ir.req, &reqRow{id: it.ID, toolCallID: it.ToolCallID, sessionID: it.SessionID, runID: it.RunID, tool: it.Tool, created: ir.c, expires: ir.x})
	if err != nil {
		return nil, err
	}
	it.Request, it.Answer, it.Route, it.DecidedBy = req, rawJSON(ir.ans), rawJSON(ir.route), rawJSON(ir.by)
	it.CreatedAt, it.ExpiresAt, it.ResolvedAt = tm(ir.c), tm(ir.x), tm(ir.r)
	// The interaction keeps its own copies (it lives inside ir): the
	// texts scanned may go.
	ir.req, ir.ans, ir.route, ir.by = nil, sql.NullString{}, sql.NullString{}, sql.NullString{}
	return it, nil
}

func scanInteraction(sc interface{ Scan(...any) error }) (*store.Interaction, error) {
	var ir interactionRow
	if err := sc.Scan(ir.dest()...); err != nil {
		return nil, err
	}
	return ir.done()
}

// requestCols, of an interactions table named i joined to another row,
// are what requestRef scans to read the interaction's request.
const requestCols = `i.request, i.id, i.tool_call_id, i.session_id, i.run_id, i.tool, i.created_at, i.expires_at`

// requestRef scans requestCols of an outer join: the request, or nothing
// when no interaction matched.
type requestRef struct {
	req              any
	id, call, run    string
	session, tool    sql.NullString
	created, expires sql.NullInt64
}

func (q *requestRef) dest() []any {
	return []any{&q.req, idAsk.into(&q.id), idCall.into(&q.call), &q.session, idRun.into(&q.run), &q.tool, &q.created, &q.expires}
}

// request is the joined interaction's request, nil when none matched.
func (q *requestRef) request() (json.RawMessage, error) {
	if q.req == nil {
		return nil, nil
	}
	return unpackRequest(q.req, &reqRow{id: q.id, toolCallID: q.call, sessionID: q.session.String, runID: q.run, tool: q.tool.String,
		created: q.created.Int64, expires: q.expires.Int64})
}

func (e executor) interactionOne(ctx context.Context, what, query string, args ...any) (*store.Interaction, error) {
	it, err := scanInteraction(e.r.QueryRowContext(ctx, `SELECT `+interactionCols+` FROM interactions `+query, args...))
	if err != nil {
		return nil, notFound(err, what)
	}
	return it, nil
}

// InteractionGet implements store.Executor.
func (e executor) InteractionGet(ctx context.Context, id string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "interaction "+id, `WHERE id = ?`, idAsk.enc(id))
}

// InteractionGetByToolCall implements store.Executor.
func (e executor) InteractionGetByToolCall(ctx context.Context, sessionID, toolCallID string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "interaction for tool call "+toolCallID, `WHERE session_id = ? AND tool_call_id = ?`, sessionID, idCall.enc(toolCallID))
}

// InteractionGetPending implements store.Executor.
func (e executor) InteractionGetPending(ctx context.Context, sessionID string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "pending interaction", `WHERE session_id = ? AND status = 0 ORDER BY created_at LIMIT 1`, sessionID)
}

// InteractionGetLastResolved implements store.Executor.
func (e executor) InteractionGetLastResolved(ctx context.Context, sessionID string) (*store.Interaction, error) {
	return e.interactionOne(ctx, "resolved interaction", `WHERE session_id = ? AND status <> 0 ORDER BY resolved_at DESC, created_at DESC LIMIT 1`, sessionID)
}

// InteractionInsert implements store.Executor.
func (e executor) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	if _, autocommit := e.w.(cachedDB); autocommit && e.group != nil {
		// Outside InTx: the interaction and its deadlines are one
		// transaction.
		var it *store.Interaction
		err := e.group(ctx, func(tx store.Tx) error {
			var err error
			it, err = tx.InteractionInsert(ctx, p)
			return err
		})
		return it, err
	}
	req := packRequest(p.Request, &reqRow{id: p.ID, toolCallID: p.ToolCallID, sessionID: p.SessionID, runID: p.RunID, tool: p.Tool, created: ts(p.Now), expires: ts(p.ExpiresAt)})
	_, err := e.w.ExecContext(ctx, `INSERT INTO interactions (id, session_id, run_id, tool_call_id, tool, request, status, created_at, expires_at, route, timeout_data)
		VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`, e.enc(idAsk, p.ID), p.SessionID, e.enc(idRun, p.RunID), e.enc(idCall, p.ToolCallID), p.Tool, req, ts(p.Now), ts(p.ExpiresAt), nullJSON(p.Route), timeoutData(p.TimeoutData))
	if isUnique(err) {
		return nil, fmt.Errorf("interaction for tool call %s: %w", p.ToolCallID, store.ErrDuplicate)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: interaction insert: %w", err)
	}
	if err := e.insertDeadlines(ctx, p); err != nil {
		return nil, err
	}
	if e.onEvent != nil {
		e.onEvent(store.DeadlineKey)
	}
	return &store.Interaction{ID: p.ID, SessionID: p.SessionID, RunID: p.RunID, ToolCallID: p.ToolCallID, Tool: p.Tool,
		Request: p.Request, Status: "pending", CreatedAt: p.Now, ExpiresAt: p.ExpiresAt, Route: p.Route}, nil
}

func (e executor) interactionMany(ctx context.Context, query string, args ...any) ([]*store.Interaction, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT `+interactionCols+` FROM interactions `+query, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: interaction list: %w", err)
	}
	defer rows.Close()
	var out []*store.Interaction
	for rows.Next() {
		it, err := scanInteraction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// InteractionList implements store.Executor.
func (e executor) InteractionList(ctx context.Context, sessionID string) ([]*store.Interaction, error) {
	return e.interactionMany(ctx, `WHERE session_id = ? ORDER BY created_at, id`, sessionID)
}

// InteractionListPending implements store.Executor: through
// interactions_session_pending, whose entries end with the primary key, so
// the order needs no sort.
func (e executor) InteractionListPending(ctx context.Context, sessionID string) ([]*store.Interaction, error) {
	return e.interactionMany(ctx, `WHERE session_id = ? AND status = 0 ORDER BY created_at, id`, sessionID)
}

// InteractionListExpired implements store.Executor.
func (e executor) InteractionListExpired(ctx context.Context, p *store.InteractionListExpiredParams) ([]*store.Interaction, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	// No index by expiry: nothing in luban lists them (deadlines fire
	// timeouts); the pending index is read whole.
	return e.interactionMany(ctx, `WHERE status = 0 AND expires_at <= ? ORDER BY expires_at LIMIT ?`, ts(p.Now), limit)
}

// InteractionResolve implements store.Executor.
func (e executor) InteractionResolve(ctx context.Context, p *store.InteractionResolveParams) (bool, error) {
	cmp := `expires_at > ?`
	if p.Status == "expired" {
		cmp = `expires_at <= ?`
	}
	res, err := e.w.ExecContext(ctx, `UPDATE interactions SET status = ?, answer = ?, resolved_at = ?, receipt_jws = ?, decided_by = ?
		WHERE id = ? AND session_id = ? AND status = 0 AND `+cmp,
		interactionStatuses.enc(p.Status), nullJSON(p.Answer), ts(p.Now), p.ReceiptJWS, nullJSON(p.DecidedBy), e.enc(idAsk, p.ID), p.SessionID, ts(p.Now))
	if err != nil {
		return false, fmt.Errorf("sqlite: interaction resolve: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// InteractionSign implements store.Executor.
func (e executor) InteractionSign(ctx context.Context, p *store.InteractionSignParams) error {
	if _, err := e.w.ExecContext(ctx, `UPDATE interactions SET receipt_jws = ? WHERE id = ?`, p.ReceiptJWS, idAsk.enc(p.ID)); err != nil {
		return fmt.Errorf("sqlite: interaction sign: %w", err)
	}
	return nil
}

// InteractionResolveRun implements store.Executor.
func (e executor) InteractionResolveRun(ctx context.Context, p *store.InteractionResolveRunParams) ([]*store.Interaction, error) {
	rows, err := e.w.QueryContext(ctx, `UPDATE interactions SET status = ?, answer = ?, resolved_at = ?
		WHERE session_id = ? AND run_id = ? AND status = 0 RETURNING `+interactionCols,
		interactionStatuses.enc(p.Status), nullJSON(p.Answer), ts(p.Now), p.SessionID, idRun.enc(p.RunID))
	if err != nil {
		return nil, fmt.Errorf("sqlite: interaction resolve run: %w", err)
	}
	defer rows.Close()
	var out []*store.Interaction
	for rows.Next() {
		it, err := scanInteraction(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: interaction resolve run: %w", err)
	}
	sortInteractions(out)
	return out, nil
}

// sortInteractions orders interactions by creation, as InteractionList does
// (RETURNING has no order), ids in their stored order.
func sortInteractions(its []*store.Interaction) {
	slices.SortFunc(its, func(a, b *store.Interaction) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return idAsk.idCompare(a.ID, b.ID)
	})
}

// ---- messages

// MessageInsert implements store.Executor.
func (e executor) MessageInsert(ctx context.Context, p *store.MessageInsertParams) (*store.Message, error) {
	// The message's own ids are new or rare: encoded, not through the
	// writer's memo of the ids a commit names again and again.
	// seq is the rowid: an Exec and its last insert id, not RETURNING,
	// whose rows cost database/sql a goroutine inside a transaction. The
	// session's last message is the last row of its range.
	res, err := e.w.ExecContext(ctx, `INSERT INTO messages (seq, id, sk, run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at)
		SELECT s.n, ?, s.k, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
		FROM (SELECT k, COALESCE((SELECT m.seq FROM messages m WHERE m.seq BETWEEN k << 32 AND (k << 32) + 4294967295 ORDER BY m.seq DESC LIMIT 1), k << 32) + 1 AS n
			FROM sessions WHERE id = ? AND k < 2147483648) s
		WHERE s.n <= (s.k << 32) + 4294967295`,
		idMessage.enc(p.ID), e.enc(idRun, p.RunID), p.Role, p.Content, nullJSON(p.ToolCalls), p.ToolCallID, p.Name, p.IsError, nullJSON(p.Metadata),
		idMessage.enc(p.ParentID), p.CallIndex, ts(p.Now), p.SessionID)
	if err == nil {
		var n int64
		if n, err = res.RowsAffected(); err == nil && n == 0 {
			return nil, fmt.Errorf("sqlite: message insert: session %s: none, or its key or message numbers past messagesOf's range: %w", p.SessionID, store.ErrNotFound)
		}
	}
	var seq int64
	if err == nil {
		seq, err = res.LastInsertId()
	}
	if isUnique(err) {
		return nil, fmt.Errorf("tool result for %s: %w", p.ToolCallID, store.ErrDuplicate)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: message insert: %w", err)
	}
	if e.buf != nil {
		e.buf.inserted(p.SessionID, p.ID, seq)
		if e.buf.follows(p.SessionID) {
			e.buf.handing().message(p)
		}
	}
	return &store.Message{Seq: seq, ID: p.ID, SessionID: p.SessionID, RunID: p.RunID, Role: p.Role, Content: p.Content,
		ToolCalls: p.ToolCalls, Calls: p.DecodedCalls(), ToolCallID: p.ToolCallID, Name: p.Name, IsError: p.IsError, Metadata: p.Metadata,
		ParentID: p.ParentID, CallIndex: p.CallIndex, CreatedAt: p.Now}, nil
}

// messagesOf is the condition on messages.seq that selects the messages
// of the session whose id is the SQL expression session: a message's seq
// is its session's key (sessions.k) shifted left by 32 bits plus its number
// in the session (migration 00020), so a session's messages are one range
// of the table's rowids, read in order without an index. A session key is
// below 2³¹ and a session's messages are numbered 1 … 2³²−1: MessageInsert
// refuses a message past either, never numbering it in another session's
// range.
func messagesOf(session string) string {
	return `seq BETWEEN (SELECT k << 32 FROM sessions WHERE id = ` + session + `) AND (SELECT (k << 32) + 4294967295 FROM sessions WHERE id = ` + session + `)`
}

// messageCols are a message's columns as scanMessage reads them.
const messageCols = `seq, id, (SELECT s.id FROM sessions s WHERE s.k = messages.sk), run_id, role, content, tool_calls, tool_call_id, name, is_error, metadata, parent_id, call_index, created_at`

func scanMessage(sc interface{ Scan(...any) error }) (*store.Message, error) {
	// One allocation, as in scanInteraction.
	v := &struct {
		m                 store.Message
		calls, meta       sql.NullString
		at                int64
		id, run, parentID idDest
	}{}
	m := &v.m
	v.id, v.run, v.parentID = idMessage.into(&m.ID), idRun.into(&m.RunID), idMessage.into(&m.ParentID)
	if err := sc.Scan(&m.Seq, &v.id, &m.SessionID, &v.run, &m.Role, &m.Content, &v.calls, &m.ToolCallID, &m.Name, &m.IsError, &v.meta, &v.parentID, &m.CallIndex, &v.at); err != nil {
		return nil, err
	}
	m.ToolCalls, m.Metadata, m.CreatedAt = rawJSON(v.calls), rawJSON(v.meta), tm(v.at)
	// The message keeps its own copies: the texts scanned may go.
	v.calls, v.meta = sql.NullString{}, sql.NullString{}
	m.Calls = store.DecodeCalls(m.ToolCalls)
	return m, nil
}

// MessageList implements store.Executor.
func (e executor) MessageList(ctx context.Context, sessionID string) ([]*store.Message, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT `+messageCols+` FROM messages WHERE `+messagesOf("?1")+` ORDER BY seq`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: message list: %w", err)
	}
	defer rows.Close()
	var out []*store.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// ---- runs

const runCols = `id, session_id, agent, status, steps, invalid_streak, error, lease_owner, lease_until, created_at, updated_at`

func scanRun(sc interface{ Scan(...any) error }) (*store.Run, error) {
	// One allocation, as in interactionRow.
	v := &struct {
		r        store.Run
		lu, c, u int64
		st       string
		id       idDest
		sd       enumDest
	}{}
	r := &v.r
	v.id, v.sd = idRun.into(&r.ID), runStatuses.into(&v.st)
	if err := sc.Scan(&v.id, &r.SessionID, &r.Agent, &v.sd, &r.Steps, &r.InvalidStreak, &r.Error, &r.LeaseOwner, &v.lu, &v.c, &v.u); err != nil {
		return nil, err
	}
	r.Status, r.LeaseUntil, r.CreatedAt, r.UpdatedAt = store.RunStatus(v.st), tm(v.lu), tm(v.c), tm(v.u)
	return r, nil
}

// RunGet implements store.Executor.
func (e executor) RunGet(ctx context.Context, id string) (*store.Run, error) {
	r, err := scanRun(e.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = ?`, idRun.enc(id)))
	if err != nil {
		return nil, notFound(err, "run "+id)
	}
	return r, nil
}

// RunGetActive implements store.Executor: the run the session's row names
// (sessions.active_run, the session's last run, set by the trigger
// runs_one_active), while it is open.
func (e executor) RunGetActive(ctx context.Context, sessionID string) (*store.Run, error) {
	r, err := scanRun(e.r.QueryRowContext(ctx, `SELECT `+runCols+` FROM runs WHERE id = (SELECT active_run FROM sessions WHERE id = ?) AND open = 1`, sessionID))
	if err != nil {
		return nil, notFound(err, "active run")
	}
	return r, nil
}

// RunInsert implements store.Executor; the trigger runs_one_active refuses
// a second open run in the session (store.ErrRunActive) and names the new
// one in the session's row with the session's status and updated_at
// (migration 00027).
func (e executor) RunInsert(ctx context.Context, p *store.RunInsertParams) (*store.Run, error) {
	_, err := e.w.ExecContext(ctx, `INSERT INTO runs (id, session_id, agent, status, open, lease_owner, lease_until, created_at, updated_at)
		VALUES (?, ?, ?, 1, 1, ?, ?, ?, ?)`, e.enc(idRun, p.ID), p.SessionID, p.Agent, p.LeaseOwner, ts(p.LeaseUntil), ts(p.Now), ts(p.Now))
	if isUnique(err) {
		return nil, fmt.Errorf("run insert: %w", store.ErrRunActive)
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: run insert: %w", err)
	}
	return &store.Run{ID: p.ID, SessionID: p.SessionID, Agent: p.Agent, Status: store.RunRunning,
		LeaseOwner: p.LeaseOwner, LeaseUntil: p.LeaseUntil, CreatedAt: p.Now, UpdatedAt: p.Now}, nil
}

// RunLease implements store.Executor.
func (e executor) RunLease(ctx context.Context, p *store.RunLeaseParams) (bool, error) {
	res, err := e.w.ExecContext(ctx, `UPDATE runs SET lease_owner = ?, lease_until = ?
		WHERE id = ? AND status = 1 AND (lease_owner = '' OR lease_owner = ? OR lease_until < ?)`,
		p.Owner, ts(p.Until), idRun.enc(p.ID), p.Owner, ts(p.Now))
	if err != nil {
		return false, fmt.Errorf("sqlite: run lease: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RunListRecoverable implements store.Executor: the running runs whose
// lease expired, oldest run first, found among the open runs through the
// partial index runs_open (migration 00030), which changes only when a run
// starts or ends, never at a pause or a resume; a paused run's row is read
// and left out.
func (e executor) RunListRecoverable(ctx context.Context, p *store.RunListRecoverableParams) ([]*store.Run, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = 100
	}
	rows, err := e.r.QueryContext(ctx, `SELECT `+runCols+` FROM runs WHERE open = 1 AND status = 1 AND lease_until < ? ORDER BY created_at LIMIT ?`, ts(p.Now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: run list recoverable: %w", err)
	}
	defer rows.Close()
	var out []*store.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// releaseLease is the SET clause that frees a run's lease: a run that
// pauses or ends holds none (RunPause, RunFinish).
const releaseLease = `lease_owner = '', lease_until = 0`

func affected(res sql.Result, err error, what string) (bool, error) {
	if isUnique(err) {
		return false, fmt.Errorf("%s: %w", what, store.ErrRunActive)
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func nullInt(v *int) any {
	if v == nil {
		return nil
	}
	return *v
}

// RunCheckpoint implements store.Executor.
func (e executor) RunCheckpoint(ctx context.Context, p *store.RunCheckpointParams) (bool, error) {
	res, err := e.w.ExecContext(ctx, `UPDATE runs SET updated_at = ?, steps = COALESCE(?, steps), invalid_streak = COALESCE(?, invalid_streak)
		WHERE id = ? AND status = 1 AND lease_owner = ?`, ts(p.Now), nullInt(p.Steps), nullInt(p.InvalidStreak), e.enc(idRun, p.ID), p.LeaseOwner)
	return affected(res, err, "run checkpoint")
}

// RunPause implements store.Executor; the trigger runs_session_status
// sets the session waiting_input (as it sets the session's status in
// RunResume and RunFinish).
func (e executor) RunPause(ctx context.Context, p *store.RunPauseParams) (bool, error) {
	res, err := e.w.ExecContext(ctx, `UPDATE runs SET status = 2, updated_at = ?, `+releaseLease+`,
		steps = COALESCE(?, steps), invalid_streak = COALESCE(?, invalid_streak)
		WHERE id = ? AND status = 1 AND lease_owner = ?`, ts(p.Now), nullInt(p.Steps), nullInt(p.InvalidStreak), e.enc(idRun, p.ID), p.LeaseOwner)
	return affected(res, err, "run pause")
}

// RunHold implements store.Executor.
func (e executor) RunHold(ctx context.Context, p *store.RunHoldParams) (bool, error) {
	res, err := e.w.ExecContext(ctx, `UPDATE runs SET updated_at = ? WHERE id = ? AND status = 2`, ts(p.Now), idRun.enc(p.ID))
	return affected(res, err, "run hold")
}

// RunResume implements store.Executor.
func (e executor) RunResume(ctx context.Context, p *store.RunResumeParams) (bool, error) {
	q := `UPDATE runs SET status = 1, updated_at = ?, lease_owner = ?, lease_until = ?
		WHERE id = ? AND status = 2`
	args := []any{ts(p.Now), p.LeaseOwner, ts(p.LeaseUntil), e.enc(idRun, p.ID)}
	if p.Settled {
		q += ` AND NOT EXISTS (SELECT 1 FROM interactions i WHERE i.session_id = runs.session_id AND i.run_id = runs.id
			AND i.status = 0`
		if len(p.Resolving) > 0 {
			q += ` AND i.id NOT IN (?` + strings.Repeat(`, ?`, len(p.Resolving)-1) + `)`
			for _, id := range p.Resolving {
				args = append(args, e.enc(idAsk, id))
			}
		}
		q += `)`
	}
	res, err := e.w.ExecContext(ctx, q, args...)
	// The trigger runs_session_status sets the session running.
	return affected(res, err, "run resume")
}

// RowsInsert implements store.Executor.
func (e executor) RowsInsert(ctx context.Context, p *store.RowsInsertParams) (*store.RowsInserted, error) {
	return store.InsertRows(ctx, e, p)
}

// RunFinish implements store.Executor; the trigger runs_session_status
// sets the session's status.
func (e executor) RunFinish(ctx context.Context, p *store.RunFinishParams) (bool, error) {
	if !p.To.Terminal() {
		return false, fmt.Errorf("sqlite: run finish: %q is not an end state", p.To)
	}
	from := p.From
	if len(from) == 0 {
		from = []store.RunStatus{store.RunRunning, store.RunWaitingInput}
	}
	args := []any{runStatuses.enc(string(p.To)), ts(p.Now), p.Error, e.enc(idRun, p.ID), nullInt(p.Steps), nullInt(p.InvalidStreak)}
	ph := make([]string, len(from))
	for i, f := range from {
		ph[i] = "?"
		args = append(args, runStatuses.enc(string(f)))
	}
	q := `UPDATE runs SET status = ?1, open = NULL, updated_at = ?2, error = CASE WHEN ?3 <> '' THEN ?3 ELSE error END, ` + releaseLease + `,
		steps = COALESCE(?5, steps), invalid_streak = COALESCE(?6, invalid_streak)
		WHERE id = ?4 AND status IN (` + strings.Join(ph, ", ") + `)`
	if p.LeaseOwner != "" {
		q += ` AND lease_owner = ?`
		args = append(args, p.LeaseOwner)
	}
	res, err := e.w.ExecContext(ctx, q, args...)
	return affected(res, err, "run finish")
}

// ---- sessions

// sessionCols reads last_seq as the session's last event number: the
// larger of the events' last and the column (what Prune keeps of deleted
// events; EventAppend no longer updates it), and the status as
// sessionStatus has it.
var sessionCols = `id, owner, title, ` + sessionStatus + `, MAX(last_seq, ` + lastEventSeq("sessions.k") + `), created_at, updated_at, agent`

// sessionStatus is the status of the session whose row is sessions':
// once its last run (sessions.active_run) ended, that run's status;
// waiting_input while the run waits; else the row's. A run's pause,
// resume and end leave the session's row alone (the trigger
// runs_session_status, migrations 00031 and 00034): its start writes it,
// as SessionSetStatus does.
const sessionStatus = `COALESCE((SELECT CASE WHEN r.open IS NULL THEN CASE r.status WHEN 3 THEN 'completed' WHEN 4 THEN 'cancelled'
		WHEN 5 THEN 'expired' WHEN 6 THEN 'failed' WHEN 1 THEN 'running' WHEN 2 THEN 'waiting_input' ELSE r.status END
		WHEN r.status = 2 THEN 'waiting_input' END FROM runs r WHERE r.id = sessions.active_run), sessions.status)`

// sessionKey is the key (sessions.k) of the session whose id is the
// statement's next parameter: the session's rows in messages, events,
// trace and the feed name it by its key (migration 00016).
const sessionKey = `(SELECT k FROM sessions WHERE id = ?)`

func scanSession(sc interface{ Scan(...any) error }) (*store.Session, error) {
	// One allocation, as in scanInteraction.
	v := &struct {
		s    store.Session
		c, u int64
	}{}
	s := &v.s
	if err := sc.Scan(&s.ID, &s.Owner, &s.Title, &s.Status, &s.LastSeq, &v.c, &v.u, &s.Agent); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = tm(v.c), tm(v.u)
	return s, nil
}

// SessionCreate implements store.Executor.
func (e executor) SessionCreate(ctx context.Context, p *store.SessionCreateParams) (*store.Session, error) {
	status := p.Status
	if status == "" {
		status = "idle"
	}
	res, err := e.w.ExecContext(ctx, `INSERT INTO sessions (id, owner, title, status, created_at, updated_at, agent) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		p.ID, p.Owner, p.Title, status, ts(p.Now), ts(p.Now), p.Agent)
	var k int64
	if err == nil {
		k, err = res.LastInsertId()
	}
	if err != nil {
		return nil, fmt.Errorf("sqlite: session create: %w", err)
	}
	if e.buf != nil {
		e.buf.created(p.ID, p.Owner, k)
	}
	return &store.Session{ID: p.ID, Owner: p.Owner, Title: p.Title, Status: status, Agent: p.Agent, CreatedAt: p.Now, UpdatedAt: p.Now}, nil
}

// SessionGet implements store.Executor.
func (e executor) SessionGet(ctx context.Context, id string) (*store.Session, error) {
	s, err := scanSession(e.r.QueryRowContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE id = ?`, id))
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
	rows, err := e.r.QueryContext(ctx, `SELECT `+sessionCols+` FROM sessions WHERE owner = ? ORDER BY updated_at DESC, id LIMIT ?`, p.Owner, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: session list: %w", err)
	}
	defer rows.Close()
	var out []*store.Session
	for rows.Next() {
		s, err := scanSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SessionSetStatus implements store.Executor.
func (e executor) SessionSetStatus(ctx context.Context, p *store.SessionSetStatusParams) error {
	// A session whose last run ended reads its status from the run
	// (sessionStatus): the row's status is read again once it names none.
	if _, err := e.w.ExecContext(ctx, `UPDATE sessions SET status = ?, updated_at = ?,
		active_run = CASE WHEN (SELECT r.open FROM runs r WHERE r.id = active_run) = 1 THEN active_run END WHERE id = ?`, p.Status, ts(p.Now), p.ID); err != nil {
		return fmt.Errorf("sqlite: session set status: %w", err)
	}
	return nil
}

// ---- trace

// A trace entry's rowid is its session's key (sessions.k) in the high 32
// bits and its number in the session (TraceEntry.ID, from 1) in the low
// 32: a session's entries are one rowid range (traceOf).
const traceMax = 1<<32 - 1

// traceID is the rowid of session key sk's entry number n.
func traceID(sk, n int64) int64 { return sk<<32 | n }

// traceOf is the condition, on trace, that selects the entries of the
// session whose key the SQL expression k gives.
func traceOf(k string) string {
	return `id BETWEEN ` + k + ` << 32 AND (` + k + ` << 32) + 4294967295`
}

// TraceInsert implements store.Executor.
func (e executor) TraceInsert(ctx context.Context, p *store.TraceInsertParams) error {
	if e.buf != nil {
		return e.buf.appendTrace(ctx, p)
	}
	res, err := e.w.ExecContext(ctx, `INSERT INTO trace (id, run_id, kind, data, at)
		SELECT (s.k << 32) + `+nextLogOf("s.k")+` + 1, ?, ?, ?, ? FROM sessions s WHERE s.id = ?`,
		idRun.enc(p.RunID), traceKinds.enc(p.Kind), packTrace(p.Data), ts(p.Now), p.SessionID)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil {
		return fmt.Errorf("sqlite: trace insert: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("sqlite: trace insert: session %s: %w", p.SessionID, store.ErrNotFound)
	}
	return nil
}

// TraceList implements store.Executor.
func (e executor) TraceList(ctx context.Context, sessionID string) ([]*store.TraceEntry, error) {
	rows, err := e.r.QueryContext(ctx, `SELECT id & 4294967295, ?1, run_id, kind, data, at FROM trace WHERE `+traceOf(`(SELECT k FROM sessions WHERE id = ?1)`)+`
		AND kind IS NOT `+auditKind+` ORDER BY id`, sessionID)
	if err != nil {
		return nil, fmt.Errorf("sqlite: trace list: %w", err)
	}
	defer rows.Close()
	var out []*store.TraceEntry
	for rows.Next() {
		t := &store.TraceEntry{}
		var data any
		var at int64
		if err := rows.Scan(&t.ID, &t.SessionID, idRun.into(&t.RunID), traceKinds.into(&t.Kind), &data, &at); err != nil {
			return nil, err
		}
		if t.Data, err = unpackTrace(data); err != nil {
			return nil, err
		}
		t.At = tm(at)
		out = append(out, t)
	}
	return out, rows.Err()
}
