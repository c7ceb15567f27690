package sqlite

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// stmtCache keeps one prepared statement per query text. Preparing (parsing
// and planning) a statement costs more than running most of luban's queries,
// and database/sql prepares anew on every call that is not a *sql.Stmt.
type stmtCache struct {
	db *sql.DB
	mu sync.RWMutex
	m  map[string]*sql.Stmt
	// n counts the statements run through this cache's pool, commits the
	// transactions committed on it (Store.Counts); an autocommit statement
	// on the writer is a commit of its own.
	n, commits atomic.Int64
	writer     bool
	// byQuery counts the statements run through the cache per query text
	// (Store.ReadsByQuery, Store.WritesByQuery); entries are created on a statement's
	// first use and never removed.
	byQuery sync.Map // string → *atomic.Int64
}

func newStmtCache(db *sql.DB) *stmtCache { return &stmtCache{db: db, m: map[string]*sql.Stmt{}} }

func (c *stmtCache) get(ctx context.Context, q string) (*sql.Stmt, error) {
	c.mu.RLock()
	st := c.m[q]
	c.mu.RUnlock()
	if st != nil {
		return st, nil
	}
	// Prepare without holding mu: preparing waits for a connection, and a
	// transaction holding the writer's only connection may need mu to peek.
	st, err := c.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[q]; old != nil {
		st.Close()
		return old, nil
	}
	if c.m == nil { // closed
		return st, nil
	}
	c.m[q] = st
	return st, nil
}

// count counts one statement outside a transaction, running q.
func (c *stmtCache) count(q string) {
	if c.writer {
		c.commits.Add(1)
	}
	c.countStmt(q)
}

// countStmt counts one statement running q.
func (c *stmtCache) countStmt(q string) {
	c.n.Add(1)
	n, ok := c.byQuery.Load(q)
	if !ok {
		n, _ = c.byQuery.LoadOrStore(q, new(atomic.Int64))
	}
	n.(*atomic.Int64).Add(1)
}

// counts is byQuery as a map.
func (c *stmtCache) counts() map[string]int64 {
	out := map[string]int64{}
	c.byQuery.Range(func(q, n any) bool {
		out[q.(string)] = n.(*atomic.Int64).Load()
		return true
	})
	return out
}

// peek returns the cached statement for q, or nil.
func (c *stmtCache) peek(q string) *sql.Stmt {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[q]
}

// warm prepares queries that missed the cache inside a transaction; it must
// run outside any transaction (the writer pool has one connection).
func (c *stmtCache) warm(ctx context.Context, qs []string) {
	for _, q := range qs {
		_, _ = c.get(ctx, q)
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.m {
		st.Close()
	}
	c.m = nil
}

// cachedDB runs queries on a pool through the statement cache.
type cachedDB struct {
	*sql.DB
	c *stmtCache
}

// stmtContext is the context a statement runs with: ctx without its
// cancellation, after checking that ctx is not done yet. A statement whose
// context can be cancelled costs two goroutines (database/sql watches it for
// the rows, modernc.org/sqlite to interrupt the connection) and a progress
// handler, more than most of luban's statements cost themselves; luban's
// statements are short (point reads, bounded lists, single-row writes), so
// a cancelled caller fails at its next statement instead of inside one.
func stmtContext(ctx context.Context) (context.Context, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if ctx.Done() == nil {
		return ctx, nil
	}
	return context.WithoutCancel(ctx), nil
}

func (d cachedDB) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	d.c.count(q)
	ctx, err := stmtContext(ctx)
	if err != nil {
		return nil, err
	}
	st, err := d.c.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

func (d cachedDB) QueryContext(ctx context.Context, q string, args ...any) (rowsReader, error) {
	d.c.count(q)
	ctx, err := stmtContext(ctx)
	if err != nil {
		return nil, err
	}
	st, err := d.c.get(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (d cachedDB) QueryRowContext(ctx context.Context, q string, args ...any) rowScanner {
	d.c.count(q)
	if sctx, err := stmtContext(ctx); err == nil {
		ctx = sctx
	} // else database/sql reports ctx's error through the Row
	st, err := d.c.get(ctx, q)
	if err != nil {
		// Let database/sql report the prepare error through the Row.
		return d.DB.QueryRowContext(ctx, q, args...)
	}
	return st.QueryRowContext(ctx, args...)
}

// cachedTx runs queries inside a transaction through the writer's statement
// cache: the writer pool has one connection, so a cached statement is
// already prepared on the transaction's connection and is reused as is. A
// query not cached yet runs unprepared and is noted in miss; the store
// prepares it after the transaction (preparing on the pool here would wait
// for the very connection the transaction holds).
type cachedTx struct {
	*sql.Tx
	c    *stmtCache
	miss *[]string
}

// ctx is stmtContext for a statement of the transaction. Besides its cost,
// a cancelled statement would interrupt SQLite, which in a shared
// transaction (group commit) rolls back every member's writes; a member
// whose context is done fails at its next statement, alone.
func (t cachedTx) ctx(ctx context.Context) (context.Context, bool) {
	sctx, err := stmtContext(ctx)
	if err != nil {
		return ctx, false
	}
	return sctx, true
}

func (t cachedTx) stmt(ctx context.Context, q string) *sql.Stmt {
	t.c.countStmt(q)
	st := t.c.peek(q)
	if st == nil {
		if t.miss != nil {
			*t.miss = append(*t.miss, q)
		}
		return nil
	}
	return t.Tx.StmtContext(ctx, st)
}

func (t cachedTx) ExecContext(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx, ok := t.ctx(ctx)
	if !ok {
		return nil, ctx.Err()
	}
	if st := t.stmt(ctx, q); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, q, args...)
}

func (t cachedTx) QueryContext(ctx context.Context, q string, args ...any) (rowsReader, error) {
	ctx, ok := t.ctx(ctx)
	if !ok {
		return nil, ctx.Err()
	}
	if st := t.stmt(ctx, q); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, q, args...)
}

func (t cachedTx) QueryRowContext(ctx context.Context, q string, args ...any) rowScanner {
	ctx, ok := t.ctx(ctx)
	if !ok { // database/sql reports ctx's error through the Row
		return t.Tx.QueryRowContext(ctx, q, args...)
	}
	if st := t.stmt(ctx, q); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, q, args...)
}

// beginCached begins a write transaction on the store's writer whose
// statements go through the writer's statement cache (cachedTx); warm, to
// be called after the transaction ends, prepares the statements it missed.
func (s *Store) beginCached(ctx context.Context) (cachedTx, func(), error) {
	tx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		return cachedTx{}, func() {}, err
	}
	misses := new([]string)
	return cachedTx{tx, s.wc, misses}, func() { s.wc.warm(context.WithoutCancel(ctx), *misses) }, nil
}
