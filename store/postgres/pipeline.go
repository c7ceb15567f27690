package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lubanhq/luban/store"
)

// pipeTx is the querier of a transaction that saves round trips. BEGIN is
// not sent on its own: it rides with the transaction's first statement. A
// write whose caller reads nothing back (an audit or trace row, a session's
// status: execLater; an event whose sequence number the transaction already
// knows: EventAppend) is queued, and the queue goes to the server in one
// batch with the next statement that needs an answer (Exec, QueryRow and
// Query ride in that batch), or with the transaction's NOTIFY and COMMIT.
// Statements still run in the order they were made; an error of a queued
// write is returned by the statement it rode with (or by InTx), and fails
// the transaction like any other. A batch is one round trip: pgx sends it as
// one pipeline with one Sync, and the server runs BEGIN and COMMIT in it as
// it runs them alone.
type pipeTx struct {
	conn  *pgxpool.Conn
	begun bool // BEGIN was sent: the transaction must end with COMMIT or ROLLBACK
	queue []queued
	// last holds writes that go after every other statement of the
	// transaction, with its NOTIFY: those that take a row lock many
	// transactions share (the owner's feed sequence), so the lock is held
	// for the last round trip and the commit only.
	last []queued
	// sess is what the transaction knows of the sessions whose row it holds
	// locked (or created): their last event sequence number and owner, so
	// that their next events are queued with the number they will get.
	sess map[string]*txSession
	// events are the queued events, by session in the order of each
	// session's first: one multi-row statement per session, sent at the
	// end of the next batch (nothing in a batch reads events before its
	// last statement, and the events table has no foreign keys).
	events []*eventRows
	// traces are the queued trace rows: one statement, sent at the end of
	// the next batch like events (no foreign keys; a read of them in the
	// transaction comes after).
	traces traceRows
	tbuf   traceBuf
	// known is the store's runSessions; runs, the runs whose session this
	// transaction learned (inserted the run, or wrote it), given to known
	// once it commits.
	known *runSessions
	runs  map[string]string
	// running are the sessions a new run set running (RunInsert) while
	// the transaction did not hold their row, with the time: the status
	// rides the session's next events statement (flushEvents) or, with
	// none, is a write at the end (commit); a later status of the session
	// (queueStatus) replaces it.
	running map[string]time.Time
}

// runSessions remembers the session and its owner of runs this store
// inserted or wrote in a committed transaction (neither ever changes), so
// that a MustWin run write (runWrite) need not wait for them. It forgets
// everything once it holds maxRunSessions runs: a run it does not know
// costs a round trip, nothing else.
type runSessions struct {
	mu sync.Mutex
	m  map[string]runSession
}

type runSession struct{ session, owner string }

const maxRunSessions = 4096

func (c *runSessions) get(run string) (runSession, bool) {
	if c == nil {
		return runSession{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rs, ok := c.m[run]
	return rs, ok
}

// learn records that run belongs to session (its owner is taken from what
// the transaction holds of the session when it commits: committed).
func (p *pipeTx) learn(run, session string) {
	if p.runs == nil {
		p.runs = map[string]string{}
	}
	p.runs[run] = session
}

// committed gives known the runs the transaction learned whose session's
// owner it knows.
func (p *pipeTx) committed() {
	if p.known == nil || len(p.runs) == 0 {
		return
	}
	c := p.known
	c.mu.Lock()
	defer c.mu.Unlock()
	for run, session := range p.runs {
		s := p.sess[session]
		if s == nil || s.owner == "" {
			continue
		}
		if c.m == nil || len(c.m) >= maxRunSessions {
			c.m = map[string]runSession{}
		}
		c.m[run] = runSession{session: session, owner: s.owner}
	}
}

// traceRows are trace rows queued in a transaction, column by column.
type traceRows struct {
	sessions, runIDs, kinds, datas []string
	ats                            []time.Time
}

// rowsInline is how many rows of a kind a transaction queues without
// allocating their columns (traceBuf, eventRows.buf): a cycle's
// transactions queue at most 4 events of a session and 3 trace rows
// between two round trips.
const rowsInline = 4

// traceBuf is the columns' first backing arrays of a transaction's trace
// rows: used once, by the first rows queued (a later batch's rows get
// their own, as the first batch's arguments may still refer to these).
type traceBuf struct {
	used                           bool
	sessions, runIDs, kinds, datas [rowsInline]string
	ats                            [rowsInline]time.Time
}

// insertTracesSQL inserts the trace rows of arrays $1.. in their order.
const insertTracesSQL = `INSERT INTO trace (session_id, run_id, kind, data, at)
	SELECT u.session_id, u.run_id, u.kind, u.data, u.at
	FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[]) WITH ORDINALITY AS u(session_id, run_id, kind, data, at, n)
	ORDER BY u.n`

// queueTrace queues a trace row.
func (p *pipeTx) queueTrace(session, runID, kind, data string, at time.Time) {
	t := &p.traces
	if b := &p.tbuf; !b.used {
		b.used = true
		t.sessions, t.runIDs, t.kinds, t.datas, t.ats = b.sessions[:0], b.runIDs[:0], b.kinds[:0], b.datas[:0], b.ats[:0]
	}
	t.sessions, t.runIDs, t.kinds, t.datas = append(t.sessions, session), append(t.runIDs, runID), append(t.kinds, kind), append(t.datas, data)
	t.ats = append(t.ats, at)
}

// pending reports whether rows wait to be sent.
func (p *pipeTx) pending() bool {
	return len(p.queue) > 0 || len(p.events) > 0 || len(p.traces.kinds) > 0
}

// eventRows are events of one session queued in a transaction that holds
// its row.
type eventRows struct {
	session                    string
	names, datas, refs, runIDs []string
	ats                        []time.Time
	// evs are the events as appendEvent returned them; while the
	// session's numbers are not known (txSession.deferred) their Seq is
	// set when the statement comes back.
	evs []*store.Event
	// status, when not empty, is the session's new status, written with
	// updated_at = statusAt (unless statusAt is zero: a pause or a resume
	// leaves updated_at) by the events' own UPDATE of the session row
	// (queueStatus).
	status   string
	statusAt time.Time
	// buf is the columns' first backing arrays (rowsInline events).
	buf struct {
		names, datas, refs, runIDs [rowsInline]string
		ats                        [rowsInline]time.Time
		evs                        [rowsInline]*store.Event
	}
}

// appendEventsSQL appends the events of arrays $3.. to session $1, which
// has $2 of them, numbered after its last_seq, sets its status to $8 and
// updated_at to $9 (when not NULL) unless $8 is empty, and returns each
// number.
const appendEventsSQL = `WITH s AS (UPDATE sessions SET last_seq = last_seq + $2,
		status = CASE WHEN $8 = '' THEN status ELSE $8 END, updated_at = CASE WHEN $8 = '' THEN updated_at ELSE COALESCE($9::timestamptz, updated_at) END
		WHERE id = $1 RETURNING last_seq)
	INSERT INTO events (session_id, seq, name, data, ref, run_id, created_at)
	SELECT $1, s.last_seq - $2 + u.n, u.name, u.data, NULLIF(u.ref, ''), NULLIF(u.run_id, ''), u.at
	FROM s, unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) WITH ORDINALITY AS u(name, data, ref, run_id, at, n)
	RETURNING seq`

// group is the queued events of a session the transaction holds, made
// when there are none yet.
func (p *pipeTx) group(session string) *eventRows {
	for _, e := range p.events {
		if e.session == session {
			return e
		}
	}
	g := &eventRows{session: session}
	g.names, g.datas, g.refs, g.runIDs = g.buf.names[:0], g.buf.datas[:0], g.buf.refs[:0], g.buf.runIDs[:0]
	g.ats, g.evs = g.buf.ats[:0], g.buf.evs[:0]
	p.events = append(p.events, g)
	return g
}

// queueEvent queues ev, an event of a session the transaction holds: its
// Seq is the session's next number, or set when the statement comes back
// while the session's numbers are not known (txSession.deferred).
func (p *pipeTx) queueEvent(ev *store.Event, data, ref string) {
	held := p.sess[ev.SessionID]
	g := p.group(ev.SessionID)
	held.n++
	if !held.deferred {
		held.seq++
		ev.Seq = held.seq
	}
	g.names, g.datas, g.refs, g.runIDs = append(g.names, ev.Name), append(g.datas, data), append(g.refs, ref), append(g.runIDs, ev.RunID)
	g.ats = append(g.ats, ev.CreatedAt.UTC())
	g.evs = append(g.evs, ev)
}

// queueStatus sets the status of a session the transaction holds (and so
// updates its row with its events anyway) in the statement of its queued
// events: no statement of its own. A zero at leaves the session's
// updated_at as it is (or as a status queued before in the transaction
// set it). It reports false, having done nothing, when p is nil or does
// not hold the session.
func (p *pipeTx) queueStatus(session, status string, at time.Time) bool {
	if p != nil {
		delete(p.running, session)
	}
	held := p.held(session)
	if held == nil {
		return false
	}
	g := p.group(session)
	if at.IsZero() && g.status != "" {
		at = g.statusAt
	}
	g.status, g.statusAt = status, at
	return true
}

// startedAt is the time of the run that RunInsert started in session in
// this transaction (pipeTx.running), zero when none did or p is nil: a
// pause or a resume in the same transaction keeps it as the session's
// updated_at.
func (p *pipeTx) startedAt(session string) time.Time {
	if p == nil {
		return time.Time{}
	}
	return p.running[session]
}

// flushEvents moves the queued trace rows (one statement) and events to
// the end of the queue, one statement per session whose answer is
// checked: every number as expected.
func (p *pipeTx) flushEvents() {
	for _, g := range p.events {
		if at, ok := p.running[g.session]; ok {
			delete(p.running, g.session)
			if g.status == "" {
				g.status, g.statusAt = "running", at
			}
		}
	}
	if t := p.traces; len(t.kinds) > 0 {
		p.queue = append(p.queue, queued{sql: insertTracesSQL, args: encodeArgs([]any{textArray(t.sessions), textArray(t.runIDs), textArray(t.kinds), textArray(t.datas), t.ats})})
		p.traces = traceRows{}
	}
	for _, g := range p.events {
		n := int64(len(g.names))
		held := p.sess[g.session]
		deferred := held.deferred
		p.queue = append(p.queue, queued{sql: appendEventsSQL,
			args: encodeArgs([]any{g.session, n, textArray(g.names), textArray(g.datas), textArray(g.refs), textArray(g.runIDs), g.ats, g.status, pgtype.Timestamptz{Time: g.statusAt.UTC(), Valid: !g.statusAt.IsZero()}}),
			read: func(br pgx.BatchResults) error {
				rows, err := br.Query()
				if err != nil {
					return fmt.Errorf("postgres: event append: %w", err)
				}
				defer rows.Close()
				i := 0
				for rows.Next() {
					var got int64
					if err := rows.Scan(&got); err != nil {
						return fmt.Errorf("postgres: event append: %w", err)
					}
					if i == len(g.evs) {
						return fmt.Errorf("postgres: event append: session %s: more events than %d", g.session, n)
					}
					if want := g.evs[i].Seq; !deferred && got != want {
						return fmt.Errorf("postgres: event append: session %s numbered an event %d, not %d", g.session, got, want)
					}
					g.evs[i].Seq = got
					i++
				}
				if err := rows.Err(); err != nil {
					return fmt.Errorf("postgres: event append: %w", err)
				}
				if i != len(g.evs) {
					return fmt.Errorf("postgres: event append: session %s: %d events of %d written", g.session, i, n)
				}
				if deferred && i > 0 {
					// The numbers are known from here on.
					held.seq, held.deferred = g.evs[i-1].Seq, false
				}
				return nil
			}})
	}
	p.events = nil
}

// txSession is a session row the transaction holds: seq is its last_seq
// as this transaction will have left it once the queue has run.
type txSession struct {
	seq   int64
	owner string
	// deferred: the row is locked by a statement still queued (a MustWin
	// run write), so seq is not known until the session's queued events
	// come back; they are numbered by the server meanwhile.
	deferred bool
	// n counts the events the transaction appended to the session (the
	// feed's entries find their event's number from it: feedSQL).
	n int
	// created: the transaction inserted the row, so no other transaction
	// sees the session yet; runs counts the runs it inserted for it.
	created bool
	runs    int
}

type queued struct {
	sql  string
	args []any
	// read takes the statement's result from the batch; nil: Exec, the
	// command tag discarded.
	read func(pgx.BatchResults) error
	// fix, when set, completes args just before the statement is sent.
	fix func(args []any)
}

func newPipeTx(conn *pgxpool.Conn) *pipeTx {
	return &pipeTx{conn: conn, sess: map[string]*txSession{}}
}

// held is what the transaction knows of session id's row (nil: nothing,
// or p is nil: not in a transaction).
func (p *pipeTx) held(id string) *txSession {
	if p == nil {
		return nil
	}
	return p.sess[id]
}

// hold records that the transaction holds session id's row, whose last
// event number is seq once the queue has run (a no-op when p is nil or
// the row is held already: what the transaction knows is newer).
func (p *pipeTx) hold(id string, seq int64, owner string) {
	if p == nil || p.sess[id] != nil {
		return
	}
	p.sess[id] = &txSession{seq: seq, owner: owner}
}

// atEnd queues a write whose result nobody reads to run after every other
// statement of the transaction (see last); fix, when not nil, completes
// its arguments when it is sent.
func (p *pipeTx) atEnd(fix func([]any), sql string, args ...any) {
	p.last = append(p.last, queued{sql: sql, args: encodeArgs(args), fix: fix})
}

// later queues a write whose result nobody reads.
func (p *pipeTx) later(sql string, args ...any) {
	p.queue = append(p.queue, queued{sql: sql, args: encodeArgs(args)})
}

// laterRead queues a write whose result read checks when the batch it rides
// in comes back (an error fails the transaction).
func (p *pipeTx) laterRead(read func(pgx.BatchResults) error, sql string, args ...any) {
	p.queue = append(p.queue, queued{sql: sql, args: encodeArgs(args), read: read})
}

// direct reports whether a statement can go alone: the transaction has
// begun and nothing waits in the queue.
func (p *pipeTx) direct() bool { return p.begun && !p.pending() }

// send sends BEGIN (once, unless implicit), the queue and tail in one
// batch, reads the results of all but tail and returns the batch
// positioned at tail's results. On an error the batch is closed.
// implicit: the batch is the whole transaction, sent without BEGIN and
// COMMIT (commit).
func (p *pipeTx) send(ctx context.Context, implicit bool, tail ...queued) (pgx.BatchResults, error) {
	p.flushEvents()
	b := &pgx.Batch{}
	lead := 0
	if !p.begun && !implicit {
		b.Queue("BEGIN")
		lead = 1
	}
	queue := p.queue
	p.queue = nil
	for _, q := range queue {
		if q.fix != nil {
			q.fix(q.args)
		}
		b.Queue(q.sql, q.args...)
	}
	for _, q := range tail {
		b.Queue(q.sql, q.args...)
	}
	p.begun = !implicit
	br := p.conn.SendBatch(ctx, b)
	if lead == 1 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, fmt.Errorf("begin: %w", err)
		}
	}
	for _, q := range queue {
		var err error
		if q.read != nil {
			err = q.read(br)
		} else {
			_, err = br.Exec()
		}
		if err != nil {
			br.Close()
			return nil, fmt.Errorf("a queued write: %w", err)
		}
	}
	return br, nil
}

// sendQueued sends the queue (and BEGIN, if not sent yet) on its own and
// reads its results.
func (p *pipeTx) sendQueued(ctx context.Context) error {
	if p.direct() {
		return nil
	}
	br, err := p.send(ctx, false)
	if err != nil {
		return err
	}
	return br.Close()
}

// commit sends what is queued, the atEnd writes, notify (when not empty)
// and COMMIT in one batch. When the transaction sent nothing at all, there
// is nothing to commit.
//
// A transaction that has sent nothing before is that one batch, sent
// without BEGIN and COMMIT: the server runs a pipeline up to its Sync as
// one implicit transaction, which the Sync commits (an error skips what
// follows it and rolls back, as in an explicit one), so the batch is two
// statements shorter and the same one round trip and one commit.
func (p *pipeTx) commit(ctx context.Context, notify []queued) error {
	// The events first: a feed entry (last) reads its event's number.
	p.flushEvents()
	for session, at := range p.running {
		p.later(`UPDATE sessions SET status = 'running', updated_at = $1 WHERE id = $2`, at, session)
	}
	clear(p.running)
	p.queue, p.last = append(p.queue, p.last...), nil
	if !p.begun && !p.pending() && len(notify) == 0 {
		return nil
	}
	if !p.begun {
		br, err := p.send(ctx, true, notify...)
		if err != nil {
			return err
		}
		if err := readNotifies(br, len(notify)); err != nil {
			return err
		}
		if err := br.Close(); err != nil {
			return fmt.Errorf("commit: %w", err)
		}
		if st := p.conn.Conn().PgConn().TxStatus(); st != 'I' {
			return fmt.Errorf("commit: the connection is in transaction status %q after the Sync", st)
		}
		return nil
	}
	br, err := p.send(ctx, false, append(notify, queued{sql: "COMMIT"})...)
	if err != nil {
		return err
	}
	if err := readNotifies(br, len(notify)); err != nil {
		return err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() != "COMMIT" {
		// COMMIT of a failed transaction reports ROLLBACK.
		return errors.New("commit: the transaction was rolled back")
	}
	p.begun = false
	return nil
}

// rollback ends a transaction that sent BEGIN; it is a no-op otherwise
// and after a COMMIT (an error of the COMMIT itself ended it).
func (p *pipeTx) rollback(ctx context.Context) error {
	if !p.begun || p.conn.Conn().PgConn().TxStatus() == 'I' {
		return nil
	}
	_, err := p.conn.Exec(ctx, "ROLLBACK")
	return err
}

func (p *pipeTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	args = encodeArgs(args)
	if p.direct() {
		return p.conn.Exec(ctx, sql, args...)
	}
	br, err := p.send(ctx, false, queued{sql: sql, args: args})
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (p *pipeTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	args = encodeArgs(args)
	if p.direct() {
		rows, err := p.conn.Query(ctx, sql, args...)
		if rows == nil {
			return nil, err
		}
		return textRows{rows}, err
	}
	br, err := p.send(ctx, false, queued{sql: sql, args: args})
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return textRows{batchRows{Rows: rows, br: br}}, nil
}

func (p *pipeTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	args = encodeArgs(args)
	if p.direct() {
		return textRow{p.conn.QueryRow(ctx, sql, args...)}
	}
	br, err := p.send(ctx, false, queued{sql: sql, args: args})
	if err != nil {
		return errRow{err}
	}
	return textRow{batchRow{br}}
}

// batchRow is the row of the last statement of a batch; Scan closes the
// batch.
type batchRow struct{ br pgx.BatchResults }

func (r batchRow) Scan(dest ...any) error {
	err := r.br.QueryRow().Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

// batchRows are the rows of the last statement of a batch; Close closes
// the batch.
type batchRows struct {
	pgx.Rows
	br pgx.BatchResults
}

func (r batchRows) Close() {
	r.Rows.Close()
	r.br.Close()
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

// execLater runs a write whose result the caller does not read: queued in
// a transaction (pipeTx), at once otherwise.
func (e executor) execLater(ctx context.Context, sql string, args ...any) error {
	if p, ok := e.q.(*pipeTx); ok {
		p.later(sql, args...)
		return nil
	}
	_, err := e.q.Exec(ctx, sql, args...)
	return err
}

// readNotifies reads the results of the n NOTIFY statements a commit's
// batch sends first; on an error it closes br and returns the error.
func readNotifies(br pgx.BatchResults, n int) error {
	for range n {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("notify: %w", err)
		}
	}
	return nil
}
