// Package sqlitetest gives each test a SQLite database file already at the
// current schema: a copy of one database that a Template migrates once per
// test binary, instead of a run of every migration per test (about a second
// each under the race detector on 2 cores). What the copy holds is what a
// fresh sqlite.Open leaves in a new file; the tests of the migrations
// themselves (from empty, and the upgrades) open their own files.
//
// It does not import store/sqlite, so that the package's own internal tests
// can use it: the Template is given the function that makes the database.
package sqlitetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Template is a migrated database, made on first use by Make and copied for
// each test. Its zero value is not usable: set Make. A Template is safe for
// concurrent use; every copy is independent of the others.
type Template struct {
	// Make creates the database at path (a file that does not exist yet)
	// and closes it, e.g. sqlite.Open then Close. It runs at most once.
	Make func(ctx context.Context, path string) error

	once  sync.Once
	files map[string][]byte // by suffix: "" (the database), "-wal" when one was left
	err   error
}

// suffixes are the files of a database a copy carries: the database and a
// write-ahead log left by its last connection, if any (the -shm index is
// rebuilt by the next opener).
var suffixes = []string{"", "-wal"}

func (tp *Template) load() {
	tp.once.Do(func() {
		if tp.Make == nil {
			tp.err = errors.New("sqlitetest: Template.Make is not set")
			return
		}
		dir, err := os.MkdirTemp("", "luban-sqlitetest-*")
		if err != nil {
			tp.err = fmt.Errorf("sqlitetest: %w", err)
			return
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "template.db")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if err := tp.Make(ctx, path); err != nil {
			tp.err = fmt.Errorf("sqlitetest: make the template database: %w", err)
			return
		}
		tp.files = map[string][]byte{}
		for _, s := range suffixes {
			b, err := os.ReadFile(path + s)
			if errors.Is(err, fs.ErrNotExist) && s != "" {
				continue
			}
			if err != nil {
				tp.err = fmt.Errorf("sqlitetest: read the template database: %w", err)
				return
			}
			tp.files[s] = b
		}
	})
}

// CopyTo writes a copy of the template database at path, which must not
// exist (its directory must). The files are private (mode 0600), as
// sqlite.Open makes them.
func (tp *Template) CopyTo(path string) error {
	tp.load()
	if tp.err != nil {
		return tp.err
	}
	for _, s := range suffixes {
		b, ok := tp.files[s]
		if !ok {
			continue
		}
		f, err := os.OpenFile(path+s, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fmt.Errorf("sqlitetest: %w", err)
		}
		_, err = f.Write(b)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("sqlitetest: write %s: %w", path+s, err)
		}
	}
	return nil
}

// Path returns the path of a new copy of the template database in a
// directory of t (t.TempDir(), removed when t ends), named luban.db. A
// template that cannot be made fails t.
func (tp *Template) Path(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "luban.db")
	if err := tp.CopyTo(path); err != nil {
		t.Fatal(err)
	}
	return path
}
