// Package postgres is luban's store driver for several replicas: PostgreSQL
// through pgx (docs/design.md §1). Every state change is one conditional
// write, so replicas need no coordination service of their own:
//
//   - one-time consumption of an answer, leases and run transitions are
//     conditional UPDATEs; under READ COMMITTED a second writer waits for the
//     first one's row lock and then re-checks its WHERE clause, so it loses;
//   - the event sequence of a session comes from
//     UPDATE sessions SET last_seq = last_seq + 1 … RETURNING, whose row lock
//     orders concurrent appends;
//   - a transaction that appended events sends NOTIFY <channel>, '<session id>'
//     before it commits (PostgreSQL delivers it only on commit); every replica
//     holds one LISTEN connection that feeds a store.Hub, and when that
//     connection is re-established every subscriber is woken, because the
//     event log and not the notification is the source of truth.
//
// Migrations are embedded and applied by goose at Open under a session-level
// advisory lock, so replicas that start together migrate once.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/lubanhq/luban/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultChannel prefixes the NOTIFY channel used when Options.Channel is
// empty: "luban_events_<schema>" (cut to PostgreSQL's 63 bytes), so that
// deployments in different schemas of one database do not wake each other.
const DefaultChannel = "luban_events"

// Options configures Open. The zero value is valid; pool settings given in
// the URL (pool_max_conns, pool_min_conns, pool_max_conn_lifetime,
// pool_max_conn_idle_time, pool_health_check_period) apply unless a field
// here overrides them.
type Options struct {
	// MaxConns bounds the connection pool of this replica (the LISTEN
	// connection is one more). Default: pool_max_conns from the URL, else
	// pgxpool's max(4, number of CPUs).
	MaxConns int32
	// MinConns is how many pool connections are kept open when idle.
	// Default: pool_min_conns from the URL, else 0.
	MinConns int32
	// Channel is the NOTIFY channel; every replica of one deployment must use
	// the same. Default "luban_events_<schema>" (see DefaultChannel).
	Channel string
	// ReconnectDelay is the pause between attempts to re-establish the LISTEN
	// connection. Default 500ms.
	ReconnectDelay time.Duration
	// Logger receives listener errors. Default slog.Default().
	Logger *slog.Logger
}

// Store is a store.Store on one PostgreSQL database (the schema is the
// connection's search_path).
type Store struct {
	executor
	pool    *pgxpool.Pool
	hub     store.Hub
	channel string
	log     *slog.Logger

	cancel    context.CancelFunc
	done      chan struct{}
	mu        sync.Mutex
	listenPID uint32 // backend pid of the LISTEN connection; 0 while down
	closeOnce sync.Once
	trips     *roundTrips
	inst      instances
	runs      runSessions
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at url (postgres://… or postgresql://…),
// applies the embedded migrations and starts the LISTEN connection; it
// returns once that connection listens. Errors: a malformed URL, an
// unreachable server, a failed migration.
func Open(ctx context.Context, url string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("postgres: parse url: %w", err)
	}
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	if opts.MinConns > 0 {
		cfg.MinConns = opts.MinConns
	}
	trips := &roundTrips{}
	cfg.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connect: %w", err)
	}
	var schema string
	if err := pool.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: current schema: %w", err)
	}
	if err := migrate(ctx, pool, schema); err != nil {
		pool.Close()
		return nil, err
	}
	s := &Store{pool: pool, channel: opts.Channel, log: opts.Logger, done: make(chan struct{}), trips: trips}
	if s.channel == "" {
		s.channel = DefaultChannel + "_" + schema
		if len(s.channel) > 63 {
			s.channel = s.channel[:63]
		}
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	s.executor = executor{q: textQuerier{pool}, pool: pool, channel: s.channel, onCommit: s.hub.Notify}
	delay := opts.ReconnectDelay
	if delay <= 0 {
		delay = 500 * time.Millisecond
	}
	listenCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	ready := make(chan error, 1)
	s.inst.cfg = cfg.ConnConfig.Copy()
	go s.listen(listenCtx, cfg.ConnConfig.Copy(), delay, ready)
	select {
	case err := <-ready:
		if err != nil {
			s.Close()
			return nil, err
		}
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
	return s, nil
}

func migrate(ctx context.Context, pool *pgxpool.Pool, schema string) error {
	// One advisory lock per schema: replicas of one deployment wait for each
	// other, separate schemas (tests) do not.
	h := fnv.New64a()
	h.Write([]byte("luban migrations " + schema))
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	fsys, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, fsys, goose.WithSessionLocker(locker))
	if err != nil {
		return fmt.Errorf("postgres: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("postgres: apply migrations: %w", err)
	}
	cur, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("postgres: schema version: %w", err)
	}
	src := p.ListSources()
	if err := store.CheckSchemaVersion(cur, src[len(src)-1].Version); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// listen keeps one connection LISTENing on the channel and feeds the hub
// until ctx is done. The first outcome is sent on ready. After every
// (re)connection all subscribers are woken: notifications sent while the
// connection was down are lost, the events are not.
func (s *Store) listen(ctx context.Context, cfg *pgx.ConnConfig, delay time.Duration, ready chan<- error) {
	defer close(s.done)
	first := true
	for ctx.Err() == nil {
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			if _, err = conn.Exec(ctx, "LISTEN "+pgx.Identifier{s.channel}.Sanitize()); err != nil {
				conn.Close(context.Background())
			}
		}
		if err != nil {
			if first {
				ready <- fmt.Errorf("postgres: listen on %s: %w", s.channel, err)
				return
			}
			if ctx.Err() == nil {
				s.log.Error("postgres: listener reconnect failed", "err", err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(delay):
			}
			continue
		}
		s.setListenPID(conn.PgConn().PID())
		if first {
			// Nobody can have subscribed before Open returned.
			ready <- nil
			first = false
		} else {
			s.hub.NotifyAll()
		}
		for {
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("postgres: listener connection lost; reconnecting", "err", err)
				}
				break
			}
			s.hub.Notify(n.Payload)
		}
		s.setListenPID(0)
		conn.Close(context.Background())
	}
}

func (s *Store) setListenPID(pid uint32) {
	s.mu.Lock()
	s.listenPID = pid
	s.mu.Unlock()
}

// Listening reports whether the LISTEN connection is up (for readiness
// checks: while it is down, live events from other replicas arrive only at
// the next SSE heartbeat).
func (s *Store) Listening() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listenPID != 0
}

// Pool is the connection pool, for health checks and pool statistics.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// Durable is true: rows survive restarts.
func (s *Store) Durable() bool { return true }

// Subscribe implements store.Store: the channel is woken after events of
// sessionID were committed by this replica or, through LISTEN, by any other.
func (s *Store) Subscribe(sessionID string) (<-chan struct{}, func()) {
	return s.hub.Subscribe(sessionID)
}

// Follow implements store.Store. It hands no events: every wake-up (a
// commit of this replica or, through LISTEN, of another) tells the
// Follower to read the log.
func (s *Store) Follow(sessionID string) (*store.Follower, func()) {
	return s.hub.Follow(sessionID)
}

// InTx implements store.Store with a READ COMMITTED transaction. Sessions that
// got events are NOTIFYed before the commit, which delivers them; local
// subscribers are woken right after it. BEGIN rides with the first
// statement and the NOTIFY and COMMIT with the last writes (pipeTx), so a
// transaction costs the round trips of the statements whose answers fn
// reads, plus one.
func (s *Store) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: begin: %w", err)
	}
	// A connection left inside a transaction (a failed ROLLBACK) is closed
	// by Release, not reused.
	defer conn.Release()
	sessions := map[string]struct{}{}
	pipe := newPipeTx(conn)
	pipe.known = &s.runs
	tx := &txExecutor{executor{q: pipe, channel: s.channel, touched: sessions}}
	if err := fn(tx); err != nil {
		if rbErr := pipe.rollback(context.WithoutCancel(ctx)); rbErr != nil {
			return errors.Join(err, rbErr)
		}
		return err
	}
	var notify []queued
	if len(sessions) > 0 {
		keys := make([]string, 0, len(sessions))
		for id := range sessions {
			keys = append(keys, id)
		}
		notify = append(notify, queued{sql: notifySQL, args: encodeArgs([]any{s.channel, textArray(keys)})})
	}
	if err := pipe.commit(ctx, notify); err != nil {
		_ = pipe.rollback(context.WithoutCancel(ctx))
		return fmt.Errorf("postgres: %w", err)
	}
	pipe.committed()
	for id := range sessions {
		s.hub.Notify(id)
	}
	return nil
}

// Close stops the listener and closes the pool.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.cancel()
		<-s.done
		s.closeInstances()
		s.pool.Close()
	})
	return nil
}

type txExecutor struct{ executor }

// roundTrips counts the round trips of the pool's connections: every
// statement sent alone and every batch (one pipeline, however many
// statements it holds). Not counted: preparing a statement the first time a
// connection sends it, a cost per connection, not per piece of work.
// stmts counts the statements in them.
type roundTrips struct{ n, stmts atomic.Int64 }

func (t *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.n.Add(1)
	t.stmts.Add(1)
	return ctx
}

func (t *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	t.n.Add(1)
	t.stmts.Add(int64(d.Batch.Len()))
	return ctx
}

func (t *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// RoundTrips is the number of round trips (statements sent alone and
// batches; not the preparing of statements: roundTrips) this store made
// since Open, for benchmarks and tests that count what a piece of work
// costs the server.
func (s *Store) RoundTrips() int64 { return s.trips.n.Load() }

// Statements is the number of statements those round trips carried
// (BEGIN, COMMIT and NOTIFY included).
func (s *Store) Statements() int64 { return s.trips.stmts.Load() }

// notifySQL NOTIFYs every key of $2 on channel $1.
const notifySQL = `SELECT pg_notify($1, k) FROM unnest($2::text[]) AS k`

// notifyAll NOTIFYs every key on channel in one statement (one round trip
// for all the sessions and feeds a transaction touched).
func notifyAll(ctx context.Context, tx querier, channel string, keys []string) error {
	if _, err := tx.Exec(ctx, notifySQL, channel, keys); err != nil {
		return fmt.Errorf("postgres: notify: %w", err)
	}
	return nil
}
