package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// ExerciseInstances checks HoldInstance and InstanceAlive (docs/design.md
// §23): open returns a new Store on one database each call (two processes
// on one SQLite file, two replicas on one PostgreSQL database). An id is
// alive for its own Store and for every other one while it is held, and
// dead for all the moment the Store that held it closes, with no lease to
// wait for; an id nobody held is dead.
func ExerciseInstances(t *testing.T, open func(t *testing.T) store.Store) {
	ctx := context.Background()
	a, b := open(t), open(t)
	defer b.Close()
	alive := func(st store.Store, id string) bool {
		t.Helper()
		ok, err := st.InstanceAlive(ctx, id)
		require.NoError(t, err)
		return ok
	}
	require.False(t, alive(a, "inst_a"))
	require.False(t, alive(b, "inst_a"))
	require.NoError(t, a.HoldInstance(ctx, "inst_a"))
	require.NoError(t, a.HoldInstance(ctx, "inst_a"), "holding twice is holding")
	require.NoError(t, b.HoldInstance(ctx, "inst_b"))
	require.True(t, alive(a, "inst_a"))
	require.True(t, alive(b, "inst_a"), "another process sees it held")
	require.True(t, alive(a, "inst_b"))
	require.False(t, alive(b, "inst_c"))
	require.NoError(t, a.Close())
	require.False(t, alive(b, "inst_a"), "a closed holder is dead at once")
	require.True(t, alive(b, "inst_b"))
}
