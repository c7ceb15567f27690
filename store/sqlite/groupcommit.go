package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

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

type txJob struct {
	ctx  context.Context
	fn   func(tx store.Tx) error
	done chan error
	// Set by the writer: the sessions (and feed keys) it appended events
	// to, and the statements that missed the cache.
	sessions map[string]struct{}
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
	j := &txJob{ctx: ctx, fn: fn, done: make(chan error, 1)}
	s.queued.Add(1)
	select {
	case s.jobs <- j:
		s.queued.Add(-1)
	case <-s.stopW:
		s.queued.Add(-1)
		return errClosed
	}
	err := <-j.done
	if j.panicked != nil {
		panic(j.panicked)
	}
	return err
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
		s.commitBatch(batch)
	}
}

// commitBatch runs batch in one transaction and reports to each member.
func (s *Store) commitBatch(batch []*txJob) {
	var misses []string
	ctx := context.Background()
	results := make([]error, len(batch))
	sqlTx, err := s.wdb.BeginTx(ctx, nil)
	if err != nil {
		for _, j := range batch {
			j.done <- fmt.Errorf("sqlite: begin: %w", err)
		}
		return
	}
	solo := len(batch) == 1
	ctxTx := cachedTx{sqlTx, s.wc, &misses}
	for i, j := range batch {
		if err := j.ctx.Err(); err != nil {
			results[i] = err
			continue
		}
		results[i] = s.runMember(sqlTx, ctxTx, j, solo)
	}
	if solo && results[0] != nil {
		if rbErr := sqlTx.Rollback(); rbErr != nil && !errors.Is(rbErr, sql.ErrTxDone) {
			results[0] = errors.Join(results[0], rbErr)
		}
	} else if err := sqlTx.Commit(); err != nil {
		for i := range batch {
			if results[i] == nil {
				results[i] = fmt.Errorf("sqlite: commit: %w", err)
			}
		}
	} else {
		s.wc.commits.Add(1)
		s.batches.Add(1)
		s.members.Add(int64(len(batch)))
		for i, j := range batch {
			if results[i] == nil {
				for id := range j.sessions {
					s.hub.Notify(id)
				}
			}
		}
	}
	s.wc.warm(ctx, misses)
	if s.walSize() > s.walLimit {
		s.ckMu.Lock()
		if s.walSize() > s.walLimit {
			s.truncateWAL()
		}
		s.ckMu.Unlock()
	}
	for i, j := range batch {
		j.done <- results[i]
	}
}

// runMember runs one member's func in a savepoint (none when solo: its
// failure rolls the whole transaction back).
func (s *Store) runMember(sqlTx *sql.Tx, ctxTx cachedTx, j *txJob, solo bool) (err error) {
	j.sessions = map[string]struct{}{}
	tx := &txExecutor{executor{r: ctxTx, w: ctxTx, onEvent: func(id string) { j.sessions[id] = struct{}{} }}}
	bg := context.Background()
	if !solo {
		if _, err := sqlTx.ExecContext(bg, `SAVEPOINT member`); err != nil {
			return fmt.Errorf("sqlite: savepoint: %w", err)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			j.panicked = p
			err = fmt.Errorf("sqlite: transaction panicked: %v", p)
		}
		if solo {
			return
		}
		if err != nil {
			j.sessions = nil
			if _, rbErr := sqlTx.ExecContext(bg, `ROLLBACK TO member`); rbErr != nil {
				err = errors.Join(err, fmt.Errorf("sqlite: rollback to savepoint: %w", rbErr))
			}
		}
		if _, relErr := sqlTx.ExecContext(bg, `RELEASE member`); relErr != nil && err == nil {
			err = fmt.Errorf("sqlite: release savepoint: %w", relErr)
		}
	}()
	return j.fn(tx)
}

// GroupCounts are the group commit's counts since Open: Batches is the
// number of commits InTx made, Members the number of InTx calls they held
// (Members ÷ Batches is the mean batch size).
type GroupCounts struct{ Batches, Members int64 }

// GroupCounts returns the group commit's counts since Open.
func (s *Store) GroupCounts() GroupCounts {
	return GroupCounts{Batches: s.batches.Load(), Members: s.members.Load()}
}
