package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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
}

// txSession is a session row the transaction holds: seq is its last_seq
// as this transaction will have left it once the queue has run.
type txSession struct {
	seq   int64
	owner string
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
// statement of the transaction (see last).
func (p *pipeTx) atEnd(sql string, args ...any) {
	p.last = append(p.last, queued{sql: sql, args: encodeArgs(args)})
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
func (p *pipeTx) direct() bool { return p.begun && len(p.queue) == 0 }

// send sends BEGIN (once), the queue and tail in one batch, reads the
// results of all but tail and returns the batch positioned at tail's
// results. On an error the batch is closed.
func (p *pipeTx) send(ctx context.Context, tail ...queued) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	lead := 0
	if !p.begun {
		b.Queue("BEGIN")
		lead = 1
	}
	queue := p.queue
	p.queue = nil
	for _, q := range queue {
		b.Queue(q.sql, q.args...)
	}
	for _, q := range tail {
		b.Queue(q.sql, q.args...)
	}
	p.begun = true
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
	if p.begun && len(p.queue) == 0 {
		return nil
	}
	br, err := p.send(ctx)
	if err != nil {
		return err
	}
	return br.Close()
}

// commit sends what is queued, the atEnd writes, notify (when not empty)
// and COMMIT in one batch. When the transaction sent nothing at all, there
// is nothing to commit.
func (p *pipeTx) commit(ctx context.Context, notify []queued) error {
	p.queue, p.last = append(p.queue, p.last...), nil
	if !p.begun && len(p.queue) == 0 && len(notify) == 0 {
		return nil
	}
	br, err := p.send(ctx, append(notify, queued{sql: "COMMIT"})...)
	if err != nil {
		return err
	}
	for range notify {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("notify: %w", err)
		}
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
	br, err := p.send(ctx, queued{sql: sql, args: args})
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
	br, err := p.send(ctx, queued{sql: sql, args: args})
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
	br, err := p.send(ctx, queued{sql: sql, args: args})
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
