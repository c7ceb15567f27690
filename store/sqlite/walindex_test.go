package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// walIndex reads the WAL index header SQLite writes: mxFrame is the
// log's frame count wal_checkpoint reports and the change counter grows
// with each commit, seen through the same mapping on Linux.
func TestWALIndexReadsTheLiveHeader(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.db")
	db, err := sql.Open(DriverName, "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	_, err = db.ExecContext(ctx, `CREATE TABLE t (x TEXT)`)
	require.NoError(t, err)
	var w walIndex
	defer w.close()
	var last uint32
	for i := range 3 {
		_, err = db.ExecContext(ctx, `INSERT INTO t VALUES (?)`, "row")
		require.NoError(t, err)
		mx, _, change, ok := w.header(path)
		require.True(t, ok)
		var busy, log, done int64
		require.NoError(t, db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done))
		require.Equal(t, log, int64(mx), "round %d", i)
		require.Greater(t, change, last)
		last = change
		if runtime.GOOS == "linux" {
			require.NotNil(t, w.m, "mapped")
		}
	}
}

// A -shm file truncated under the mapping (to 3 bytes, as SQLite does when a
// connection opens the database alone, or to nothing: a page past the end
// of the file faults) reads as no header, without a crash, and its header
// is read again once the file holds it.
func TestWALIndexSurvivesATruncatedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "w.db")
	write := func(mx uint32) {
		b := make([]byte, 32768)
		e := binary.NativeEndian
		e.PutUint32(b[0:4], 3007000)
		b[12] = 1
		e.PutUint32(b[16:20], mx)
		require.NoError(t, os.WriteFile(path+"-shm", b, 0o600))
	}
	write(7)
	var w walIndex
	defer w.close()
	mx, _, _, ok := w.header(path)
	require.True(t, ok)
	require.Equal(t, uint32(7), mx)
	require.NoError(t, os.Truncate(path+"-shm", 3))
	_, _, _, ok = w.header(path)
	require.False(t, ok, "no header in 3 bytes")
	require.NoError(t, os.Truncate(path+"-shm", 0))
	_, _, _, ok = w.header(path)
	require.False(t, ok, "no header in an empty file")
	require.Nil(t, w.m, "the mapping of a page past the end is dropped")
	write(9)
	mx, _, _, ok = w.header(path)
	require.True(t, ok)
	require.Equal(t, uint32(9), mx)
}
