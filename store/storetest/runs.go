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
		won, err := b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, To: store.RunWaitingInput, Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		_, err = b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", Now: T0})
		require.ErrorIs(t, err, store.ErrRunActive)

		// Once it ended, a new run may start; the old one cannot come back.
		won, err = b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput}, To: store.RunCancelled, Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		r2, err := b.st.RunInsert(b.ctx, &store.RunInsertParams{ID: b.id("run"), SessionID: r.SessionID, Agent: "default", Now: T0})
		require.NoError(t, err)
		_, err = b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, To: store.RunRunning, Now: T0})
		require.ErrorIs(t, err, store.ErrRunActive)
		act, err := b.st.RunGetActive(b.ctx, r.SessionID)
		require.NoError(t, err)
		require.Equal(t, r2.ID, act.ID)
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
	t.Run("ConditionalUpdate", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		// Wrong from-state: nothing changes.
		won, err := b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput}, To: store.RunCompleted, Now: T0})
		require.NoError(t, err)
		require.False(t, won)
		// Wrong lease owner: nothing changes.
		won, err = b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: "inst_b", To: store.RunRunning, Steps: ptr(1), Now: T0})
		require.NoError(t, err)
		require.False(t, won)
		got, err := b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunRunning, got.Status)
		require.Equal(t, 0, got.Steps)
		// The owner's checkpoint: steps and streak written, lease kept.
		won, err = b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, LeaseOwner: "inst_a", To: store.RunRunning,
			Steps: ptr(3), InvalidStreak: ptr(2), Now: T0.Add(time.Second)})
		require.NoError(t, err)
		require.True(t, won)
		got, err = b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, 3, got.Steps)
		require.Equal(t, 2, got.InvalidStreak)
		require.Equal(t, "inst_a", got.LeaseOwner)
		require.Equal(t, T0.Add(time.Second), got.UpdatedAt)
		// Pausing releases the lease.
		won, err = b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, To: store.RunWaitingInput, Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		got, err = b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, "", got.LeaseOwner)
		require.True(t, got.LeaseUntil.IsZero())
		// Failing stores the error; a terminal run stays terminal.
		won, err = b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput, store.RunRunning}, To: store.RunFailed, Error: "boom", Now: T0})
		require.NoError(t, err)
		require.True(t, won)
		won, err = b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput, store.RunRunning}, To: store.RunCancelled, Now: T0})
		require.NoError(t, err)
		require.False(t, won)
		got, err = b.st.RunGet(b.ctx, r.ID)
		require.NoError(t, err)
		require.Equal(t, store.RunFailed, got.Status)
		require.Equal(t, "boom", got.Error)
		_, err = b.st.RunGetActive(b.ctx, r.SessionID)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
	t.Run("RacingTransitionsOneWins", func(t *testing.T) {
		t.Parallel()
		b := setup(t, newStore)
		r := b.run(t)
		_, err := b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, To: store.RunWaitingInput, Now: T0})
		require.NoError(t, err)
		wins := race(t, 30, func(i int) (bool, error) {
			return b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunWaitingInput}, To: store.RunRunning, Now: T0})
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
		_, err := b.st.RunUpdate(b.ctx, &store.RunUpdateParams{ID: r.ID, From: []store.RunStatus{store.RunRunning}, To: store.RunWaitingInput, Now: T0})
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
