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
	cdb      *sql.DB // the background checkpointer's connection
	// ckMu is held by whoever checkpoints: SQLite lets one checkpoint run at
	// a time and fails the others at once, so a commit past the WAL limit
	// waits here for the background round instead.
	ckMu    sync.Mutex
	stopCk  chan struct{}
	ckDone  chan struct{}
	closeMu sync.Mutex
	closed  bool
	rc, wc  *stmtCache
	// raw is the writer's driver connection as the group commit uses it
	// (rawtx.go); only the writer goroutine touches it.
	raw *rawConn
	// The group commit's writer goroutine (groupcommit.go): InTx hands it
	// jobs; stopW stops it, writerDone says it stopped.
	jobs             chan *txJob
	stopW            chan struct{}
	writerDone       chan struct{}
	batches, members atomic.Int64
	queued           atomic.Int64 // InTx calls waiting to be handed over
	hub              store.Hub
	path             string
	temp             bool
	walLimit         int64
	busy             time.Duration
	readers          int
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
	// database), in bytes. Default 64 MiB. Readers that always hold a
	// snapshot keep SQLite from ever rewinding the log, so without a bound it
	// grows with every commit. Past half of WALLimit the background
	// checkpointer copies the log back and truncates it, holding this
	// store's readers back for that long; a transaction that commits past
	// WALLimit does the same before InTx returns, holding back the next
	// writer too. So the file stays within about WALLimit plus one
	// transaction, whatever the load.
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
	// not left in the file (docs/design.md §9, "Operating it"). Every connection sets it:
	// the writer deletes, and a connection without it would not.
	q.Add("_pragma", "secure_delete(1)")
	// Checkpoints run in the background (checkpointLoop), not inside a
	// committing writer, where their fsync would stall every other writer.
	q.Add("_pragma", "wal_autocheckpoint(0)")
	// When a checkpoint rewinds the log, the file is cut back to this size.
	q.Add("_pragma", fmt.Sprintf("journal_size_limit(%d)", walLimit/2))
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
	cq.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busy))
	cq.Add("_pragma", "secure_delete(1)")
	cdb, err := sql.Open(DriverName, "file:"+path+"?"+cq.Encode())
	if err != nil {
		rdb.Close()
		wdb.Close()
		return nil, fmt.Errorf("sqlite: open checkpointer %s: %w", path, err)
	}
	cdb.SetMaxOpenConns(1)
	s := &Store{rdb: rdb, wdb: wdb, cdb: cdb, path: path, temp: temp, stopCk: make(chan struct{}), ckDone: make(chan struct{}),
		walLimit: walLimit, busy: time.Duration(busy) * time.Millisecond, readers: n}
	s.jobs, s.stopW, s.writerDone = make(chan *txJob), make(chan struct{}), make(chan struct{})
	s.rc, s.wc = newStmtCache(rdb), newStmtCache(wdb)
	s.wc.writer = true
	s.raw = &rawConn{c: s.wc}
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
	p, err := goose.NewProvider(goose.DialectSQLite3, db, fsys)
	if err != nil {
		return fmt.Errorf("sqlite: migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqlite: apply migrations: %w", err)
	}
	return nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Durable is false for the "memory" database.
func (s *Store) Durable() bool { return !s.temp }

// Subscribe implements store.Store.
func (s *Store) Subscribe(sessionID string) (<-chan struct{}, func()) {
	return s.hub.Subscribe(sessionID)
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
	close(s.stopW)
	<-s.writerDone
	close(s.stopCk)
	<-s.ckDone
	s.rc.close()
	s.wc.close()
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
}

// Counts returns the counts since Open.
func (s *Store) Counts() Counts {
	return Counts{Commits: s.wc.commits.Load(), Writes: s.wc.n.Load(), Reads: s.rc.n.Load()}
}

func fsSub(f fs.FS, dir string) (fs.FS, error) { return fs.Sub(f, dir) }

// checkpointInterval is how often the WAL is copied back into the database.
const checkpointInterval = time.Second

// defaultWALLimit is Options.WALLimit's default.
const defaultWALLimit = 64 << 20

// walSize is the size of the -wal file in bytes (0 when it cannot be read).
func (s *Store) walSize() int64 {
	fi, err := os.Stat(s.path + "-wal")
	if err != nil {
		return 0
	}
	return fi.Size()
}

// truncateWAL copies the whole WAL into the database and truncates it. It
// runs on the writer's own connection, taken first, so no transaction of
// this store is open or begins meanwhile. SQLite can only rewind the log
// once no reader uses an older snapshot, and busy readers that keep taking
// the same read slots can starve it; so for the length of the checkpoint
// every reader connection of the pool is held out of use too (in-flight
// reads finish first, new ones wait). Each step gives up after the busy
// timeout; the next commit or round tries again.
func (s *Store) truncateWAL() {
	ctx, cancel := context.WithTimeout(context.Background(), s.busy+time.Second)
	defer cancel()
	w, err := s.wdb.Conn(ctx)
	if err != nil {
		return
	}
	defer w.Close()
	held := make([]*sql.Conn, 0, s.readers)
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range s.readers {
		c, err := s.rdb.Conn(ctx)
		if err != nil {
			break
		}
		held = append(held, c)
	}
	_, _ = w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
}

// checkpointLoop copies the WAL into the database every interval on a
// connection of its own. PASSIVE never blocks writers or readers; it does
// what it can, and the next round does the rest. Once the file passes half
// of the WAL limit the round truncates it instead (see Options.WALLimit).
func (s *Store) checkpointLoop(interval time.Duration) {
	defer close(s.ckDone)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-s.stopCk:
			// A last full pass so the WAL does not outlive the process.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			s.ckMu.Lock()
			_, _ = s.cdb.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
			s.ckMu.Unlock()
			cancel()
			return
		case <-t.C:
			s.ckMu.Lock()
			if s.walSize() > s.walLimit/2 {
				s.truncateWAL()
			} else {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_, _ = s.cdb.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
				cancel()
			}
			s.ckMu.Unlock()
		}
	}
}

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
