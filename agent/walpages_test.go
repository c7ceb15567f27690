package agent_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store/sqlite"
)

// walFrame is one frame of a SQLite WAL file: the page it holds and, for
// the last frame of a commit, the database size after it (0 otherwise).
type walFrame struct{ page, commit uint32 }

// readWAL returns the frames of path's WAL that belong to its current
// generation (the salts of the file's header), in order.
func readWAL(tb testing.TB, path string) []walFrame {
	b, err := os.ReadFile(path + "-wal")
	require.NoError(tb, err)
	if len(b) == 0 {
		return nil // truncated by a checkpoint, no frames yet
	}
	require.GreaterOrEqual(tb, len(b), 32)
	ps := int(binary.BigEndian.Uint32(b[8:12]))
	s1, s2 := binary.BigEndian.Uint32(b[16:20]), binary.BigEndian.Uint32(b[20:24])
	var out []walFrame
	for off := 32; off+24+ps <= len(b); off += 24 + ps {
		h := b[off : off+24]
		if binary.BigEndian.Uint32(h[8:12]) != s1 || binary.BigEndian.Uint32(h[12:16]) != s2 {
			break
		}
		out = append(out, walFrame{binary.BigEndian.Uint32(h[0:4]), binary.BigEndian.Uint32(h[4:8])})
	}
	return out
}

// BenchmarkCycleWALPages runs b.N cycles after 50 warm-up ones and reports
// the pages their commits wrote to the WAL (each page costs SQLite a
// checksum and two pwrites): per cycle, per commit, and in the log per
// table or index (dbstat maps each page number to its b-tree). After the
// warm-up the WAL is truncated, and a read transaction held on a
// connection of the benchmark's own keeps SQLite from starting the log
// again while the measured cycles run, so every frame they write is in
// the file at the end (and Counts.WALFrames must agree).
//
//	go test -run '^$' -bench CycleWALPages -benchtime 40x -v ./agent
func BenchmarkCycleWALPages(b *testing.B) {
	if b.N > 100 {
		// The held snapshot lets the log grow; past half of the store's
		// WAL limit its checkpointer would wait for this benchmark's reader.
		b.Skip("at most 100 cycles (-benchtime 100x): the log is kept whole while they run")
	}
	bb := setupBench(b)
	ctx := context.Background()
	for range 50 {
		require.NoError(b, bb.cycle(ctx))
	}
	ck, err := sql.Open(sqlite.DriverName, "file:"+bb.sq.Path()+"?_pragma=busy_timeout(5000)")
	require.NoError(b, err)
	defer ck.Close()
	ck.SetMaxOpenConns(1)
	var busy, logged, done int
	require.NoError(b, ck.QueryRowContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &logged, &done))
	require.Zero(b, busy, "the warm-up's WAL was not checkpointed")
	require.NoError(b, bb.cycle(ctx)) // the frames the held snapshot pins
	hold, err := ck.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	require.NoError(b, err)
	var n int
	require.NoError(b, hold.QueryRowContext(ctx, `SELECT COUNT(*) FROM sessions`).Scan(&n))
	before := readWAL(b, bb.sq.Path())
	require.NotEmpty(b, before)
	c0 := bb.sq.Counts()
	b.ResetTimer()
	for range b.N {
		require.NoError(b, bb.cycle(ctx))
	}
	b.StopTimer()
	frames := readWAL(b, bb.sq.Path())
	c1 := bb.sq.Counts()
	require.NoError(b, hold.Rollback())
	require.Equal(b, c0.Rewinds, c1.Rewinds, "the log started again during the run")
	require.Equal(b, c1.WALFrames-c0.WALFrames, int64(len(frames)-len(before)), "frames in the file and in the WAL index differ")
	frames = frames[len(before):]
	db, err := sql.Open(sqlite.DriverName, "file:"+bb.sq.Path()+"?_pragma=query_only(1)")
	require.NoError(b, err)
	defer db.Close()
	name := map[uint32]string{1: "page 1"}
	rows, err := db.QueryContext(ctx, `SELECT pageno, name FROM dbstat WHERE pageno <> 1`)
	require.NoError(b, err)
	for rows.Next() {
		var p uint32
		var nm string
		require.NoError(b, rows.Scan(&p, &nm))
		name[p] = nm
	}
	require.NoError(b, rows.Err())
	commits := 0
	per := map[string]int{}
	for _, f := range frames {
		nm := name[f.page]
		if nm == "" {
			nm = "free or new"
		}
		per[nm]++
		if f.commit != 0 {
			commits++
		}
	}
	require.Positive(b, commits)
	keys := make([]string, 0, len(per))
	for k := range per {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return per[keys[i]] > per[keys[j]] || per[keys[i]] == per[keys[j]] && keys[i] < keys[j]
	})
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%6.2f %s\n", float64(per[k])/float64(b.N), k)
	}
	b.Logf("pages per cycle by b-tree:\n%s", sb.String())
	b.ReportMetric(float64(len(frames))/float64(b.N), "pages/cycle")
	b.ReportMetric(float64(len(frames))/float64(commits), "pages/commit")
}
