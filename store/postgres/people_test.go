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

func TestConformancePeople(t *testing.T) {
	t.Parallel()
	pgtest.Skip(t)
	storetest.ExercisePeople(t, func(t *testing.T) store.Store {
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		return st
	})
}
