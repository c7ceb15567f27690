package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

func ptr[T any](v T) *T { return &v }

func exerciseRuns(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("InsertGet", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		got, err := b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, &store.Run{ID: r.ID, SessionID: r.SessionID, Agent: "default", Status: store.RunRunning,
			LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), CreatedAt: T0, UpdatedAt: T0}, got)
		act, err := b.st.RunGetActive(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, r.ID, act.ID)
	})
	t.Run("OneActivePerSession", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		_, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", Now: T0})
		require.ErrorIs(t, err, store.ErrRunActive)

		// waiting_input is active too.
		won, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		_, err = b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", Now: T0})
		require.ErrorIs(t, err, store.ErrRunActive)

		// Once it ended, a new run may start; the old one cannot come back.
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput}, To: store.RunCancelled, Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		r2, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", Now: T0})
		require.NoError(t, err)
		won, err = b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_a", LeaseUntil: T0.Add(time.Minute), Now: T0})
		require.NoError(t, err)
		require.False(t, won, "an ended run does not come back")
		act, err := b.st.RunGetActive(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, r2.ID, act.ID)
	})
	t.Run("InsertSetsSessionRunning", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		status := func() (string, time.Time) {
			t.Helper()
			s, err := b.st.SessionGet(b.ctx, r.SessionID)
			require.NoError(t, err)
			return s.Status, s.UpdatedAt
		}
		st, _ := status()
		require.Equal(t, string(store.RunRunning), st, "a session's first run")
		won, err := b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, To: store.RunCompleted, Now: T0.Add(time.Minute)})
		require.NoError(t, err)
		require.True(t, won)
		st, _ = status()
		require.Equal(t, string(store.RunCompleted), st)
		// A new run in the session: in a transaction alone, in one with
		// an event of the session, outside one.
		for i, at := range []time.Time{T0.Add(2 * time.Minute), T0.Add(3 * time.Minute), T0.Add(4 * time.Minute)} {
			var r2 *store.Run
			if i < 2 {
				require.NoError(t, b.st.InTx(b.ctx, func(tx store.Tx) error {
					var err error
					r2, err = tx.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", Now: at})
					if err != nil || i == 0 {
						return err
					}
					_, err = tx.EventAppend(b.ctx, &store.EventAppendParams{SessionID: r.SessionID, RunID: r2.ID, Name: "run_started", Data: []byte(`{}`), Now: at})
					return err
				}))
			} else {
				r2, err = b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", Now: at})
				require.NoError(t, err)
			}
			st, upd := status()
			require.Equal(t, string(store.RunRunning), st)
			require.True(t, at.Equal(upd), "updated_at %v, want %v", upd, at)
			won, err := b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r2.ID, From: []store.RunStatus{store.RunRunning}, To: store.RunCancelled, Now: at.Add(time.Second)})
			require.NoError(t, err)
			require.True(t, won)
		}
	})
	t.Run("RacingInsertsOneWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		s := b.session(t)
		wins := race(t, 20, func(i int) (bool, error) {
			_, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: s.ID, Agent: "default", Now: T0})
			if errors.Is(err, store.ErrRunActive) {
				return false, nil
			}
			return err == nil, err
		})
		require.Equal(t, 1, wins)
	})
	t.Run("Checkpoint", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		check := func(p store.RunCheckpointParams) bool {
			t.Helper()
			won, err := b.st.RunCheckpoint(b.ctx, &p)
			require.NoError(t, err)
			return won
		}
		require.False(t, check(store.RunCheckpointParams{ID: r.ID, LeaseOwner: "inst_b", Steps: ptr(1), Now: T0}), "another lease owner")
		got, err := b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, 0, got.Steps)
		require.True(t, check(store.RunCheckpointParams{ID: r.ID, LeaseOwner: "inst_a", Steps: ptr(3), InvalidStreak: ptr(2), Now: T0.Add(time.Second)}))
		require.True(t, check(store.RunCheckpointParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0.Add(2 * time.Second)}), "nil fields are kept")
		got, err = b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, got.Status)
		require.Equal(t, 3, got.Steps)
		require.Equal(t, 2, got.InvalidStreak)
		require.Equal(t, "inst_a", got.LeaseOwner, "a checkpoint keeps the lease")
		require.Equal(t, T0.Add(time.Minute), got.LeaseUntil)
		require.Equal(t, T0.Add(2*time.Second), got.UpdatedAt)
		won, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Steps: ptr(4), Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		require.False(t, check(store.RunCheckpointParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0}), "a paused run takes no checkpoint")
		got, err = b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, 4, got.Steps, "the pause writes the step count it is given")
		require.Equal(t, 2, got.InvalidStreak, "and keeps what it is not given")

		// The end of a run writes its step's counts in the same statement.
		r2 := b.run(t)
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r2.ID, LeaseOwner: "inst_b", To: store.RunCompleted, Steps: ptr(5), Now: T0})
		require.NoError(t, err)
		require.False(t, won, "another lease owner")
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r2.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: "inst_a", To: store.RunCompleted,
			Steps: ptr(5), InvalidStreak: ptr(1), Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		got, err = b.st.RunGet(b.ctx, r2.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunCompleted, got.Status)
		require.Equal(t, 5, got.Steps)
		require.Equal(t, 1, got.InvalidStreak)
	})
	// docs/design.md §4: a run that pauses or ends holds no lease; only its owner
	// pauses it; only a paused run resumes; only a live run ends, once.
	t.Run("PauseResumeFinish", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		get := func(id string) *store.Run {
			t.Helper()
			got, err := b.st.RunGet(b.ctx, id)
			require.NoError(t, err)
			return got
		}
		released := func(id string) {
			t.Helper()
			got := get(id)
			require.Equal(t, "", got.LeaseOwner, "%s releases the lease", got.Status)
			require.True(t, got.LeaseUntil.IsZero(), "%s releases the lease", got.Status)
		}
		r := b.run(t)
		won, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_b", Now: T0})
		require.NoError(t, err)
		require.False(t, won, "only the lease owner pauses")
		won, err = b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_b", LeaseUntil: T0.Add(time.Minute), Now: T0})
		require.NoError(t, err)
		require.False(t, won, "a running run does not resume")
		won, err = b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		require.Equal(t, store.RunWaitingInput, get(r.ID).Status)
		released(r.ID)
		won, err = b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0})
		require.NoError(t, err)
		require.False(t, won, "a paused run does not pause again")

		won, err = b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: "inst_b", LeaseUntil: T0.Add(time.Hour), Now: T0.Add(2 * time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		got := get(r.ID)
		require.Equal(t, store.RunRunning, got.Status)
		require.Equal(t, "inst_b", got.LeaseOwner, "the resumer holds the lease")
		require.Equal(t, T0.Add(time.Hour), got.LeaseUntil)
		require.Equal(t, T0.Add(2*time.Second), got.UpdatedAt)

		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, LeaseOwner: "inst_a", To: store.RunCompleted, Now: T0})
		require.NoError(t, err)
		require.False(t, won, "another owner's run")
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput}, To: store.RunCompleted, Now: T0})
		require.NoError(t, err)
		require.False(t, won, "not in From")
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, LeaseOwner: "inst_b", To: store.RunFailed, Error: "boom", Now: T0.Add(3 * time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		got = get(r.ID)
		require.Equal(t, store.RunFailed, got.Status)
		require.Equal(t, "boom", got.Error)
		require.Equal(t, T0.Add(3*time.Second), got.UpdatedAt)
		released(r.ID)
		won, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, To: store.RunCancelled, Now: T0})
		require.NoError(t, err)
		require.False(t, won, "an ended run stays ended")
		require.Equal(t, "boom", get(r.ID).Error)
		_, err = b.st.RunGetActive(b.ctx, r.SessionID)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, To: store.RunRunning, Now: T0})
		require.Error(t, err, "running is not an end state")

		// Every end state releases the lease, from running and from waiting_input.
		for _, to := range []store.RunStatus{store.RunCompleted, store.RunCancelled, store.RunExpired, store.RunFailed} {
			for _, pause := range []bool{false, true} {
				r := b.run(t)
				if pause {
					_, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0})
					require.NoError(t, err)
				}
				won, err := b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, To: to, Now: T0})
				require.NoError(t, err)
				require.True(t, won)
				require.Equal(t, to, get(r.ID).Status)
				released(r.ID)
				won, err = b.st.RunLease(b.ctx, &store.RunLeaseParams{ID: r.ID, Owner: "inst_c", Until: T0.Add(time.Hour), Now: T0.Add(time.Hour)})
				require.NoError(t, err)
				require.False(t, won, "an ended run is not leased")
			}
		}
	})
	t.Run("RacingTransitionsOneWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		_, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0})
		require.NoError(t, err)
		wins := race(t, 30, func(i int) (bool, error) {
			if i%2 == 0 {
				return b.st.RunFinish(b.ctx, &store.RunFinishParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput}, To: store.RunCancelled, Now: T0})
			}
			return b.st.RunResume(b.ctx, &store.RunResumeParams{ID: r.ID, LeaseOwner: b.id("inst"), LeaseUntil: T0.Add(time.Minute), Now: T0})
		})
		require.Equal(t, 1, wins)
	})
}

func exerciseLeases(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("TakeExtendExpire", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t) // inst_a until T0+1m
		lease := func(owner string, now, until time.Time) bool {
			t.Helper()
			won, err := b.st.RunLease(b.ctx, &store.RunLeaseParams{ID: r.ID, Owner: owner, Until: until, Now: now})
			require.NoError(t, err)
			return won
		}
		require.False(t, lease("inst_b", T0.Add(30*time.Second), T0.Add(2*time.Minute)), "another owner's live lease")
		require.True(t, lease("inst_a", T0.Add(30*time.Second), T0.Add(90*time.Second)), "the owner extends")
		require.False(t, lease("inst_b", T0.Add(80*time.Second), T0.Add(2*time.Minute)), "extended lease still live")

		recov, err := b.st.RunListRecoverable(b.ctx, &store.RunListRecoverableParams{Now: T0.Add(80 * time.Second)})
		require.NoError(t, err)
		require.Empty(t, recov)
		recov, err = b.st.RunListRecoverable(b.ctx, &store.RunListRecoverableParams{Now: T0.Add(91 * time.Second)})
		require.NoError(t, err)
		require.Len(t, recov, 1)
		require.Equal(t, r.ID, recov[0].ID)

		require.True(t, lease("inst_b", T0.Add(91*time.Second), T0.Add(3*time.Minute)), "an expired lease is taken over")
		require.False(t, lease("inst_a", T0.Add(92*time.Second), T0.Add(3*time.Minute)), "the old owner lost it")
		got, err := b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, "inst_b", got.LeaseOwner)
		require.Equal(t, T0.Add(3*time.Minute), got.LeaseUntil)
	})
	t.Run("ReleaseMakesRecoverableAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		// agent.Runner releases by leasing with a zero Until (shutdown).
		won, err := b.st.RunLease(b.ctx, &store.RunLeaseParams{ID: r.ID, Owner: "inst_a", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		recov, err := b.st.RunListRecoverable(b.ctx, &store.RunListRecoverableParams{Now: T0})
		require.NoError(t, err)
		require.Len(t, recov, 1)
		won, err = b.st.RunLease(b.ctx, &store.RunLeaseParams{ID: r.ID, Owner: "inst_b", Until: T0.Add(time.Minute), Now: T0})
		require.NoError(t, err)
		require.True(t, won)
	})
	t.Run("OnlyRunningRunsAreLeased", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		_, err := b.st.RunPause(b.ctx, &store.RunPauseParams{ID: r.ID, LeaseOwner: "inst_a", Now: T0})
		require.NoError(t, err)
		won, err := b.st.RunLease(b.ctx, &store.RunLeaseParams{ID: r.ID, Owner: "inst_b", Until: T0.Add(time.Minute), Now: T0})
		require.NoError(t, err)
		require.False(t, won)
		recov, err := b.st.RunListRecoverable(b.ctx, &store.RunListRecoverableParams{Now: T0.Add(time.Hour)})
		require.NoError(t, err)
		require.Empty(t, recov, "a paused run holds no lease and is not recovered")
	})
	t.Run("RacingTakeoverOneWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		now := T0.Add(2 * time.Minute) // inst_a's lease has expired
		wins := race(t, 30, func(i int) (bool, error) {
			return b.st.RunLease(b.ctx, &store.RunLeaseParams{ID: r.ID, Owner: b.id("inst"), Until: now.Add(time.Minute), Now: now})
		})
		require.Equal(t, 1, wins)
	})
}
