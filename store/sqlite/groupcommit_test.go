package sqlite

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// holdWriter runs a transaction that keeps the writer until release is
// closed, and returns once it holds it; then queue InTx calls behind it and
// wait for queued to see them, so they share the next commit.
func holdWriter(t *testing.T, s *Store, release <-chan struct{}) <-chan error {
	t.Helper()
	holding := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- s.InTx(context.Background(), func(tx store.Tx) error {
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	return done
}

func waitQueued(t *testing.T, s *Store, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.queued.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d of %d transactions queued", s.queued.Load(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := Open(context.Background(), MigratedPath(t), nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// A batch member that fails is rolled back alone: its session and event
// are gone, the others' are committed in the same commit, each caller gets
// its own result, and only the committed members' sessions are woken.
func TestGroupCommitFailureIsolation(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	const n = 6
	release := make(chan struct{})
	held := holdWriter(t, s, release)
	before := s.GroupCounts()
	wakes := make([]<-chan struct{}, n)
	for i := range n {
		w, unsub := s.Subscribe(fmt.Sprintf("sess_%d", i))
		defer unsub()
		wakes[i] = w
	}
	boom := errors.New("member 3 fails")
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.InTx(ctx, func(tx store.Tx) error {
				id := fmt.Sprintf("sess_%d", i)
				if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: id, Owner: "o", Now: time.Now()}); err != nil {
					return err
				}
				if _, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: id, Name: "session", Data: []byte(`{}`), Now: time.Now()}); err != nil {
					return err
				}
				if i == 3 {
					return boom
				}
				return nil
			})
		}()
	}
	waitQueued(t, s, n)
	close(release)
	require.NoError(t, <-held)
	wg.Wait()
	after := s.GroupCounts()
	require.Equal(t, int64(1), after.Batches-before.Batches-1, "the queued members shared one commit")
	require.Equal(t, int64(n), after.Members-before.Members-1)
	for i := range n {
		id := fmt.Sprintf("sess_%d", i)
		sess, err := s.SessionGet(ctx, id)
		if i == 3 {
			require.ErrorIs(t, errs[i], boom)
			require.ErrorIs(t, err, store.ErrNotFound, "the failed member's writes are rolled back")
			select {
			case <-wakes[i]:
				t.Fatal("a rolled-back member's event was announced")
			default:
			}
			continue
		}
		require.NoError(t, errs[i])
		require.NoError(t, err)
		require.Equal(t, int64(1), sess.LastSeq)
		select {
		case <-wakes[i]:
		default:
			t.Fatalf("%s was not woken after the commit", id)
		}
	}
}

// Conditional writes keep their meaning inside a batch: members run one
// after another, so of several answers to one pending question exactly one
// wins, and a member that sees it lost and returns an error is rolled back
// without touching the winner.
func TestGroupCommitConditionalWrites(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	ctx := context.Background()
	now := time.Now()
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess", Owner: "o", Now: now}); err != nil {
			return err
		}
		_, err := tx.InteractionInsert(ctx, &store.InteractionInsertParams{ID: "ask_1", SessionID: "sess", RunID: "run", ToolCallID: "call",
			Tool: "ask_user", Request: []byte(`{}`), Now: now, ExpiresAt: now.Add(time.Hour)})
		return err
	}))
	const n = 5
	release := make(chan struct{})
	held := holdWriter(t, s, release)
	before := s.GroupCounts()
	lost := errors.New("lost")
	won := make([]bool, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.InTx(ctx, func(tx store.Tx) error {
				ok, err := tx.InteractionResolve(ctx, &store.InteractionResolveParams{ID: "ask_1", SessionID: "sess", Status: "answered",
					Answer: []byte(fmt.Sprintf(`{"by":%d}`, i)), Now: now})
				if err != nil {
					return err
				}
				won[i] = ok
				if _, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess", Name: "user_input_resolved", Data: []byte(fmt.Sprintf(`{"by":%d}`, i)), Now: now}); err != nil {
					return err
				}
				if !ok {
					return lost
				}
				return nil
			})
		}()
	}
	waitQueued(t, s, n)
	close(release)
	require.NoError(t, <-held)
	wg.Wait()
	require.Equal(t, int64(1), s.GroupCounts().Batches-before.Batches-1, "the answers shared one commit")
	winner := -1
	for i := range n {
		if won[i] {
			require.Equal(t, -1, winner, "two answers won")
			winner = i
			require.NoError(t, errs[i])
		} else {
			require.ErrorIs(t, errs[i], lost)
		}
	}
	require.NotEqual(t, -1, winner)
	it, err := s.InteractionGet(ctx, "ask_1")
	require.NoError(t, err)
	require.JSONEq(t, fmt.Sprintf(`{"by":%d}`, winner), string(it.Answer))
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess"})
	require.NoError(t, err)
	require.Len(t, evs, 1, "only the winner's event is kept")
	require.Equal(t, int64(1), evs[0].Seq)
	require.JSONEq(t, fmt.Sprintf(`{"by":%d}`, winner), string(evs[0].Data))
}

// A cancelled caller's transaction in a batch neither runs nor interrupts
// the others.
func TestGroupCommitCancelledMember(t *testing.T) {
	t.Parallel()
	s := openTemp(t)
	release := make(chan struct{})
	held := holdWriter(t, s, release)
	cctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{}, 1)
	errc := make(chan error, 2)
	go func() {
		errc <- s.InTx(cctx, func(tx store.Tx) error { ran <- struct{}{}; return nil })
	}()
	go func() {
		errc <- s.InTx(context.Background(), func(tx store.Tx) error {
			_, err := tx.SessionCreate(context.Background(), &store.SessionCreateParams{ID: "kept", Owner: "o", Now: time.Now()})
			return err
		})
	}()
	waitQueued(t, s, 2)
	cancel()
	close(release)
	require.NoError(t, <-held)
	e1, e2 := <-errc, <-errc
	require.True(t, (errors.Is(e1, context.Canceled) && e2 == nil) || (errors.Is(e2, context.Canceled) && e1 == nil), "%v, %v", e1, e2)
	require.Empty(t, ran)
	_, err := s.SessionGet(context.Background(), "kept")
	require.NoError(t, err)
}
