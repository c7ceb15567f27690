package postgres_test

import (
	"testing"

	"github.com/lubanhq/luban/store/postgres/pgtest"
	"github.com/lubanhq/luban/store/storetest"
)

func TestMaintainerConformance(t *testing.T) {
	t.Parallel()
	pgtest.Skip(t)
	storetest.ExerciseMaintainer(t, openSchema)
}
