package agent_test

// In-process cycle benchmarks: the Runner as a Go library, a
// zero-latency model.ProviderFunc, SQLite in WAL mode on a real file. One
// cycle = Start → ask → pause persisted → answer (Continue) → resume → final.
//
//	go test -run '^$' -bench . -benchtime 2000x ./agent
//
// Reported metrics: ns/op is one cycle; cycles/s, p50-µs and p99-µs come from
// per-cycle latencies; B-stored/paused-run is the growth of the database (in
// pages, indexes included) per run left paused on a one-question ask_user.

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// benchAsk is the one-question ask_user call the zero-latency model makes.
const benchAsk = `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`

type benchBundle struct {
	runner *agent.Runner
	st     store.Store
	sq     *sqlite.Store   // nil on PostgreSQL
	pg     *postgres.Store // nil on SQLite
	// pgWAL reads the server's WAL insert position in bytes (on
	// PostgreSQL; nil on SQLite), walMark its value when counts was called.
	pgWAL   func() int64
	walMark int64
	// clientReads counts the reads the benchmark's client makes while it
	// waits (pause, cycle): one statement each; the rest are the runner's.
	clientReads atomic.Int64
	clientMark  int64 // clientReads when counts was called
	// steps, when set (setupBenchOn), is where the runner's Step hook
	// reports each run's pause and end; nil: the client waits by reading.
	steps *stepWaits
	// runsMu guards runs, the runs cycle completed (checked once the
	// timer stopped: checkCompleted).
	runsMu sync.Mutex
	runs   []string
	// session, when not empty, is the session pause starts its runs in
	// (each cycle a next turn); empty: a new session each cycle.
	session string
}

// stepWaits hands the outcome of a run's steps that stopped its driver (a
// pause, the run's end, or an error) to the client waiting on that run,
// so the benchmark's client waits without reading the store: what it
// costs is then the runner's work, not the client's polling.
type stepWaits struct {
	mu sync.Mutex
	m  map[string]chan error
}

func (w *stepWaits) ch(runID string) chan error {
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.m[runID]
	if c == nil {
		c = make(chan error, 4)
		w.m[runID] = c
	}
	return c
}

// hook is the Options.Step that reports every step that stopped the
// driver (paused: a question put or the run ended) or failed.
func (w *stepWaits) hook(ctx context.Context, runID string) (context.Context, func(bool, error)) {
	return ctx, func(paused bool, err error) {
		if paused || err != nil {
			select {
			case w.ch(runID) <- err:
			default:
			}
		}
	}
}

// wait blocks until runID's driver stopped once more and returns the
// step's error; the entry is dropped, so a run left paused keeps nothing
// here.
func (w *stepWaits) wait(ctx context.Context, runID string) error {
	c := w.ch(runID)
	select {
	case err := <-c:
		w.mu.Lock()
		if len(c) == 0 {
			delete(w.m, runID)
		}
		w.mu.Unlock()
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// zeroModel asks once when the conversation ends with the user's message and
// answers with final text once the ToolResult is there. It never waits.
func zeroModel() model.Provider {
	return model.ProviderFunc{ProviderName: "bench:zero", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == model.RoleTool {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "好的，先分析。"}, FinishReason: "stop"}, nil
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "我需要问一下。",
			ToolCalls: []model.ToolCall{{ID: agent.NewID("call"), Name: api.ToolAskUser, Arguments: benchAsk}}}, FinishReason: "tool_calls"}, nil
	}}
}

func setupBench(tb testing.TB) *benchBundle {
	tb.Helper()
	sq, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "bench.db"), nil)
	require.NoError(tb, err)
	sq.SetOutbox(false) // luban serve with no webhook and no notification channel
	bb := setupBenchOn(tb, sq)
	bb.sq = sq
	return bb
}

// setupBenchPostgres is setupBench on a fresh PostgreSQL schema of
// LUBAN_TEST_POSTGRES (skipped when unset).
func setupBenchPostgres(tb testing.TB) *benchBundle {
	tb.Helper()
	url := pgtest.Schema(tb)
	st, err := postgres.Open(context.Background(), url, &postgres.Options{MaxConns: 16})
	require.NoError(tb, err)
	bb := setupBenchOn(tb, st)
	bb.pg = st
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(tb, err)
	tb.Cleanup(func() { conn.Close(context.Background()) })
	bb.pgWAL = func() int64 {
		var lsn int64
		require.NoError(tb, conn.QueryRow(context.Background(), `SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint`).Scan(&lsn))
		return lsn
	}
	return bb
}

func setupBenchOn(tb testing.TB, st store.Store) *benchBundle {
	steps := &stepWaits{m: map[string]chan error{}}
	r, err := agent.New(agent.Options{Store: st, Tools: tool.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Agents: []*agent.Agent{{Provider: zeroModel(), Tools: tool.Allowlist{api.ToolAskUser}}}, Step: steps.hook})
	require.NoError(tb, err)
	tb.Cleanup(func() {
		r.Shutdown()
		st.Close()
	})
	return &benchBundle{runner: r, st: st, steps: steps}
}

// waitFor blocks until cond holds for sessionID, re-checking after every
// committed event of the session (Store.Subscribe), never by sleeping.
func waitFor(ctx context.Context, st store.Store, sessionID string, cond func() (bool, error)) error {
	wake, unsub := st.Subscribe(sessionID)
	defer unsub()
	for {
		ok, err := cond()
		if err != nil || ok {
			return err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// pause starts a run and returns once its question is persisted. With
// the Step hook it waits for the step that paused the run and then reads
// the pending question once (its id is what the answer names); without
// it, it reads the pending question after every committed event.
func (bb *benchBundle) pause(ctx context.Context) (*agent.StartResult, *store.Interaction, error) {
	res, err := bb.runner.Start(ctx, agent.StartParams{Owner: "bench", SessionID: bb.session, Message: "帮我改代码"})
	if err != nil {
		return nil, nil, err
	}
	var it *store.Interaction
	if bb.steps != nil {
		if err := bb.steps.wait(ctx, res.RunID); err != nil {
			return nil, nil, err
		}
		bb.clientReads.Add(1)
		it, err = bb.st.InteractionGetPending(ctx, res.SessionID)
		if err != nil {
			return nil, nil, fmt.Errorf("the run stopped without a pending question: %w", err)
		}
		return res, it, nil
	}
	err = waitFor(ctx, bb.st, res.SessionID, func() (bool, error) {
		var gerr error
		bb.clientReads.Add(1)
		it, gerr = bb.st.InteractionGetPending(ctx, res.SessionID)
		if errors.Is(gerr, store.ErrNotFound) {
			return false, nil
		}
		return gerr == nil, gerr
	})
	return res, it, err
}

// cycle runs one whole cycle and returns once the run has ended: with the
// Step hook, once the step that ended it returned (its transition
// committed; checkCompleted reads afterwards that every such run
// completed), else once a read shows it completed.
func (bb *benchBundle) cycle(ctx context.Context) error {
	res, it, err := bb.pause(ctx)
	if err != nil {
		return err
	}
	if _, err := bb.runner.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "bench", SessionID: res.SessionID, RequestID: it.ID,
		Answer: api.ContinueRequest{Selections: []string{"safe"}}}); err != nil {
		return err
	}
	if bb.steps != nil {
		if err := bb.steps.wait(ctx, res.RunID); err != nil {
			return err
		}
		bb.runsMu.Lock()
		bb.runs = append(bb.runs, res.RunID)
		bb.runsMu.Unlock()
		return nil
	}
	return waitFor(ctx, bb.st, res.SessionID, func() (bool, error) {
		bb.clientReads.Add(1)
		run, err := bb.st.RunGet(ctx, res.RunID)
		if err != nil {
			return false, err
		}
		if run.Status.Terminal() && run.Status != store.RunCompleted {
			return false, errors.New("run ended " + string(run.Status) + ": " + run.Error)
		}
		return run.Status == store.RunCompleted, nil
	})
}

// checkCompleted reads every run cycle ended through the Step hook and
// fails unless each completed (outside the timed part: these reads are
// not the cycle's).
func (bb *benchBundle) checkCompleted(tb testing.TB) {
	tb.Helper()
	bb.runsMu.Lock()
	runs := bb.runs
	bb.runs = nil
	bb.runsMu.Unlock()
	for _, id := range runs {
		run, err := bb.st.RunGet(context.Background(), id)
		require.NoError(tb, err)
		require.Equal(tb, store.RunCompleted, run.Status, "run %s: %s", id, run.Error)
	}
}

func reportLatencies(b *testing.B, lat []time.Duration, elapsed time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "cycles/s")
}

// BenchmarkCycleSequential runs cycles one after another.
func BenchmarkCycleSequential(b *testing.B) { benchSequential(b, setupBench(b)) }

// BenchmarkCycleSequentialPostgres is BenchmarkCycleSequential on
// PostgreSQL (LUBAN_TEST_POSTGRES).
func BenchmarkCycleSequentialPostgres(b *testing.B) { benchSequential(b, setupBenchPostgres(b)) }

func benchSequential(b *testing.B, bb *benchBundle) {
	ctx := context.Background()
	require.NoError(b, bb.cycle(ctx)) // warm up: prepared statements, page cache
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	counts := bb.counts()
	start := time.Now()
	for range b.N {
		t0 := time.Now()
		if err := bb.cycle(ctx); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	elapsed := time.Since(start)
	b.StopTimer()
	reportLatencies(b, lat, elapsed)
	bb.reportCounts(b, counts, b.N)
	bb.checkCompleted(b)
}

// BenchmarkCycleParallel8 runs cycles in 8 concurrent sessions.
func BenchmarkCycleParallel8(b *testing.B) { benchParallel8(b, setupBench(b)) }

// BenchmarkCycleParallel8Postgres is BenchmarkCycleParallel8 on PostgreSQL
// (LUBAN_TEST_POSTGRES).
func BenchmarkCycleParallel8Postgres(b *testing.B) { benchParallel8(b, setupBenchPostgres(b)) }

func benchParallel8(b *testing.B, bb *benchBundle) {
	ctx := context.Background()
	require.NoError(b, bb.cycle(ctx))
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	errs := make(chan error, 8)
	b.ReportAllocs()
	b.ResetTimer()
	counts := bb.counts()
	start := time.Now()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				t0 := time.Now()
				if err := bb.cycle(ctx); err != nil {
					errs <- err
					return
				}
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	reportLatencies(b, lat, elapsed)
	bb.reportCounts(b, counts, b.N)
	bb.checkCompleted(b)
}

// BenchmarkCommitCeilingPostgres is the most a sequential cycle on
// PostgreSQL can do on this server: one op is a bare transaction, BEGIN,
// a one-row INSERT and COMMIT sent as one batch (one round trip) on one
// connection, so its time is a round trip and the WAL flush every durable
// commit waits for. A cycle makes four such commits (docs/design.md §4),
// so ceiling-cycles/s is commits/s ÷ 4. Run it beside
// BenchmarkCycleSequentialPostgres: the two share the server's load.
func BenchmarkCommitCeilingPostgres(b *testing.B) { benchCommitCeiling(b, 1) }

// BenchmarkCommitCeilingParallel8Postgres is BenchmarkCommitCeilingPostgres
// with 8 connections committing at once (the server flushes the WAL of
// several commits together), the ceiling of BenchmarkCycleParallel8Postgres.
func BenchmarkCommitCeilingParallel8Postgres(b *testing.B) { benchCommitCeiling(b, 8) }

func benchCommitCeiling(b *testing.B, conns int) {
	url := pgtest.Schema(b)
	ctx := context.Background()
	cs := make([]*pgx.Conn, conns)
	for i := range cs {
		c, err := pgx.Connect(ctx, url)
		require.NoError(b, err)
		b.Cleanup(func() { c.Close(context.Background()) })
		cs[i] = c
	}
	_, err := cs[0].Exec(ctx, `CREATE TABLE ceiling (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, data TEXT NOT NULL)`)
	require.NoError(b, err)
	commit := func(c *pgx.Conn) error {
		batch := &pgx.Batch{}
		batch.Queue(`BEGIN`)
		batch.Queue(`INSERT INTO ceiling (data) VALUES ($1)`, benchAsk)
		batch.Queue(`COMMIT`)
		return c.SendBatch(ctx, batch).Close()
	}
	for _, c := range cs {
		require.NoError(b, commit(c)) // prepare the INSERT on every connection
	}
	work := make(chan struct{}, b.N)
	for range b.N {
		work <- struct{}{}
	}
	close(work)
	errs := make(chan error, conns)
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() {
			for range work {
				if err := commit(c); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	perSec := float64(b.N) / elapsed.Seconds()
	b.ReportMetric(perSec, "commits/s")
	b.ReportMetric(perSec/4, "ceiling-cycles/s")
}

// BenchmarkPausedRunBytes leaves b.N runs paused on a one-question ask_user
// and reports how much the database grew per paused run (docs/design.md §4: a paused
// run is rows, nothing else).
func BenchmarkPausedRunBytes(b *testing.B) {
	bb := setupBench(b)
	ctx := context.Background()
	db, err := sql.Open(sqlite.DriverName, "file:"+bb.sq.Path()+"?_pragma=query_only(1)")
	require.NoError(b, err)
	defer db.Close()
	size := func() int64 {
		var pages, pageSize int64
		require.NoError(b, db.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages))
		require.NoError(b, db.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&pageSize))
		return pages * pageSize
	}
	// perTable is the bytes of each table and index (dbstat: pages, and
	// the payload of the rows in them).
	perTable := func() (pages, payload map[string]int64) {
		pages, payload = map[string]int64{}, map[string]int64{}
		rows, err := db.QueryContext(ctx, `SELECT name, SUM(pgsize), SUM(payload) FROM dbstat GROUP BY name`)
		require.NoError(b, err)
		defer rows.Close()
		for rows.Next() {
			var n string
			var pg, pl int64
			require.NoError(b, rows.Scan(&n, &pg, &pl))
			pages[n], payload[n] = pg, pl
		}
		require.NoError(b, rows.Err())
		return pages, payload
	}
	_, _, err = bb.pause(ctx)
	require.NoError(b, err)
	before := size()
	pages0, payload0 := perTable()
	b.ResetTimer()
	for range b.N {
		if _, _, err := bb.pause(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(size()-before)/float64(b.N), "B-stored/paused-run")
	pages1, payload1 := perTable()
	names := make([]string, 0, len(pages1))
	for n := range pages1 {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if d := pages1[n] - pages0[n]; d != 0 {
			b.Logf("%-28s %6.0f B of pages, %6.0f B of row payload per paused run", n, float64(d)/float64(b.N), float64(payload1[n]-payload0[n])/float64(b.N))
		}
	}
}

// TestCycle keeps the benchmark's cycle honest: it really completes a run
// whose model saw the answer as the ToolResult of its call.
func TestCycle(t *testing.T) {
	t.Parallel()
	bb := setupBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, it, err := bb.pause(ctx)
	require.NoError(t, err)
	run, err := bb.st.RunGet(ctx, res.RunID)
	require.NoError(t, err)
	require.Equal(t, store.RunWaitingInput, run.Status)
	_, err = bb.runner.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "bench", SessionID: res.SessionID, RequestID: it.ID, Answer: api.ContinueRequest{Selections: []string{"safe"}}})
	require.NoError(t, err)
	require.NoError(t, waitFor(ctx, bb.st, res.SessionID, func() (bool, error) {
		run, err := bb.st.RunGet(ctx, res.RunID)
		return err == nil && run.Status == store.RunCompleted, err
	}))
	msgs, err := bb.st.MessageList(ctx, res.SessionID)
	require.NoError(t, err)
	require.Len(t, msgs, 4) // user, assistant(ask), tool, assistant(final)
	require.Equal(t, "tool", msgs[2].Role)
	require.JSONEq(t, `{"selections":["safe"],"labels":["先分析"],"customInput":"","cancelled":false}`, msgs[2].Content)
	// The tool_call trace names the arguments by length and hash; the
	// assistant message holds them.
	trace, err := bb.st.TraceList(ctx, res.SessionID)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(benchAsk))
	var calls int
	for _, e := range trace {
		if e.Kind == "tool_call" {
			calls++
			require.JSONEq(t, fmt.Sprintf(`{"toolCallId":%q,"name":"ask_user","argumentsBytes":%d,"argumentsSha256":%q}`,
				it.ToolCallID, len(benchAsk), hex.EncodeToString(sum[:])), string(e.Data))
		}
	}
	require.Equal(t, 1, calls)
	require.NoError(t, bb.cycle(ctx))
	bb.checkCompleted(t)
}

// reportCounts reports what the cycles since before cost the database,
// per cycle: commits, statements on the writer, reads on the pool (all,
// and the runner's: without the benchmark client's), WAL frames appended; and the truncating checkpoints it took (checkpoints that
// hold the store back: 0 under a steady load). On PostgreSQL: round trips
// (all, and the runner's) and the bytes of WAL the server wrote.
func (bb *benchBundle) reportCounts(b *testing.B, before sqlite.Counts, cycles int) {
	if bb.pg != nil {
		b.ReportMetric(float64(bb.pg.RoundTrips()-before.Writes)/float64(cycles), "round-trips/cycle")
		// A client read is one statement sent alone: one round trip.
		b.ReportMetric(float64(bb.pg.RoundTrips()-before.Writes-bb.clientReads.Load()+bb.clientMark)/float64(cycles), "runner-round-trips/cycle")
		// The server's WAL, whoever wrote it: exact on a server no one
		// else writes to.
		b.ReportMetric(float64(bb.pgWAL()-bb.walMark)/float64(cycles), "wal-bytes/cycle")
		return
	}
	after := bb.sq.Counts()
	n := float64(cycles)
	b.ReportMetric(float64(after.Commits-before.Commits)/n, "commits/cycle")
	b.ReportMetric(float64(after.Writes-before.Writes)/n, "writes/cycle")
	b.ReportMetric(float64(after.Reads-before.Reads)/n, "reads/cycle")
	b.ReportMetric(float64(after.Reads-before.Reads-bb.clientReads.Load()+bb.clientMark)/n, "runner-reads/cycle")
	b.ReportMetric(float64(after.WALFrames-before.WALFrames)/n, "wal-frames/cycle")
	b.ReportMetric(float64(after.Truncations-before.Truncations), "wal-truncations")
	b.ReportMetric(float64(after.Rewinds-before.Rewinds), "wal-rewinds")
	b.ReportMetric(float64(after.Checkpoints-before.Checkpoints), "checkpoints")
}

// TestCycleCounts pins what one sequential cycle costs the database: the
// number of commits, of statements on the writer and of reads (a count,
// not a timing), and logs the reads per query. Four commits
// are the floor of the cycle as docs/design.md §4 has it, one per thing that must
// be durable before the outside sees it and before the next step may
// happen: the user's message (acknowledged by the stream's first events,
// and the checkpoint a takeover resumes the model call from), the model
// turn with its question (persist-then-emit: user_input_required), the
// answer with its ToolResult (the receipt; one-time consumption is this
// commit's conditional write), the final turn with done. Merging any two
// would hold an acknowledgment for a model call's whole latency or let a
// crash lose what a client was told is stored (docs/performance.md
// "Commits per cycle: the floor").
func TestCycleCounts(t *testing.T) {
	t.Parallel()
	bb := setupBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Warm up: the b-trees a few levels deep, as in a database in use.
	for range 100 {
		require.NoError(t, bb.cycle(ctx))
	}
	before, readsBefore, writesBefore, clientBefore := bb.sq.Counts(), bb.sq.ReadsByQuery(), bb.sq.WritesByQuery(), bb.clientReads.Load()
	const cycles = 20
	for range cycles {
		require.NoError(t, bb.cycle(ctx))
	}
	after, readsAfter, writesAfter, client := bb.sq.Counts(), bb.sq.ReadsByQuery(), bb.sq.WritesByQuery(), float64(bb.clientReads.Load()-clientBefore)/cycles
	for q, n := range readsAfter {
		if d := n - readsBefore[q]; d > 0 {
			t.Logf("%.1f reads per cycle of %s", float64(d)/cycles, strings.Join(strings.Fields(q), " "))
		}
	}
	// The writer's statements, one line each (docs/performance.md
	// "Statements per cycle" has them commit by commit).
	var byQuery int64
	for _, q := range slices.Sorted(maps.Keys(writesAfter)) {
		if d := writesAfter[q] - writesBefore[q]; d > 0 {
			byQuery += d
			q = strings.Join(strings.Fields(q), " ")
			t.Logf("%.1f writes per cycle of %s", float64(d)/cycles, q[:min(len(q), 110)])
		}
	}
	require.Equal(t, after.Writes-before.Writes, byQuery, "the writer's statements per query add up to its count")
	commits := float64(after.Commits-before.Commits) / cycles
	writes := float64(after.Writes-before.Writes) / cycles
	reads := float64(after.Reads-before.Reads) / cycles
	frames := float64(after.WALFrames-before.WALFrames) / cycles
	t.Logf("per cycle: %.1f commits, %.1f writes, %.1f reads (%.1f of them the client's), %.1f WAL frames", commits, writes, reads, client, frames)
	require.Equal(t, 4.0, commits, "the floor: message, turn+question, answer, turn+done")
	// 21: the question's timeout deadline is kept in its row (SQLite
	// migration 00022; one statement more when it was a row of
	// interaction_deadlines, docs/design.md §16 "Deadlines"); the log rows of a commit
	// (events, feed, trace) are one multi-row statement per table
	// (store/sqlite/rowbuf.go); the session's status rides on the run's
	// pause, resume and finish (the trigger runs_session_status, migration
	// 00020); a session's audit entries are rows of trace, written by the
	// trace's statement (migration 00033; 23 before, the question's and
	// the answer's audit INSERT).
	require.LessOrEqual(t, writes, 21.0, "statements on the writer per cycle")
	// ≈ 54 after the warm-up: a session's rows are clustered under its
	// integer key (migration 00016), so a commit appends to the end of
	// events and trace where a random text id fell anywhere (≈ 81.5
	// without); a session's trace entries are a rowid range (no
	// trace_session) and the audit takes ids without AUTOINCREMENT (no
	// sqlite_sequence), migration 00017 (≈ 76 without); the feed has no
	// index by session, migration 00018 (≈ 69.5 without); events is a
	// rowid table of packed rows, migration 00019, so appending to it
	// writes one leaf, not the last leaves and their parent every few
	// commits (≈ 66.5 without); a session's messages are a rowid range (no
	// messages_session), migration 00020 (≈ 62.5 without); with no
	// webhook and no notification channel a feed entry is written fanned
	// out and the feed is pruned on its primary key, so it touches neither
	// feed_unfanned nor feed_prune, migration 00021 (≈ 58.5 without); the
	// question's timeout is in its row, one index entry instead of a row
	// and its index entry, migration 00022 (≈ 55 without); a session's
	// active run is named in its row, not by the index runs_one_active,
	// migration 00023 (≈ 54.5 without); a session's audit entries are a
	// rowid range (no audit_session leaf per ask and answer), migration
	// 00025 (≈ 52.5 without); a message's ids as blobs without the
	// message-id index, migration 00026 (≈ 50 without); the feed a rowid
	// table keyed by its owner's key and number, appended without an
	// index b-tree's rebalancing, migration 00028 (≈ 45 without);
	// recovery finds runs through the index of open runs, which a pause
	// and a resume leave alone, migration 00030 (≈ 43.5 without); a
	// pause and a resume write neither the session's row nor its entry in
	// the listing's index (updated_at is the last run's start or end),
	// migration 00031 (≈ 41.5 without); nor does the run's end (the
	// session reads its last run's status; updated_at is the run's start),
	// migration 00034 (≈ 37.5 without); a session's audit entries in the
	// trace's leaf, migration 00033 (≈ 35.5 without). One more page per
	// commit of any table is 4 a cycle.
	require.LessOrEqual(t, frames, 35.0, "WAL frames per cycle")
	// The runner's reads: one, the answer's interaction with its session,
	// run and messages (one statement); the driver reads nothing a
	// transition committed. The client's: one, the pending question's id
	// once the Step hook reported the pause.
	require.LessOrEqual(t, reads-client, 1.0, "the runner's reads on the reader pool per cycle")
	require.Equal(t, 1.0, client, "the client's reads per cycle")
	bb.checkCompleted(t)
}

// TestCycleCountsNextTurn pins the writer's statements of a cycle in a
// session that already has one: the new run sets the session running in
// its own INSERT (store.RunInsertParams; the trigger runs_one_active,
// SQLite migration 00027), so the turn writes the session's row by no
// statement of its own: 20, the new session's INSERT fewer than a first
// turn's 21 (one more each before 00027: the agent's SessionSetStatus;
// two more before 00033, the audit's own INSERTs).
func TestCycleCountsNextTurn(t *testing.T) {
	t.Parallel()
	bb := setupBench(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, it, err := bb.pause(ctx)
	require.NoError(t, err)
	_, err = bb.runner.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "bench", SessionID: res.SessionID, RequestID: it.ID,
		Answer: api.ContinueRequest{Selections: []string{"safe"}}})
	require.NoError(t, err)
	require.NoError(t, waitFor(ctx, bb.st, res.SessionID, func() (bool, error) {
		run, err := bb.st.RunGet(ctx, res.RunID)
		return err == nil && run.Status == store.RunCompleted, err
	}))
	bb.session = res.SessionID
	for range 5 {
		require.NoError(t, bb.cycle(ctx))
	}
	before, writesBefore := bb.sq.Counts(), bb.sq.WritesByQuery()
	const cycles = 10
	for range cycles {
		require.NoError(t, bb.cycle(ctx))
	}
	after, writesAfter := bb.sq.Counts(), bb.sq.WritesByQuery()
	for _, q := range slices.Sorted(maps.Keys(writesAfter)) {
		if d := writesAfter[q] - writesBefore[q]; d > 0 {
			q = strings.Join(strings.Fields(q), " ")
			t.Logf("%.1f writes per cycle of %s", float64(d)/cycles, q[:min(len(q), 110)])
		}
	}
	writes := float64(after.Writes-before.Writes) / cycles
	t.Logf("per cycle: %.1f commits, %.1f writes", float64(after.Commits-before.Commits)/cycles, writes)
	require.Equal(t, 4.0, float64(after.Commits-before.Commits)/cycles)
	require.LessOrEqual(t, writes, 20.0, "statements on the writer per next turn")
	s, err := bb.st.SessionGet(ctx, res.SessionID)
	require.NoError(t, err)
	require.Equal(t, string(store.RunCompleted), s.Status)
}

// TestCycleCountsPostgres pins the round trips one sequential cycle costs
// the PostgreSQL store, the client's polling reads (one round trip each)
// left out: the four transactions of TestCycleCounts and the answer's read.
// A transaction costs one round trip per statement whose answer the runner
// reads before it goes on (none in a cycle: the pause, the question's
// insert, the answer's resume and resolution and the completion are
// MustWin writes) plus one for the writes that follow the last of them,
// the NOTIFY and the COMMIT; BEGIN rides with the first. A transaction of
// one batch sends neither BEGIN nor COMMIT (the server runs the pipeline
// as one implicit transaction): 1 + 1 + 1 (the answer's read) + 1 + 1
// (docs/performance.md "PostgreSQL").
func TestCycleCountsPostgres(t *testing.T) {
	t.Parallel()
	bb := setupBenchPostgres(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, bb.cycle(ctx))
	before, stmtsBefore, clientBefore := bb.pg.RoundTrips(), bb.pg.Statements(), bb.clientReads.Load()
	const cycles = 10
	for range cycles {
		require.NoError(t, bb.cycle(ctx))
	}
	client := bb.clientReads.Load() - clientBefore
	trips := float64(bb.pg.RoundTrips()-before-client) / cycles
	stmts := float64(bb.pg.Statements()-stmtsBefore-client) / cycles
	t.Logf("per cycle: %.1f round trips of the runner, %.1f statements in them", trips, stmts)
	// Half a round trip of slack for the runner's own timers (a lease
	// renewal on a loaded machine); one more per cycle fails.
	require.LessOrEqual(t, trips, 5.5, "round trips per cycle")
	// 31: 4 of them NOTIFY, 4 the answer's read; a round trip's events
	// are one statement per session, its trace rows one, and a session's
	// status rides in its events' statement.
	require.LessOrEqual(t, stmts, 31.5, "statements per cycle")
}

// counts is the SQLite store's counts (zero on PostgreSQL).
func (bb *benchBundle) counts() sqlite.Counts {
	bb.clientMark = bb.clientReads.Load()
	if bb.pg != nil {
		bb.walMark = bb.pgWAL()
		return sqlite.Counts{Writes: bb.pg.RoundTrips()} // round trips, see reportCounts
	}
	return bb.sq.Counts()
}

// BenchmarkPausedRunRSS leaves b.N runs paused on a one-question ask_user
// through the Runner (8 in flight) and reports what each costs the
// process's memory: the growth of RSS and of the live Go heap (after a GC
// and returning freed memory to the OS) between b.N/10 and b.N paused runs,
// divided by the runs in between (and the same over the second half alone:
// SQLite's page caches fill up early and then stop growing), and the
// goroutines left per paused run.
// luban-bench's -paused phase measures the same over HTTP; this one skips
// HTTP and takes minutes instead of half an hour at 100,000.
//
//	go test -run '^$' -bench PausedRunRSS -benchtime 100000x ./agent
func BenchmarkPausedRunRSS(b *testing.B) {
	if b.N < 10 {
		return // the probe run before -benchtime's count; nothing to measure
	}
	bb := setupBench(b)
	ctx := context.Background()
	settled := func() (rss int64, heap uint64, goroutines int) {
		runtime.GC()
		debug.FreeOSMemory()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		status, err := os.ReadFile("/proc/self/status")
		require.NoError(b, err)
		for line := range strings.SplitSeq(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
				require.NoError(b, err)
				rss = kb << 10
			}
		}
		return rss, ms.HeapInuse, runtime.NumGoroutine()
	}
	pauseN := func(n int) {
		work := make(chan struct{}, n)
		for range n {
			work <- struct{}{}
		}
		close(work)
		errs := make(chan error, 8)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range work {
					if _, _, err := bb.pause(ctx); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	first, half := b.N/10, b.N/2
	pauseN(first)
	rss0, heap0, g0 := settled()
	pauseN(half - first)
	rssH, _, _ := settled()
	pauseN(b.N - half)
	rss1, heap1, g1 := settled()
	b.StopTimer()
	n := float64(b.N - first)
	b.ReportMetric(float64(rss1-rss0)/n, "B-RSS/paused-run")
	b.ReportMetric(float64(rss1-rssH)/float64(b.N-half), "B-RSS/paused-run-2nd-half")
	b.ReportMetric((float64(heap1)-float64(heap0))/n, "B-heap/paused-run")
	b.ReportMetric(float64(g1-g0)/n, "goroutines/paused-run")
	b.ReportMetric(float64(rss0)/(1<<20), "MiB-RSS-at-N/10")
	b.ReportMetric(float64(rss1)/(1<<20), "MiB-RSS-at-N")
}
