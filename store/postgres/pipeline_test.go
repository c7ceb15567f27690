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
