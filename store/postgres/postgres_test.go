package postgres_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
	"github.com/lubanhq/luban/store/storetest"
)

var _ store.Store = (*postgres.Store)(nil)

// openSchema opens a new store in a schema of its own in the test
// database (the conformance suites' constructor).
func openSchema(t *testing.T) store.Store {
	st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
	require.NoError(t, err)
	return st
}

func TestConformance(t *testing.T) {
	t.Parallel()
	pgtest.Skip(t)
	storetest.Exercise(t, openSchema)
}

func TestInstances(t *testing.T) {
	t.Parallel()
	url := pgtest.Schema(t)
	storetest.ExerciseInstances(t, func(t *testing.T) store.Store {
		st, err := postgres.Open(context.Background(), url, nil)
		require.NoError(t, err)
		return st
	})
}
