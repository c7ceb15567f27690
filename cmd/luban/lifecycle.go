package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/sqlite"
)

func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}

// Migrate is `luban migrate status|up` (docs/design.md §14): status lists the
// schema migrations and which the database has; up applies the pending
// ones (luban serve also applies them when it starts).
type Migrate struct {
	Stdout io.Writer
	Getenv func(string) string
}

// Run parses args and runs the subcommand.
func (c *Migrate) Run(ctx context.Context, args []string) error {
	envs := &envReader{getenv: c.Getenv}
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	db := fs.String("db", envs.str("LUBAN_DB", defaultDB(c.Getenv)), "SQLite file path or postgres://… URL (LUBAN_DB)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: luban migrate status|up [--db …]\n\n  status  list the schema migrations and whether the database has each\n  up      apply the pending migrations (luban serve also does at start)\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if len(args) == 0 || (args[0] != "status" && args[0] != "up") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return parseFlags(fs, []string{"--help"}, c.Stdout)
		}
		return &usageError{"migrate needs status or up"}
	}
	sub := args[0]
	if err := parseFlags(fs, args[1:], c.Stdout); err != nil {
		return err
	}
	if *db == "memory" {
		return &usageError{"--db memory has nothing to migrate"}
	}
	if err := checkDBDir(*db, c.Getenv, "", 0); err != nil {
		return err
	}
	if sub == "up" {
		before, _ := migrations(ctx, *db)
		st, err := openStore(ctx, *db)
		if err != nil {
			return err
		}
		if err := st.Close(); err != nil {
			return err
		}
		after, err := migrations(ctx, *db)
		if err != nil {
			return err
		}
		applied := 0
		for _, m := range after {
			was := false
			for _, b := range before {
				if b.Version == m.Version && b.Applied {
					was = true
				}
			}
			if m.Applied && !was {
				applied++
				fmt.Fprintf(c.Stdout, "applied %d %s\n", m.Version, m.Name)
			}
		}
		fmt.Fprintf(c.Stdout, "%d applied; database %s is at version %d\n", applied, describeDB(*db), latest(after))
		return nil
	}
	// A database a newer luban migrated lists what this binary knows, then
	// fails as serve and up do (store.ErrSchemaTooNew).
	ms, err := migrations(ctx, *db)
	if ms == nil && err != nil {
		return err
	}
	tw := tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VERSION\tNAME\tSTATE\tAPPLIED AT")
	pending := 0
	for _, m := range ms {
		state, at := "pending", ""
		if m.Applied {
			state = "applied"
			if !m.AppliedAt.IsZero() {
				at = m.AppliedAt.Format("2006-01-02T15:04:05Z")
			}
		} else {
			pending++
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", m.Version, m.Name, state, at)
	}
	tw.Flush()
	fmt.Fprintf(c.Stdout, "%d pending\n", pending)
	return err
}

func migrations(ctx context.Context, db string) ([]store.Migration, error) {
	if isPostgres(db) {
		return postgres.Migrations(ctx, db)
	}
	return sqlite.Migrations(ctx, db)
}

func latest(ms []store.Migration) int64 {
	var v int64
	for _, m := range ms {
		if m.Applied && m.Version > v {
			v = m.Version
		}
	}
	return v
}

// Backup is `luban backup FILE` (docs/design.md §14): a consistent copy of the
// SQLite database, safe to take while luban serves it.
type Backup struct {
	Stdout io.Writer
	Getenv func(string) string
}

// Run parses args and writes the copy.
func (c *Backup) Run(ctx context.Context, args []string) error {
	envs := &envReader{getenv: c.Getenv}
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	db := fs.String("db", envs.str("LUBAN_DB", defaultDB(c.Getenv)), "the SQLite file to copy (LUBAN_DB)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: luban backup FILE [--db …]\n\nWrites a consistent copy of the SQLite database to FILE (which must not\nexist), also while luban serves it. Restore: stop luban, put FILE in\nplace of the database, start luban. For PostgreSQL use pg_dump.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	var dst string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		dst, args = args[0], args[1:]
	}
	n := 1
	if dst != "" {
		n = 0
	}
	if err := parseFlagsArgs(fs, args, c.Stdout, n); err != nil {
		return err
	}
	if dst == "" {
		dst = fs.Arg(0)
	}
	if dst == "" {
		return &usageError{"backup needs the FILE to write"}
	}
	if isPostgres(*db) {
		return &usageError{"luban backup copies SQLite databases; for PostgreSQL use pg_dump"}
	}
	if *db == "memory" {
		return &usageError{"--db memory keeps nothing to back up"}
	}
	if err := sqlite.Backup(ctx, *db, dst); err != nil {
		return err
	}
	fmt.Fprintf(c.Stdout, "backup of %s written to %s\n", *db, dst)
	return nil
}

// Health is `luban health`: it asks a running server's /readyz (the
// container image's HEALTHCHECK, which has no curl) and exits 0 when it
// answers 200, 1 otherwise.
type Health struct {
	Stdout io.Writer
	Getenv func(string) string
}

// Run parses args and asks once, within --timeout.
func (c *Health) Run(ctx context.Context, args []string) error {
	envs := &envReader{getenv: c.Getenv}
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	addr := fs.String("addr", envs.str("LUBAN_ADDR", "127.0.0.1:8080"), "the server's listen address (LUBAN_ADDR); 0.0.0.0 is asked on 127.0.0.1")
	timeout := fs.Duration("timeout", 3*time.Second, "how long to wait for the answer")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: luban health [--addr host:port]\n\nAsks GET /readyz of a running luban; exit 0 when ready, 1 when not.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return &usageError{fmt.Sprintf("--addr (LUBAN_ADDR) %q: %v", *addr, err)}
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(host, port)+"/readyz", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	fmt.Fprint(c.Stdout, string(b))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s", resp.Status)
	}
	return nil
}
