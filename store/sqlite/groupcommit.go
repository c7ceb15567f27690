package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"

	"github.com/lubanhq/luban/store"
)

// Group commit. SQLite has one writer, so the transactions of concurrent
// runs queue for it anyway; committing them one by one pays the commit
// (WAL frames of every page touched, the locks, the header) once per
// transaction. Instead one goroutine owns the writer: InTx hands it the
// transaction's func, and it runs every func that is waiting at that moment
// inside one SQLite transaction, each in a savepoint of its own, commits
// once, and only then wakes each caller with its own result.
//
//   - A member whose func fails is rolled back to its savepoint: its writes
//     vanish, the other members' stay, and only its caller sees the error.
//   - The members run one after the other on the one connection, so each
//     sees the writes of those before it, exactly as if they had committed
//     one by one in that order: a conditional write (a run row still
//     'running', a question still 'pending') keeps its meaning.
//   - Nothing is announced (Subscribe) and no caller returns before the
//     commit: persist first, then emit. A failed commit fails every member
//     that had succeeded.
//   - A batch of one runs without savepoints, so a lone caller pays nothing
//     but the hand-over.

// maxBatch bounds how many transactions share one commit.
const maxBatch = 64

// memberState is what the writer gives the member it runs: the querier on
// its connection, the held log rows, the transaction and the sessions it
// appended events to. Only the writer goroutine runs members, one at a
// time, so one memberState is reused by each; a member's func must not keep
// its store.Tx once it returned (the transaction is gone then anyway).
type memberState struct {
	q        rawTx
	buf      rowBuf
	tx       txExecutor
	sessions map[string]struct{}
	onEvent  func(sessionID string) // adds to sessions
}

type txJob struct {
	ctx  context.Context
	fn   func(tx store.Tx) error
	done chan error
	// Set by the writer: the sessions (and feed keys) it appended events
	// to, and the statements that missed the cache.
	sessions map[string]struct{}
	// handed is what it appended, for the sessions' Followers.
	handed   *handing
	panicked any
}

// errClosed is InTx's error after Close.
var errClosed = errors.New("sqlite: store is closed")

// InTx implements store.Store. Transactions start with BEGIN IMMEDIATE;
// concurrent ones share a commit (see above).
func (s *Store) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j := jobPool.Get().(*txJob)
	j.ctx, j.fn = ctx, fn
	s.queued.Add(1)
	select {
	case s.jobs <- j:
		s.queued.Add(-1)
	case <-s.stopW:
		s.queued.Add(-1)
		j.put()
		return errClosed
	}
	err := <-j.done
	panicked := j.panicked
	j.put()
	if panicked != nil {
		panic(panicked)
	}
	return err
}

// jobPool holds txJobs whose InTx returned: the writer is done with a job
// once it sent on done.
var jobPool = sync.Pool{New: func() any { return &txJob{done: make(chan error, 1)} }}

// put returns j, emptied, to jobPool.
func (j *txJob) put() {
	*j = txJob{done: j.done}
	jobPool.Put(j)
}

// writer runs the transactions InTx hands over until Close.
func (s *Store) writer() {
	defer close(s.writerDone)
	batch := make([]*txJob, 0, maxBatch)
	for {
		var first *txJob
		select {
		case first = <-s.jobs:
		case <-s.stopW:
			s.closeRaw()
			return
		}
		batch = append(batch[:0], first)
	more:
		for len(batch) < maxBatch {
			select {
			case j := <-s.jobs:
				batch = append(batch, j)
			default:
				break more
			}
		}
		if s.overLimit() {
			s.waitCheckpoint()
		}
		s.wmu.Lock()
		s.commitBatch(batch)
		s.wmu.Unlock()
	}
}

// closeRaw finalizes the statements the group commit prepared on the
// writer's connection, before Close closes it.
func (s *Store) closeRaw() {
	ctx := context.Background()
	conn, err := s.wdb.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.Raw(func(dc any) error {
		if s.raw.dc == dc {
			s.wmu.Lock() // WritesByQuery reads the statements' counts
			s.raw.close()
			s.wmu.Unlock()
		}
		return nil
	})
}

// commitBatch runs batch in one transaction on the writer's driver
// connection (rawtx.go) and reports to each member.
func (s *Store) commitBatch(batch []*txJob) {
	ctx := context.Background()
	results := make([]error, len(batch))
	committed := false
	conn, err := s.wdb.Conn(ctx)
	if err == nil {
		err = conn.Raw(func(dc any) error {
			var err error
			committed, err = s.runBatch(dc, batch, results)
			return err
		})
		conn.Close()
	}
	if err != nil {
		for i := range results {
			if results[i] == nil {
				results[i] = err
			}
		}
	}
	if committed {
		s.wc.commits.Add(1)
		s.batches.Add(1)
		s.members.Add(int64(len(batch)))
		s.countFrames()
		for i, j := range batch {
			if results[i] == nil {
				for id := range j.sessions {
					s.hub.Hand(id, j.handed.of(id))
				}
			}
		}
	}
	for i, j := range batch {
		j.done <- results[i]
	}
}

// runBatch runs batch's members in one transaction on dc, the writer's
// driver connection, leaving each member's result in results; it reports
// whether the transaction committed, and an error that concerns the
// connection (database/sql drops a connection whose Raw returns
// driver.ErrBadConn).
func (s *Store) runBatch(dc any, batch []*txJob, results []error) (bool, error) {
	r := s.raw
	if err := r.bind(dc); err != nil {
		return false, err
	}
	ctx := context.Background()
	// BEGIN, COMMIT and ROLLBACK run as statements prepared once on the
	// connection: the driver's BeginTx and Commit prepare and finalize
	// theirs on every call.
	_, err := r.exec(ctx, `BEGIN IMMEDIATE`, nil)
	if err != nil {
		err = fmt.Errorf("sqlite: begin: %w", err)
		if errors.Is(err, driver.ErrBadConn) {
			return false, err
		}
		for i := range results {
			results[i] = err
		}
		return false, nil
	}
	// The numbers the writer knows hold while the log's commit count is
	// the one its own last commit left (rowbuf.go).
	change, ok := s.commitCount()
	if !ok || !s.seqValid || change != s.seqChange {
		s.seq.reset()
	}
	s.seqValid = false
	wrote := false
	solo := len(batch) == 1
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		var w bool
		w, results[i] = s.runMember(r, j, i, solo)
		wrote = wrote || w
	}
	if solo && results[0] != nil {
		if _, rbErr := r.exec(ctx, `ROLLBACK`, nil); rbErr != nil {
			results[0] = errors.Join(results[0], fmt.Errorf("sqlite: rollback: %w", rbErr))
		}
		s.seq.reset()
		return false, nil
	}
	if _, err := r.exec(ctx, `COMMIT`, nil); err != nil {
		s.seq.reset()
		// A COMMIT that failed (SQLITE_BUSY, a full disk) can leave the
		// transaction open; end it so the next batch can begin.
		_, _ = r.exec(ctx, `ROLLBACK`, nil)
		for i := range batch {
			if results[i] == nil {
				results[i] = fmt.Errorf("sqlite: commit: %w", err)
			}
		}
		return false, nil
	}
	// A commit that wrote rows added exactly one to the count; one that
	// may have written nothing leaves it unknown, and the next batch
	// reads the numbers again.
	s.seqValid, s.seqChange = ok && wrote, change+1
	return true, nil
}

// commitCount is the log's commit count (the WAL index header's iChange),
// read while the writer holds SQLite's write lock; ok is false when it
// cannot be read.
func (s *Store) commitCount() (uint32, bool) {
	_, _, change, ok := s.shm.header(s.path)
	return change, ok
}

// runMember runs one member's func in a savepoint (none when solo: its
// failure rolls the whole transaction back), then writes the log rows it
// held back (rowbuf.go); wrote reports whether it succeeded having written
// some.
// i is the member's place in its batch: its sessions are the writer's set
// for that place (memberSessions), read by commitBatch before the next
// batch clears them.
func (s *Store) runMember(r *rawConn, j *txJob, i int, solo bool) (wrote bool, err error) {
	m := &s.member
	if m.onEvent == nil {
		m.onEvent = func(id string) { m.sessions[id] = struct{}{} }
	}
	for len(s.memberSessions) <= i {
		s.memberSessions = append(s.memberSessions, map[string]struct{}{})
	}
	m.sessions = s.memberSessions[i]
	clear(m.sessions)
	j.sessions = m.sessions
	s.learnt.reset()
	// The held rows' slices are reused; a member that failed before its
	// rows were written leaves them there.
	m.buf = rowBuf{r: r, known: s.seq, learnt: s.learnt, touches: s.touches,
		events: emptied(m.buf.events), feed: emptied(m.buf.feed), trace: emptied(m.buf.trace), audit: emptied(m.buf.audit), msgs: emptied(m.buf.msgs),
		hub: &s.hub}
	buf := &m.buf
	m.q = rawTx{r: r, buf: buf}
	m.tx = txExecutor{executor{r: &m.q, w: &m.q, onEvent: m.onEvent, buf: buf}}
	tx := &m.tx
	bg := context.Background()
	if !solo {
		if _, err := r.exec(bg, `SAVEPOINT member`, nil); err != nil {
			return false, fmt.Errorf("sqlite: savepoint: %w", err)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			j.panicked = p
			err = fmt.Errorf("sqlite: transaction panicked: %v", p)
		}
		if !solo {
			if err != nil {
				j.sessions = nil
				if _, rbErr := r.exec(bg, `ROLLBACK TO member`, nil); rbErr != nil {
					err = errors.Join(err, fmt.Errorf("sqlite: rollback to savepoint: %w", rbErr))
				}
			}
			if _, relErr := r.exec(bg, `RELEASE member`, nil); relErr != nil && err == nil {
				err = fmt.Errorf("sqlite: release savepoint: %w", relErr)
			}
		}
		if err == nil {
			// What the member learnt of the numbers holds now that its
			// rows stay; the batch's commit decides the rest.
			s.seq.merge(s.learnt)
			wrote = buf.wrote
			j.handed = buf.hand
		}
		s.learnt.reset()
	}()
	if err := j.fn(tx); err != nil {
		return false, err
	}
	return false, buf.flush()
}

// GroupCounts are the group commit's counts since Open: Batches is the
// number of commits InTx made, Members the number of InTx calls they held
// (Members ÷ Batches is the mean batch size).
type GroupCounts struct{ Batches, Members int64 }

// GroupCounts returns the group commit's counts since Open.
func (s *Store) GroupCounts() GroupCounts {
	return GroupCounts{Batches: s.batches.Load(), Members: s.members.Load()}
}
