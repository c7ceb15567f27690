// Package storetest is the conformance suite of the store.Store contract
// (an interface with two implementations gets one suite both run): every
// driver runs Exercise. SQLite always runs it;
// PostgreSQL runs it whenever LUBAN_TEST_POSTGRES is set.
//
// The cases are split by area (sessions, runs and leases, messages,
// interactions, events and subscriptions, audit and trace). Races are real:
// goroutines hit the same rows at once and exactly one conditional write must
// win.
package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// Exercise runs the conformance suite. newStore returns a fresh, empty store
// for one test (its own file, schema or database); Exercise closes it when
// that test ends. Every case runs in parallel.
func Exercise(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("Sessions", func(t *testing.T) { t.Parallel(); exerciseSessions(t, newStore) })
	t.Run("Runs", func(t *testing.T) { t.Parallel(); exerciseRuns(t, newStore) })
	t.Run("Leases", func(t *testing.T) { t.Parallel(); exerciseLeases(t, newStore) })
	t.Run("Messages", func(t *testing.T) { t.Parallel(); exerciseMessages(t, newStore) })
	t.Run("Interactions", func(t *testing.T) { t.Parallel(); exerciseInteractions(t, newStore) })
	t.Run("ReceiptSignature", func(t *testing.T) { exerciseReceiptSignature(t, newStore) })
	t.Run("Deadlines", func(t *testing.T) { t.Parallel(); exerciseDeadlines(t, newStore) })
	t.Run("Events", func(t *testing.T) { t.Parallel(); exerciseEvents(t, newStore) })
	t.Run("AuditTrace", func(t *testing.T) { t.Parallel(); exerciseAuditTrace(t, newStore) })
	t.Run("Text", func(t *testing.T) { t.Parallel(); exerciseText(t, newStore) })
	t.Run("Composite", func(t *testing.T) { t.Parallel(); exerciseComposite(t, newStore) })
	t.Run("MCPTasks", func(t *testing.T) { t.Parallel(); exerciseMCPTasks(t, newStore) })
}

// T0 is the fixed clock of the suite: microseconds are set so that a driver
// that drops them fails, nanoseconds are not (no driver keeps them).
var T0 = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// testBundle is what one case works with.
type testBundle struct {
	ctx context.Context
	st  store.Store
	n   *atomic.Int64
}

func setup(t *testing.T, newStore func(t *testing.T) store.Store) *testBundle {
	t.Helper()
	st := newStore(t)
	t.Cleanup(func() { require.NoError(t, st.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &testBundle{ctx: ctx, st: st, n: &atomic.Int64{}}
}

// id returns a unique id with prefix within the bundle.
func (b *testBundle) id(prefix string) string {
	return fmt.Sprintf("%s_%d", prefix, b.n.Add(1))
}

// session creates a session owned by "alice".
func (b *testBundle) session(t *testing.T) *store.Session {
	t.Helper()
	s, err := b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: b.id("sess"), Owner: "alice", Title: "t", Now: T0})
	require.NoError(t, err)
	return s
}

// run inserts a running run in a new session, leased to "inst_a" for a minute.
func (b *testBundle) run(t *testing.T) *store.Run {
	t.Helper()
	s := b.session(t)
	r, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: s.ID, Agent: "default",
		LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), Now: T0})
	require.NoError(t, err)
	return r
}

// race runs fn in n goroutines released at the same moment and returns how
// many returned true; errors fail the test.
func race(t *testing.T, n int, fn func(i int) (bool, error)) int {
	t.Helper()
	start := make(chan struct{})
	type res struct {
		won bool
		err error
	}
	out := make(chan res, n)
	for i := 0; i < n; i++ {
		go func() {
			<-start
			w, err := fn(i)
			out <- res{w, err}
		}()
	}
	close(start)
	wins := 0
	for i := 0; i < n; i++ {
		r := <-out
		require.NoError(t, r.err)
		if r.won {
			wins++
		}
	}
	return wins
}

func exerciseSessions(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("CreateGetList", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s1, err := b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: "sess_old", Owner: "alice", Title: "旧的", Now: T0})
		require.NoError(t, err)
		require.Equal(t, "idle", s1.Status)
		_, err = b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: "sess_new", Owner: "alice", Title: "new", Agent: "writer", Now: T0.Add(time.Second)})
		require.NoError(t, err)
		_, err = b.st.SessionCreate(b.ctx, &store.SessionCreateParams{ID: "sess_bob", Owner: "bob", Title: "bob's", Status: "running", Now: T0.Add(2 * time.Second)})
		require.NoError(t, err)
		bob, err := b.st.SessionGet(b.ctx, "sess_bob")
		require.NoError(t, err)
		require.Equal(t, "running", bob.Status, "a session created with a status")

		got, err := b.st.SessionGet(b.ctx, "sess_old")
		require.NoError(t, err)
		require.Equal(t, &store.Session{ID: "sess_old", Owner: "alice", Title: "旧的", Status: "idle", CreatedAt: T0, UpdatedAt: T0}, got)

		list, err := b.st.SessionList(b.ctx, &store.SessionListParams{Owner: "alice"})
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, "sess_new", list[0].ID, "newest first")
		require.Equal(t, "writer", list[0].Agent, "a session keeps its agent")
		require.Equal(t, "", list[1].Agent)
		require.Equal(t, "sess_old", list[1].ID)

		list, err = b.st.SessionList(b.ctx, &store.SessionListParams{Owner: "alice", Limit: 1})
		require.NoError(t, err)
		require.Len(t, list, 1)

		require.NoError(t, b.st.SessionSetStatus(b.ctx, &store.SessionSetStatusParams{ID: "sess_old", Status: "waiting_input", Now: T0.Add(time.Hour)}))
		list, err = b.st.SessionList(b.ctx, &store.SessionListParams{Owner: "alice"})
		require.NoError(t, err)
		require.Equal(t, "sess_old", list[0].ID, "a status change moves the session up")
		require.Equal(t, "waiting_input", list[0].Status)
		require.Equal(t, T0.Add(time.Hour), list[0].UpdatedAt)
	})
	t.Run("NotFound", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		_, err := b.st.SessionGet(b.ctx, "sess_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.RunGet(b.ctx, "run_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.RunGetActive(b.ctx, "sess_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.InteractionGet(b.ctx, "ask_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.InteractionGetPending(b.ctx, "sess_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.InteractionGetLastResolved(b.ctx, "sess_missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.InteractionGetByToolCall(b.ctx, "sess_missing", "call_1")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.EventAppend(b.ctx, &store.EventAppendParams{SessionID: "sess_missing", Name: "x", Data: []byte(`{}`), Now: T0})
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
