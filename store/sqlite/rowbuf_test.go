package sqlite

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

func appendN(t *testing.T, ex store.Executor, session string, n int) []int64 {
	t.Helper()
	var seqs []int64
	for range n {
		ev, err := ex.EventAppend(context.Background(), &store.EventAppendParams{SessionID: session, Name: "done", Data: []byte(`{}`), Now: time.Now()})
		require.NoError(t, err)
		seqs = append(seqs, ev.Seq)
	}
	return seqs
}

func feedSeqs(t *testing.T, s *Store, owner string) []int64 {
	t.Helper()
	fs, err := s.FeedList(context.Background(), &store.FeedListParams{Owner: owner})
	require.NoError(t, err)
	var out []int64
	for _, f := range fs {
		out = append(out, f.Seq)
	}
	return out
}

// Two stores (two processes) append to one session and one owner's feed in
// turns: each takes up the numbers where the other left them, although
// each writer keeps the numbers it knows between its commits.
func TestHeldRowsNumbersAcrossProcesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := MigratedPath(t)
	a, err := Open(ctx, path, nil)
	require.NoError(t, err)
	defer a.Close()
	b, err := Open(ctx, path, nil)
	require.NoError(t, err)
	defer b.Close()
	_, err = a.SessionCreate(ctx, &store.SessionCreateParams{ID: "s1", Owner: "o", Now: time.Now()})
	require.NoError(t, err)
	require.Equal(t, []int64{1, 2}, appendN(t, a, "s1", 2))
	require.Equal(t, []int64{3}, appendN(t, b, "s1", 1))
	require.Equal(t, []int64{4, 5}, appendN(t, a, "s1", 2))
	require.Equal(t, []int64{6}, appendN(t, b, "s1", 1))
	require.Equal(t, []int64{1, 2, 3, 4, 5, 6}, feedSeqs(t, a, "o"))

	// This store's own writes outside the group commit count too: the
	// session is deleted and made again, and numbering starts over.
	require.NoError(t, a.SessionDelete(ctx, "s1"))
	_, err = a.SessionCreate(ctx, &store.SessionCreateParams{ID: "s1", Owner: "o", Now: time.Now()})
	require.NoError(t, err)
	require.Equal(t, []int64{1}, appendN(t, a, "s1", 1))
	require.Equal(t, []int64{7}, feedSeqs(t, a, "o"), "the feed's numbers are never given twice")
}

// A transaction that fails takes its numbers with it; rows held back are
// written before any statement of the transaction that reads their table.
func TestHeldRowsRollbackAndReads(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	_, err := s.SessionCreate(ctx, &store.SessionCreateParams{ID: "s1", Owner: "o", Now: time.Now()})
	require.NoError(t, err)
	require.Equal(t, []int64{1}, appendN(t, s, "s1", 1))
	boom := errors.New("boom")
	err = s.InTx(ctx, func(tx store.Tx) error {
		require.Equal(t, []int64{2, 3}, appendN(t, tx, "s1", 2))
		evs, err := tx.EventList(ctx, &store.EventListParams{SessionID: "s1"})
		require.NoError(t, err)
		require.Len(t, evs, 3, "a read in the transaction sees its held rows")
		require.NoError(t, tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: "s1", Kind: "k", Data: []byte(`{}`), Now: time.Now()}))
		tr, err := tx.TraceList(ctx, "s1")
		require.NoError(t, err)
		require.Len(t, tr, 1)
		return boom
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, []int64{2}, appendN(t, s, "s1", 1), "the failed transaction's numbers are given again")
	tr, err := s.TraceList(ctx, "s1")
	require.NoError(t, err)
	require.Empty(t, tr)
	require.Equal(t, []int64{1, 2}, feedSeqs(t, s, "o"))

	_, err = s.EventAppend(ctx, &store.EventAppendParams{SessionID: "nope", Name: "done", Data: []byte(`{}`), Now: time.Now()})
	require.ErrorIs(t, err, store.ErrNotFound)
}

// In one batch a member that fails loses its numbers and its rows while
// the members before and after it, appending to the same session, keep
// theirs, numbered as if the failed one never ran.
func TestHeldRowsBatchMemberFails(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	_, err := s.SessionCreate(ctx, &store.SessionCreateParams{ID: "s1", Owner: "o", Now: time.Now()})
	require.NoError(t, err)
	require.Equal(t, []int64{1}, appendN(t, s, "s1", 1))
	release := make(chan struct{})
	held := holdWriter(t, s, release)
	before := s.GroupCounts()
	boom := errors.New("boom")
	const n = 3
	errs := make([]error, n)
	got := make([][]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.InTx(ctx, func(tx store.Tx) error {
				for range 2 {
					ev, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "s1", Name: "done", Data: []byte(`{}`), Now: time.Now()})
					if err != nil {
						return err
					}
					got[i] = append(got[i], ev.Seq)
				}
				if i == 1 {
					return boom
				}
				return nil
			})
		}()
		waitQueued(t, s, int64(i+1))
	}
	close(release)
	require.NoError(t, <-held)
	wg.Wait()
	require.Equal(t, int64(2), s.GroupCounts().Batches-before.Batches, "the held transaction, then one batch")
	require.NoError(t, errs[0])
	require.ErrorIs(t, errs[1], boom)
	require.NoError(t, errs[2])
	require.Equal(t, []int64{2, 3}, got[0])
	require.Equal(t, []int64{4, 5}, got[1])
	require.Equal(t, []int64{4, 5}, got[2])
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "s1"})
	require.NoError(t, err)
	require.Len(t, evs, 5)
	require.Equal(t, []int64{1, 2, 3, 4, 5}, feedSeqs(t, s, "o"))
	require.Equal(t, []int64{6}, appendN(t, s, "s1", 1))
}
