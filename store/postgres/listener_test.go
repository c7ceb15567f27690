package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

type testBundle struct {
	ctx     context.Context
	url     string
	channel string
	a, b    *postgres.Store // two "replicas" on one schema
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	url := pgtest.Schema(t)
	var r [4]byte
	_, _ = rand.Read(r[:])
	channel := "luban_test_" + hex.EncodeToString(r[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	open := func() *postgres.Store {
		st, err := postgres.Open(ctx, url, &postgres.Options{Channel: channel, ReconnectDelay: 20 * time.Millisecond, MaxConns: 4})
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		return st
	}
	return &testBundle{ctx: ctx, url: url, channel: channel, a: open(), b: open()}
}

func waitWake(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("no wake-up: %s", what)
	}
}

func TestCrossReplicaWake(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := time.Now()
	_, err := b.a.SessionCreate(b.ctx, &store.SessionCreateParams{ID: "sess_1", Owner: "alice", Now: now})
	require.NoError(t, err)
	wakeA, unsubscribe := b.a.Subscribe("sess_1")
	defer unsubscribe()

	// An event committed by replica B wakes a subscriber of replica A.
	err = b.b.InTx(b.ctx, func(tx store.Tx) error {
		_, err := tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: "sess_1", Name: "message", Data: json.RawMessage(`{}`), Now: now})
		return err
	})
	require.NoError(t, err)
	waitWake(t, wakeA, "event committed on the other replica (InTx)")
	_, err = b.b.EventAppend(b.ctx, &store.EventAppendParams{SessionID: "sess_1", Name: "message_delta", Data: json.RawMessage(`{}`), Now: now})
	require.NoError(t, err)
	waitWake(t, wakeA, "event appended on the other replica")
	evs, err := b.a.EventList(b.ctx, &store.EventListParams{SessionID: "sess_1"})
	require.NoError(t, err)
	require.Len(t, evs, 2)
}

// A session deleted on one replica wakes its subscribers on the other, so
// an open stream there ends (Runner.Events finds the session gone).
func TestCrossReplicaDeleteWakes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := b.a.SessionCreate(b.ctx, &store.SessionCreateParams{ID: "sess_1", Owner: "alice", Now: time.Now()})
	require.NoError(t, err)
	wakeA, unsubscribe := b.a.Subscribe("sess_1")
	defer unsubscribe()
	require.NoError(t, b.b.SessionDelete(b.ctx, "sess_1"))
	waitWake(t, wakeA, "session deleted on the other replica")
	_, err = b.a.SessionGet(b.ctx, "sess_1")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestListenerReconnectWakesEverySubscriber(t *testing.T) {
	t.Parallel()
	b := setup(t)
	now := time.Now()
	_, err := b.a.SessionCreate(b.ctx, &store.SessionCreateParams{ID: "sess_1", Owner: "alice", Now: now})
	require.NoError(t, err)
	wake1, unsub1 := b.a.Subscribe("sess_1")
	defer unsub1()
	wake2, unsub2 := b.a.Subscribe("sess_2")
	defer unsub2()
	require.True(t, b.a.Listening())

	// Kill both replicas' LISTEN connections from the server side.
	conn, err := pgx.Connect(b.ctx, b.url)
	require.NoError(t, err)
	defer conn.Close(b.ctx)
	var killed int
	err = conn.QueryRow(b.ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1) k`,
		"LISTEN "+pgx.Identifier{b.channel}.Sanitize()).Scan(&killed)
	require.NoError(t, err)
	require.Equal(t, 2, killed)

	// While A's listener was down, B committed an event; A's subscribers
	// are woken when the listener is back, whatever session they follow.
	_, err = b.b.EventAppend(b.ctx, &store.EventAppendParams{SessionID: "sess_1", Name: "message", Data: json.RawMessage(`{}`), Now: now})
	require.NoError(t, err)
	waitWake(t, wake1, "sess_1 after reconnect")
	waitWake(t, wake2, "sess_2 after reconnect (no event of its own)")

	// And live notifications flow again.
	for len(wake1) > 0 {
		<-wake1
	}
	_, err = b.b.EventAppend(b.ctx, &store.EventAppendParams{SessionID: "sess_1", Name: "message", Data: json.RawMessage(`{}`), Now: now})
	require.NoError(t, err)
	waitWake(t, wake1, "sess_1 after the listener came back")
	evs, err := b.a.EventList(b.ctx, &store.EventListParams{SessionID: "sess_1"})
	require.NoError(t, err)
	require.Len(t, evs, 2)
}

func TestMigrationsOnceWhenReplicasStartTogether(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			st, err := postgres.Open(ctx, url, nil)
			if err == nil {
				err = st.Close()
			}
			errs <- err
		}()
	}
	for i := 0; i < 3; i++ {
		require.NoError(t, <-errs)
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := postgres.Open(ctx, "postgres://%zz", nil)
	require.ErrorContains(t, err, "parse url")
	pgtest.Skip(t)
	_, err = postgres.Open(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=5", nil)
	require.ErrorContains(t, err, "connect")
}
