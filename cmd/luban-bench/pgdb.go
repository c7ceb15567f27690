package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// isPostgres reports whether -db names a PostgreSQL server.
func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// pgSchema creates a fresh schema on the server at base and returns a URL
// whose connections use it (search_path) and a func that drops it, so a
// run neither sees nor leaves rows of another.
func pgSchema(ctx context.Context, base string) (string, func(), error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "luban_bench_" + hex.EncodeToString(b[:])
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return "", nil, fmt.Errorf("-db: connect: %w", err)
	}
	_, err = conn.Exec(ctx, "CREATE SCHEMA "+schema)
	conn.Close(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("-db: create schema: %w", err)
	}
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if conn, err := pgx.Connect(ctx, base); err == nil {
			_, _ = conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE")
			conn.Close(ctx)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		drop()
		return "", nil, fmt.Errorf("-db: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop, nil
}
