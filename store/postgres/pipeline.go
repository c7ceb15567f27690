package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pipeTx is the querier of a transaction that saves round trips: a write
// whose caller reads nothing back (an audit or trace row, a session's
// status: execLater) is queued, and the queue goes to the server in one
// batch with the next statement that needs an answer (Exec and QueryRow
// ride in that batch; Query sends the queue first), or with the
// transaction's NOTIFY before COMMIT. Statements still run in the order they
// were made; an error of a queued write is returned by the statement it rode
// with (or by InTx), and fails the transaction like any other.
type pipeTx struct {
	tx    pgx.Tx
	queue *pgx.Batch
	// last holds writes that go after every other statement of the
	// transaction, with its NOTIFY: those that take a row lock many
	// transactions share (the owner's feed sequence), so the lock is held
	// for the last round trip and the commit only.
	last []queued
}

type queued struct {
	sql  string
	args []any
}

func newPipeTx(tx pgx.Tx) *pipeTx { return &pipeTx{tx: tx, queue: &pgx.Batch{}} }

// atEnd queues a write whose result nobody reads to run after every other
// statement of the transaction (see last).
func (p *pipeTx) atEnd(sql string, args ...any) {
	p.last = append(p.last, queued{sql, encodeArgs(args)})
}

// flushEnd moves the atEnd writes to the end of the queue; InTx calls it
// once fn has returned, before the NOTIFY and COMMIT.
func (p *pipeTx) flushEnd() {
	for _, q := range p.last {
		p.queue.Queue(q.sql, q.args...)
	}
	p.last = nil
}

// later queues a write whose result nobody reads.
func (p *pipeTx) later(sql string, args ...any) {
	p.queue.Queue(sql, encodeArgs(args)...)
}

// take returns the queued writes and starts a new queue.
func (p *pipeTx) take() *pgx.Batch {
	b := p.queue
	p.queue = &pgx.Batch{}
	return b
}

// sendQueued sends the queue and its results (errors of queued writes)
// before a statement that cannot ride in the batch.
func (p *pipeTx) sendQueued(ctx context.Context) error {
	if p.queue.Len() == 0 {
		return nil
	}
	b := p.take()
	return p.tx.SendBatch(ctx, b).Close()
}

// withQueued sends the queue with sql appended, reads the queued writes'
// results and returns the batch positioned at sql's result.
func (p *pipeTx) withQueued(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := p.take()
	n := b.Len()
	b.Queue(sql, args...)
	br := p.tx.SendBatch(ctx, b)
	for range n {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, fmt.Errorf("a queued write: %w", err)
		}
	}
	return br, nil
}

func (p *pipeTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	args = encodeArgs(args)
	if p.queue.Len() == 0 {
		return p.tx.Exec(ctx, sql, args...)
	}
	br, err := p.withQueued(ctx, sql, args)
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
	if err := p.sendQueued(ctx); err != nil {
		return nil, err
	}
	rows, err := p.tx.Query(ctx, sql, encodeArgs(args)...)
	if rows == nil {
		return nil, err
	}
	return textRows{rows}, err
}

func (p *pipeTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	args = encodeArgs(args)
	if p.queue.Len() == 0 {
		return textRow{p.tx.QueryRow(ctx, sql, args...)}
	}
	br, err := p.withQueued(ctx, sql, args)
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
