package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// Queued writes run in order before the statement they ride with, cost no
// round trip of their own, and a failing one fails the transaction: nothing
// of it is committed.
func TestPipelinedWrites(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), pgtest.Schema(t), nil)
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	_, err = s.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess", Owner: "o", Now: now})
	require.NoError(t, err)

	var trips int64
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		before := s.RoundTrips()
		for range 3 {
			if err := tx.TraceInsert(ctx, &store.TraceInsertParams{SessionID: "sess", Kind: "model_call", Data: []byte(`{"a":"\u0000"}`), Now: now}); err != nil {
				return err
			}
		}
		if err := tx.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: "sess", Status: "running", Now: now}); err != nil {
			return err
		}
		require.Equal(t, before, s.RoundTrips(), "queued writes wait for the next statement")
		// A read that needs an answer sees the queued writes.
		got, err := tx.TraceList(ctx, "sess")
		require.NoError(t, err)
		require.Len(t, got, 3)
		require.Equal(t, `{"a":"\u0000"}`, string(got[0].Data))
		sess, err := tx.SessionGet(ctx, "sess")
		require.NoError(t, err)
		require.Equal(t, "running", sess.Status)
		trips = s.RoundTrips() - before
		return nil
	}))
	require.LessOrEqual(t, trips, int64(3), "the queue went in one batch before the reads")

	// A queued write that fails fails the transaction it is in.
	boom := s.InTx(ctx, func(tx store.Tx) error {
		if err := tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess", RequestID: "ask", Action: "requested", Now: now}); err != nil {
			return err
		}
		tx.(*txExecutor).q.(*pipeTx).later(`INSERT INTO no_such_table VALUES (1)`)
		_, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess", Name: "message", Data: []byte(`{}`), Now: now})
		return err
	})
	require.Error(t, boom)
	require.False(t, errors.Is(boom, store.ErrNotFound))
	audit, err := s.AuditList(ctx, "sess")
	require.NoError(t, err)
	require.Empty(t, audit, "nothing of the failed transaction is kept")
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess"})
	require.NoError(t, err)
	require.Empty(t, evs)

	// A queued write at the end goes with the commit.
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		return tx.AuditInsert(ctx, &store.AuditInsertParams{SessionID: "sess", RequestID: "ask", Action: "answered", Now: now})
	}))
	audit, err = s.AuditList(ctx, "sess")
	require.NoError(t, err)
	require.Len(t, audit, 1)
}

// A transaction that creates a session knows its event numbers: the
// session, its events and the NOTIFY go to the server in one round trip,
// a pipeline the server runs as one implicit transaction (no BEGIN, no
// COMMIT), and the events are numbered 1, 2, 3. A run
// write tells the transaction its session's last number, so the events
// after it ride with the commit too.
func TestPipelinedTransaction(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), pgtest.Schema(t), nil)
	require.NoError(t, err)
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	before, stmts := s.RoundTrips(), s.Statements()
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess", Owner: "o", Now: now}); err != nil {
			return err
		}
		if _, err := tx.RunInsert(ctx, &store.RunInsertParams{ID: "run0", SessionID: "sess", LeaseOwner: "me", Now: now}); err != nil {
			return err
		}
		for i := range 3 {
			ev, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess", Name: "message", Data: []byte(`{}`), Now: now})
			if err != nil {
				return err
			}
			require.Equal(t, int64(i+1), ev.Seq)
		}
		require.Equal(t, before, s.RoundTrips(), "nothing sent before the commit")
		return nil
	}))
	require.Equal(t, int64(1), s.RoundTrips()-before, "the writes and NOTIFY in one batch")
	require.Equal(t, int64(4), s.Statements()-stmts, "session, run, the three events in one statement, NOTIFY")
	// Such a transaction keeps nothing when one of its statements fails.
	before = s.RoundTrips()
	err = s.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess3", Owner: "o", Now: now}); err != nil {
			return err
		}
		_, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess", Owner: "o", Now: now})
		return err
	})
	require.Error(t, err, "an id taken")
	require.Equal(t, int64(1), s.RoundTrips()-before, "one batch")
	_, err = s.SessionGet(ctx, "sess3")
	require.ErrorIs(t, err, store.ErrNotFound, "the first insert rolled back with the second")
	// A second run of the new session is asked for, and conflicts.
	err = s.InTx(ctx, func(tx store.Tx) error {
		if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess2", Owner: "o", Now: now}); err != nil {
			return err
		}
		if _, err := tx.RunInsert(ctx, &store.RunInsertParams{ID: "run1", SessionID: "sess2", LeaseOwner: "me", Now: now}); err != nil {
			return err
		}
		_, err := tx.RunInsert(ctx, &store.RunInsertParams{ID: "run2", SessionID: "sess2", LeaseOwner: "me", Now: now})
		return err
	})
	require.ErrorIs(t, err, store.ErrRunActive)
	_, err = s.SessionGet(ctx, "sess2")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.RunFinish(ctx, &store.RunFinishParams{ID: "run0", To: store.RunCompleted, Now: now})
	require.NoError(t, err)
	evs, err := s.EventList(ctx, &store.EventListParams{SessionID: "sess"})
	require.NoError(t, err)
	require.Len(t, evs, 3)
	require.Equal(t, int64(3), evs[2].Seq)

	_, err = s.RunInsert(ctx, &store.RunInsertParams{ID: "run", SessionID: "sess", LeaseOwner: "me", Now: now})
	require.NoError(t, err)
	before = s.RoundTrips()
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.RunPause(ctx, &store.RunPauseParams{ID: "run", LeaseOwner: "me", Now: now})
		require.NoError(t, err)
		require.True(t, won)
		ev, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess", Name: "message", Data: []byte(`{}`), Now: now})
		require.NoError(t, err)
		require.Equal(t, int64(4), ev.Seq)
		return nil
	}))
	require.Equal(t, int64(2), s.RoundTrips()-before, "the run write, then the event with the commit")
	evs, err = s.EventList(ctx, &store.EventListParams{SessionID: "sess", AfterSeq: 3})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, int64(4), evs[0].Seq)

	// A run write that loses reports it, and the transaction goes on.
	require.NoError(t, s.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.RunPause(ctx, &store.RunPauseParams{ID: "run", LeaseOwner: "me", Now: now})
		require.NoError(t, err)
		require.False(t, won)
		_, err = tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess", Name: "message", Data: []byte(`{}`), Now: now})
		return err
	}))
	evs, err = s.EventList(ctx, &store.EventListParams{SessionID: "sess", AfterSeq: 4})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, int64(5), evs[0].Seq)
}
