// Package sqlite is luban's embedded store driver: SQLite through the pure-Go
// modernc.org/sqlite driver (no cgo; see DriverName), WAL journal, a busy timeout, one writer
// connection (SQLite allows one writer; funnelling writes through one
// connection avoids SQLITE_BUSY between our own goroutines) and a pool of
// reader connections. Migrations are embedded and applied by goose at Open.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lubanhq/luban/store"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is a store.Store on one SQLite file.
type Store struct {
	executor
	rdb, wdb *sql.DB
	cdb      *sql.DB // the checkpointer's connection (checkpoint.go)
	stopCk   chan struct{}
	ckDone   chan struct{}
	ckNudge  chan struct{}      // the writer's "ckFrames frames appended"
	ckWait   chan chan struct{} // the writer's "run a round and tell me"
	// wmu is held by the writer goroutine for each batch and by the
	// checkpointer for its RESTART step (checkpoint.go).
	wmu sync.Mutex
	// The writer goroutine's view of the log (countFrames): the WAL index
	// header it last read, the frames since the last nudge.
	shm               walIndex
	lastFrame         uint32
	lastSalts         uint64
	sinceCk, ckFrames int64
	walFrames         atomic.Int64
	logFrames         atomic.Int64 // lastFrame, for the checkpointer
	checkpoints       atomic.Int64
	rewinds           atomic.Int64
	truncations       atomic.Int64
	closeMu           sync.Mutex
	// noOutbox is SetOutbox(false): the writer reads it once per feed
	// entry (rowbuf.go).
	noOutbox atomic.Bool
	closed   bool
	rc, wc   *stmtCache
	// raw is the writer's driver connection as the group commit uses it
	// (rawtx.go); only the writer goroutine touches it.
	raw *rawConn
	// The numbers the writer goroutine knows (rowbuf.go): seq, trusted
	// while the log's commit count is seqChange (seqValid); learnt, a
	// member's; touches, which queries name the held-back tables.
	seq, learnt *seqs
	seqChange   uint32
	seqValid    bool
	touches     map[string]bool
	// The group commit's writer goroutine (groupcommit.go): InTx hands it
	// jobs; stopW stops it, writerDone says it stopped.
	jobs             chan *txJob
	stopW            chan struct{}
	writerDone       chan struct{}
	batches, members atomic.Int64
	// member is the state of the member the writer runs now, and
	// memberSessions the sessions of each place of the batch (runMember).
	member         memberState
	memberSessions []map[string]struct{}
	queued         atomic.Int64 // InTx calls waiting to be handed over
	hub            store.Hub
	inst           instances
	path           string
	temp           bool
	walLimit       int64
	busy           time.Duration
	readers        int
}

var _ store.Store = (*Store)(nil)

// Options configures Open. The zero value is valid.
type Options struct {
	// BusyTimeoutMS is how long a connection waits for a lock held by another
	// process, in milliseconds. Default 5000.
	BusyTimeoutMS int
	// Readers is the size of the read pool. Default max(4, GOMAXPROCS).
	Readers int
	// WALLimit bounds the write-ahead log (the -wal file beside the
	// database), in bytes. Default 64 MiB. The checkpointer copies the log
	// back every min(4096, WALLimit/4 ÷ 4 KiB) pages written, and SQLite
	// rewinds it, so under a steady load the file stays at about a quarter
	// of WALLimit. Readers that always hold a snapshot can keep SQLite
	// from rewinding; past half of WALLimit the checkpointer then holds this
	// store's readers and writer back for one truncating checkpoint. So the
	// file stays within about WALLimit, whatever the load (checkpoint.go).
	WALLimit int64
}

// Open opens (creating when missing) the SQLite database at path and applies
// the embedded migrations. The special path "memory" opens a database in a
// temporary file that Close removes: nothing is kept (docs/design.md §8 --db memory),
// and Durable reports false.
func Open(ctx context.Context, path string, opts *Options) (*Store, error) {
	if opts == nil {
		opts = &Options{}
	}
	temp := false
	if path == "memory" {
		f, err := os.CreateTemp("", "luban-memory-*.db")
		if err != nil {
			return nil, fmt.Errorf("sqlite: create memory database: %w", err)
		}
		path = f.Name()
		f.Close()
		temp = true
	} else if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("sqlite: create directory for %s: %w", path, err)
		}
	}
	created, err := createPrivate(path)
	if err != nil {
		return nil, err
	}
	busy := opts.BusyTimeoutMS
	if busy <= 0 {
		busy = 5000
	}
	walLimit := opts.WALLimit
	if walLimit <= 0 {
		walLimit = defaultWALLimit
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy))
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL in WAL mode survives a process crash (kill -9); only an OS crash
	// or power loss can lose the last transactions. See docs/durability.md.
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// Deleted rows are overwritten with zeros, in their page and on the
	// free list, so what DELETE /api/sessions/{id} and --retain delete is
	// not left in the file (docs/design.md §18, "Operating it"). Every connection sets it:
	// the writer deletes, and a connection without it would not.
	q.Add("_pragma", "secure_delete(1)")
	// Checkpoints run on the checkpointer's connection (checkpoint.go), not
	// inside a committing writer, where their fsync would stall every other
	// writer.
	q.Add("_pragma", "wal_autocheckpoint(0)")
	// When SQLite rewinds the log, the file is cut back to this size.
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", journalLimit(walLimit)))
	// The group commit's savepoints (and sorts) keep their temporary
	// journals in memory instead of temp files: with 8 runs in flight about
	// half of the writer's file writes were those.
	q.Add("_pragma", "temp_store(memory)")
	q.Add("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()

	wdb, err := sql.Open(DriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	wdb.SetConnMaxLifetime(0)
	if err := wdb.PingContext(ctx); err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlite: open %s: %w", path, err)
	}
	if err := migrate(ctx, wdb); err != nil {
		wdb.Close()
		return nil, err
	}
	if created {
		// SQLite gives -wal and -shm the database's mode, but not every
		// driver's file system layer does.
		for _, f := range []string{path + "-wal", path + "-shm"} {
			if err := os.Chmod(f, 0o600); err != nil && !errors.Is(err, fs.ErrNotExist) {
				wdb.Close()
				return nil, fmt.Errorf("sqlite: make %s private: %w", f, err)
			}
		}
	}
	rq := url.Values{}
	rq.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy))
	rq.Add("_pragma", "secure_delete(1)")
	rq.Add("_pragma", "query_only(1)")
	rdb, err := sql.Open(DriverName, "file:"+path+"?"+rq.Encode())
	if err != nil {
		wdb.Close()
		return nil, fmt.Errorf("sqlite: open readers %s: %w", path, err)
	}
	n := opts.Readers
	if n <= 0 {
		n = max(4, runtime.GOMAXPROCS(0))
	}
	rdb.SetMaxOpenConns(n)
	rdb.SetMaxIdleConns(n)
	cq := url.Values{}
	// The checkpointer waits briefly for a lock and tries again next round
	// rather than hold SQLite's writer lock while it waits (checkpoint.go).
	cq.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", ckBusy))
	cq.Add("_pragma", "wal_autocheckpoint(0)")
	cq.Add("_pragma", "secure_delete(1)")
	cdb, err := sql.Open(DriverName, "file:"+path+"?"+cq.Encode())
	if err != nil {
		rdb.Close()
		wdb.Close()
		return nil, fmt.Errorf("sqlite: open checkpointer %s: %w", path, err)
	}
	cdb.SetMaxOpenConns(1)
	s := &Store{rdb: rdb, wdb: wdb, cdb: cdb, path: path, temp: temp, stopCk: make(chan struct{}), ckDone: make(chan struct{}),
		ckNudge: make(chan struct{}, 1), ckWait: make(chan chan struct{}), ckFrames: ckFrames(walLimit),
		walLimit: walLimit, busy: time.Duration(busy) * time.Millisecond, readers: n}
	s.jobs, s.stopW, s.writerDone = make(chan *txJob), make(chan struct{}), make(chan struct{})
	s.rc, s.wc = newStmtCache(rdb), newStmtCache(wdb)
	s.wc.writer = true
	s.raw = &rawConn{c: s.wc, noOutbox: &s.noOutbox}
	s.seq, s.learnt, s.touches = newSeqs(), newSeqs(), map[string]bool{}
	go s.writer()
	go s.checkpointLoop(checkpointInterval)
	s.executor = executor{r: cachedDB{rdb, s.rc}, w: cachedDB{wdb, s.wc}, onEvent: s.hub.Notify, group: s.InTx}
	return s, nil
}

func migrate(ctx context.Context, db *sql.DB) error {
	fsys, err := fsSub(migrations, "migrations")
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys, migrationOptions()...)
	if err != nil {
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	// goose holds one connection while it runs a migration outside its
	// transaction (sessionKeyMigration) on the pool: a second lets it run.
	db.SetMaxOpenConns(2)
	defer db.SetMaxOpenConns(1)
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlite: apply migrations: %w", err)
	}
	return schemaNotNewer(ctx, p, "sqlite")
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Durable is false for the "memory" database.
func (s *Store) Durable() bool { return !s.temp }

// Subscribe implements store.Store.
func (s *Store) Subscribe(sessionID string) (<-chan struct{}, func()) {
	return s.hub.Subscribe(sessionID)
}

// Follow implements store.Store: the events this process's commits
// append are handed to the session's Followers at the commit; a commit of
// another process on the same file wakes none (Options.EventPoll in the
// agent reads the log for those).
func (s *Store) Follow(sessionID string) (*store.Follower, func()) {
	return s.hub.Follow(sessionID)
}

// Close closes both pools; a "memory" database's file is removed.
func (s *Store) Close() error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return nil
	}
	s.closed = true
	s.closeMu.Unlock()
	s.closeInstances()
	close(s.stopW)
	<-s.writerDone
	close(s.stopCk)
	<-s.ckDone
	s.rc.close()
	s.wc.close()
	s.shm.close()
	err := errors.Join(s.rdb.Close(), s.wdb.Close(), s.cdb.Close())
	if s.temp {
		for _, suffix := range []string{"", "-wal", "-shm"} {
			os.Remove(s.path + suffix)
		}
	}
	return err
}

type txExecutor struct{ executor }

// Counts are counts since Open, for benchmarks and tests that count what a
// piece of work costs the database (load does not move them).
type Counts struct {
	// Commits is the number of write transactions committed: one per InTx,
	// one per write made outside it.
	Commits int64
	// Writes is the number of statements run on the writer connection,
	// inside transactions or not (BEGIN and COMMIT not counted).
	Writes int64
	// Reads is the number of statements run on the reader pool.
	Reads int64
	// WALFrames is the number of frames (pages) the group commit's commits
	// appended to the write-ahead log, read from SQLite's WAL index.
	WALFrames int64
	// Checkpoints is the number of checkpoints the checkpointer ran (two a
	// round), Truncations the number of those that truncated the log,
	// Rewinds the number of times the writer found the log started again
	// from its beginning.
	Checkpoints, Truncations, Rewinds int64
}

// SetOutbox says whether the owner's feed entry of an event committed
// from now on is a webhook outbox row (listed by FeedListUnfanned until
// WebhookEnqueue marks it fanned out); true after Open. With false the
// entry is written as fanned out already, as a dispatcher with no webhook
// and no notification channel would mark it, and touches no index of the
// feed but its primary key. Entries committed before keep their state. A
// process sets false only when it runs the database's one dispatcher and
// that dispatcher has nothing to send; a webhook configured later gets
// what happens after it (docs/design.md §20).
func (s *Store) SetOutbox(on bool) { s.noOutbox.Store(!on) }

// Counts returns the counts since Open.
func (s *Store) Counts() Counts {
	return Counts{Commits: s.wc.commits.Load(), Writes: s.wc.n.Load(), Reads: s.rc.n.Load(),
		WALFrames: s.walFrames.Load(), Checkpoints: s.checkpoints.Load(), Truncations: s.truncations.Load(), Rewinds: s.rewinds.Load()}
}

// ReadsByQuery returns, per query text, the number of statements run on
// the reader pool since Open (Counts.Reads is their sum): what a piece of
// work reads, for tests and benchmarks.
func (s *Store) ReadsByQuery() map[string]int64 { return s.rc.counts() }

// WritesByQuery returns, per query text, the number of statements run on
// the writer since Open (Counts.Writes is their sum, but for statements
// that failed before they ran): what a piece of work writes, statement by
// statement, for tests and benchmarks. It waits for
// the group commit's batch under way, if any.
func (s *Store) WritesByQuery() map[string]int64 {
	out := s.wc.counts()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.raw.counts(out)
	return out
}

func fsSub(f fs.FS, dir string) (fs.FS, error) { return fs.Sub(f, dir) }

// checkpointInterval is how often the checkpointer runs a round when the
// writer has not nudged it (checkpoint.go).
const checkpointInterval = time.Second

// defaultWALLimit is Options.WALLimit's default.
const defaultWALLimit = 64 << 20

// createPrivate creates an empty database file at path with mode 0600 (the
// answers it will hold are no one else's), reporting whether it did; an
// existing file is left as it is. SQLite takes an empty file as a new
// database.
func createPrivate(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return true, fmt.Errorf("sqlite: create %s: %w", path, err)
	}
	return true, nil
}

// schemaNotNewer refuses a database a newer luban migrated past this
// binary's newest migration (store.ErrSchemaTooNew).
func schemaNotNewer(ctx context.Context, p *goose.Provider, driver string) error {
	cur, err := p.GetDBVersion(ctx)
	if err != nil {
		return fmt.Errorf("%s: schema version: %w", driver, err)
	}
	src := p.ListSources()
	if err := store.CheckSchemaVersion(cur, src[len(src)-1].Version); err != nil {
		return fmt.Errorf("%s: %w", driver, err)
	}
	return nil
}
