package sqlite_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/storetest"
)

// TestFollowHandsTheCommit: a Follower is handed the events of this
// process's commits (storetest.FollowCommits checks them against
// EventList), except a commit whose event references a message inserted
// by an earlier transaction, which tells it to read the log; so does a
// session's deletion.
func TestFollowHandsTheCommit(t *testing.T) {
	t.Parallel()
	st := openFile(t)
	defer st.Close()
	ctx := context.Background()
	s, err := st.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_hand", Owner: "alice", Now: storetest.T0})
	require.NoError(t, err)
	read := storetest.FollowCommits(t, st, s.ID, storetest.FollowedCommits(ctx, s.ID)...)
	require.Equal(t, []bool{false, true, false}, read)

	f, unfollow := st.Follow(s.ID)
	defer unfollow()
	require.NoError(t, st.(store.Maintainer).SessionDelete(ctx, s.ID))
	<-f.C
	evs, mustRead := f.Take()
	require.Empty(t, evs)
	require.True(t, mustRead, "a deleted session's follower reads the log")
}

// TestFollowHandsGroupMembersInOrder: members of one group commit that
// append to the same session hand their events in the order of their
// numbers, and a member rolled back hands none.
func TestFollowHandsGroupMembersInOrder(t *testing.T) {
	t.Parallel()
	st := openFile(t)
	defer st.Close()
	ctx := context.Background()
	s, err := st.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_group", Owner: "alice", Now: storetest.T0})
	require.NoError(t, err)
	f, unfollow := st.Follow(s.ID)
	defer unfollow()
	const n = 40
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = st.InTx(ctx, func(tx store.Tx) error {
				if _, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: s.ID, Name: "message_delta", Data: json.RawMessage(`{}`), Now: storetest.T0}); err != nil {
					return err
				}
				if i%4 == 0 {
					return context.Canceled
				}
				return nil
			})
		}()
	}
	wg.Wait()
	var got []int64
	deadline := time.After(10 * time.Second)
	for len(got) < n-n/4 {
		select {
		case <-f.C:
		case <-deadline:
			t.Fatalf("handed %v", got)
		}
		evs, read := f.Take()
		require.False(t, read)
		for _, ev := range evs {
			got = append(got, ev.Seq)
		}
	}
	for i, seq := range got {
		require.Equal(t, int64(i+1), seq, "in order, no gaps, none of a rolled-back member")
	}
}
