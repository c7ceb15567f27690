package sqlite_test

import (
	"testing"

	"github.com/lubanhq/luban/store/storetest"
)

func TestConformancePeople(t *testing.T) {
	t.Parallel()
	storetest.ExercisePeople(t, openFile)
}

func TestConformanceAssignees(t *testing.T) {
	t.Parallel()
	storetest.ExerciseAssignees(t, openFile)
}
