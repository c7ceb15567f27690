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
// table or index (dbstat maps each page number to its b-tree).
//
//	go test -run '^$' -bench CycleWALPages -benchtime 40x -v ./agent
func BenchmarkCycleWALPages(b *testing.B) {
	bb := setupBench(b)
	ctx := context.Background()
	for range 50 {
		require.NoError(b, bb.cycle(ctx))
	}
	before := readWAL(b, bb.sq.Path())
	b.ResetTimer()
	for range b.N {
		require.NoError(b, bb.cycle(ctx))
	}
	b.StopTimer()
	frames := readWAL(b, bb.sq.Path())
	if len(frames) < len(before) {
		b.Skip("a checkpoint restarted the WAL during the run; run fewer cycles")
	}
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
