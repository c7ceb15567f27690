package acceptance

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// postgresBackend is LUBAN_ACCEPTANCE_STORE=postgres (issue 7): the suite on
// the PostgreSQL server named by LUBAN_TEST_POSTGRES, each test in a schema of
// its own (created here, dropped when the test ends). Every configure opens a
// new store on that schema, so a restart reaches the same data.
func postgresBackend(t *testing.T) backend {
	t.Helper()
	if !pgtest.Enabled() {
		t.Fatalf("LUBAN_ACCEPTANCE_STORE=postgres needs %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", pgtest.EnvURL)
	}
	url := pgtest.Schema(t)
	return backend{name: "postgres", configure: func(t testing.TB, o *lubantest.Options) {
		st, err := postgres.Open(context.Background(), url, nil)
		require.NoError(t, err)
		o.Store = st
	}}
}
