package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

func exerciseMCPTasks(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("InsertGetCancel", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Hour))
		got, err := b.st.MCPTaskInsert(b.ctx, &store.MCPTaskInsertParams{ID: "task_1", Owner: "alice", SessionID: r.SessionID,
			RequestID: it.ID, Protocol: "2025-11-25", TTL: 90 * time.Minute, Now: T0})
		require.NoError(t, err)
		want := &store.MCPTask{ID: "task_1", Owner: "alice", SessionID: r.SessionID, RequestID: it.ID, Protocol: "2025-11-25",
			TTL: 90 * time.Minute, CreatedAt: T0}
		require.Equal(t, want, got)
		read, err := b.st.MCPTaskGet(b.ctx, "task_1")
		require.NoError(t, err)
		require.Equal(t, want, read, "read back as inserted")

		_, err = b.st.MCPTaskInsert(b.ctx, &store.MCPTaskInsertParams{ID: "task_1", Owner: "bob", SessionID: r.SessionID,
			RequestID: it.ID, Protocol: "extension", Now: T0})
		require.ErrorIs(t, err, store.ErrDuplicate)
		_, err = b.st.MCPTaskGet(b.ctx, "task_nope")
		require.ErrorIs(t, err, store.ErrNotFound)

		wins := race(t, 8, func(i int) (bool, error) {
			return b.st.MCPTaskCancel(b.ctx, &store.MCPTaskCancelParams{ID: "task_1", Now: T0.Add(time.Duration(i+1) * time.Second)})
		})
		require.Equal(t, 1, wins, "a task is cancelled once")
		read, err = b.st.MCPTaskGet(b.ctx, "task_1")
		require.NoError(t, err)
		require.False(t, read.CancelledAt.IsZero())
		require.True(t, read.CancelledAt.After(T0))
		won, err := b.st.MCPTaskCancel(b.ctx, &store.MCPTaskCancelParams{ID: "task_nope", Now: T0})
		require.NoError(t, err)
		require.False(t, won, "no such task")
	})

	t.Run("ListPagesOneOwner", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Hour))
		// Two tasks share a creation time: the id orders them.
		for i, id := range []string{"task_a", "task_b", "task_c", "task_d"} {
			at := T0.Add(time.Duration(min(i, 2)) * time.Second)
			_, err := b.st.MCPTaskInsert(b.ctx, &store.MCPTaskInsertParams{ID: id, Owner: "alice", SessionID: r.SessionID,
				RequestID: it.ID, Protocol: "2025-11-25", Now: at})
			require.NoError(t, err)
		}
		_, err := b.st.MCPTaskInsert(b.ctx, &store.MCPTaskInsertParams{ID: "task_bob", Owner: "bob", SessionID: r.SessionID,
			RequestID: it.ID, Protocol: "2025-11-25", Now: T0.Add(time.Minute)})
		require.NoError(t, err)

		var ids []string
		p := &store.MCPTaskListParams{Owner: "alice", Limit: 3}
		for {
			page, err := b.st.MCPTaskList(b.ctx, p)
			require.NoError(t, err)
			for _, tk := range page {
				ids = append(ids, tk.ID)
			}
			if len(page) < p.Limit {
				break
			}
			last := page[len(page)-1]
			p = &store.MCPTaskListParams{Owner: "alice", Limit: 3, Before: last.CreatedAt, BeforeID: last.ID}
		}
		require.Equal(t, []string{"task_d", "task_c", "task_b", "task_a"}, ids, "newest first, each once, never bob's")
	})

	t.Run("GoWithTheirSession", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		m, ok := b.st.(store.Maintainer)
		if !ok {
			t.Skip("the driver has no Maintainer")
		}
		r := b.run(t)
		it := b.ask(t, r, T0.Add(time.Hour))
		_, err := b.st.MCPTaskInsert(b.ctx, &store.MCPTaskInsertParams{ID: "task_gone", Owner: "alice", SessionID: r.SessionID,
			RequestID: it.ID, Protocol: "extension", Now: T0})
		require.NoError(t, err)
		ok, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: "inst_a", To: store.RunCompleted, Now: T0})
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, m.SessionDelete(b.ctx, r.SessionID))
		_, err = b.st.MCPTaskGet(b.ctx, "task_gone")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}
