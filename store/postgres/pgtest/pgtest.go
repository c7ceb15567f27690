// Package pgtest gives each test its own PostgreSQL schema on the server
// named by LUBAN_TEST_POSTGRES (e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable), as CI sets it.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// EnvURL is the environment variable naming the test server.
const EnvURL = "LUBAN_TEST_POSTGRES"

// Enabled reports whether LUBAN_TEST_POSTGRES is set.
func Enabled() bool { return os.Getenv(EnvURL) != "" }

// Skip skips t unless LUBAN_TEST_POSTGRES is set.
func Skip(t testing.TB) {
	t.Helper()
	if !Enabled() {
		t.Skip(EnvURL + " is not set: PostgreSQL tests skipped")
	}
}

// Schema creates a fresh schema on the LUBAN_TEST_POSTGRES server, drops it
// (CASCADE) when t ends, and returns a URL whose connections use it
// (search_path). Connections opened with the URL must be closed before t's
// earlier-registered cleanups run, as t.Cleanup's order gives. Skips t when
// the variable is unset.
func Schema(t testing.TB) string {
	t.Helper()
	Skip(t)
	base := os.Getenv(EnvURL)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "luban_t_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	require.NoError(t, err, "connect to %s", EnvURL)
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema)
	conn.Close(ctx)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	require.NoError(t, err)
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
