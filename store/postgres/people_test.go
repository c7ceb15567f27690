package postgres_test

import (
	"testing"

	"github.com/lubanhq/luban/store/postgres/pgtest"
	"github.com/lubanhq/luban/store/storetest"
)

func TestConformancePeople(t *testing.T) {
	t.Parallel()
	pgtest.Skip(t)
	storetest.ExercisePeople(t, openSchema)
}

func TestConformanceAssignees(t *testing.T) {
	t.Parallel()
	pgtest.Skip(t)
	storetest.ExerciseAssignees(t, openSchema)
}
