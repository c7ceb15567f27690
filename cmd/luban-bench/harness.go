package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lubanhq/luban/api"
)

const benchToken = "bench-token"

// harness is the benchmark's client and the fake model, driving a luban
// server (in this process or a child process of its own).
type harness struct {
	srv    serverSide
	model  *http.Server
	fake   *fakeModel
	url    string
	client *http.Client
}

// startHarness starts the fake model and the luban server: in this process
// with -inprocess, else in a child process.
func startHarness(ctx context.Context, cfg *config) (*harness, error) {
	h := &harness{fake: newFakeModel()}
	mln, murl, err := listen()
	if err != nil {
		return nil, err
	}
	h.model = &http.Server{Handler: h.fake}
	go func() { _ = h.model.Serve(mln) }()
	if cfg.inprocess {
		l, err := startLuban(ctx, cfg.dir+"/luban.db", cfg.pgURL(), murl, cfg.sessions)
		if err != nil {
			_ = h.model.Close()
			return nil, err
		}
		h.srv = localServer{l}
	} else {
		c, err := startChild(ctx, cfg, cfg.dir+"/luban.db", murl)
		if err != nil {
			_ = h.model.Close()
			return nil, err
		}
		h.srv = c
	}
	h.url = h.srv.URL()
	h.client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4 * cfg.sessions, MaxIdleConns: 4 * cfg.sessions}}
	return h, nil
}

func (h *harness) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h.client.CloseIdleConnections()
	h.srv.close()
	_ = h.model.Shutdown(ctx)
}

// post sends an authenticated JSON POST and checks the status.
func (h *harness) post(ctx context.Context, path string, body any, want int) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url+path, bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+benchToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return nil, fmt.Errorf("POST %s: %s %s", path, resp.Status, msg)
	}
	return resp, nil
}

// readUntil reads SSE frames until event name and returns its data and the
// instant its "event:" line was read, then drains the stream to its end so
// the connection is reused.
func readUntil(resp *http.Response, name string) ([]byte, time.Time, error) {
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	want := "event: " + name + "\n"
	var at time.Time
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("stream ended before %s: %w", name, err)
		}
		if line == want {
			at = time.Now()
			data, err := br.ReadString('\n')
			if err != nil {
				return nil, time.Time{}, err
			}
			_, _ = io.Copy(io.Discard, br)
			return []byte(data[len("data: "):]), at, nil
		}
		if line == "event: error\n" {
			data, _ := br.ReadString('\n')
			return nil, time.Time{}, fmt.Errorf("error event: %s", data)
		}
	}
}

type pausedRun struct {
	key, sessionID, requestID string
	cardAt                    time.Time
}

// pause starts a run with a unique message and returns once its question
// reached the client.
func (h *harness) pause(ctx context.Context, key string) (*pausedRun, error) {
	resp, err := h.post(ctx, "/api/chat", map[string]string{"message": key}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	data, at, err := readUntil(resp, api.EventUserInputRequired)
	if err != nil {
		return nil, err
	}
	var ir struct {
		ID        string `json:"id"`
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(data, &ir); err != nil {
		return nil, err
	}
	return &pausedRun{key: key, sessionID: ir.SessionID, requestID: ir.ID, cardAt: at}, nil
}

// sample is one measured cycle.
type sample struct {
	overhead, card time.Duration
}

// cycle runs one ask → answer → resume cycle.
func (h *harness) cycle(ctx context.Context, key string) (sample, error) {
	p, err := h.pause(ctx, key)
	if err != nil {
		return sample{}, err
	}
	chunkAt, ok := h.fake.takeChunk(key)
	if !ok {
		return sample{}, errors.New("fake model has no tool-call instant for " + key)
	}
	resumed := h.fake.expect(key)
	sent := time.Now()
	resp, err := h.post(ctx, "/api/chat/continue", map[string]any{"sessionId": p.sessionID, "requestId": p.requestID,
		"selections": []string{"safe"}, "customInput": "", "cancelled": false}, http.StatusOK)
	if err != nil {
		return sample{}, err
	}
	data, _, err := readUntil(resp, api.EventDone)
	if err != nil {
		return sample{}, err
	}
	if !bytes.Contains(data, []byte(`"completed"`)) {
		return sample{}, fmt.Errorf("run did not complete: %s", data)
	}
	var arrived time.Time
	select {
	case arrived = <-resumed:
	case <-ctx.Done():
		return sample{}, ctx.Err()
	}
	return sample{overhead: arrived.Sub(sent), card: p.cardAt.Sub(chunkAt)}, nil
}

type loadResult struct {
	cycles          int
	elapsed         time.Duration
	cyclesPerSec    float64
	overhead, card  []time.Duration
	commitsPerCycle float64       // SQLite commits (shared by concurrent transactions)
	txPerCycle      float64       // transactions luban asked for (InTx and single writes)
	cpu             time.Duration // this process's CPU time (user+system) during the load
	server          serverCounts  // the server process's counters during the load (differences)
	split           bool          // the server ran in a child process (server is its own)
	syscalls        *syscallCounts
	readsBy         bool   // print the reads by query
	mallocs         uint64 // this process's allocations during the load
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[int(p*float64(len(d)-1))]
}

func (r *loadResult) print(out io.Writer) {
	fmt.Fprintf(out, "cycles: %d in %s = %.0f cycles/s\n", r.cycles, r.elapsed.Round(time.Millisecond), r.cyclesPerSec)
	fmt.Fprintf(out, "server overhead per cycle (continue sent → next model request): p50 %s · p95 %s · p99 %s\n",
		pct(r.overhead, .50).Round(time.Microsecond), pct(r.overhead, .95).Round(time.Microsecond), pct(r.overhead, .99).Round(time.Microsecond))
	fmt.Fprintf(out, "tool-call chunk → user_input_required at the client: p50 %s · p95 %s · p99 %s\n",
		pct(r.card, .50).Round(time.Microsecond), pct(r.card, .95).Round(time.Microsecond), pct(r.card, .99).Round(time.Microsecond))
	fmt.Fprintf(out, "transactions per cycle: %.2f · ", r.txPerCycle)
	n := float64(max(r.cycles, 1))
	if r.split {
		fmt.Fprintf(out, "commits per cycle: %.2f · server process CPU per cycle: %s (client and fake model: %s, %.0f allocations)\n",
			r.commitsPerCycle, (r.server.CPU / time.Duration(max(r.cycles, 1))).Round(time.Microsecond), (r.cpu / time.Duration(max(r.cycles, 1))).Round(time.Microsecond), float64(r.mallocs)/n)
	} else {
		fmt.Fprintf(out, "commits per cycle: %.2f · process CPU per cycle (server, fake model and client together): %s\n",
			r.commitsPerCycle, (r.cpu / time.Duration(max(r.cycles, 1))).Round(time.Microsecond))
	}
	who := "server process"
	if !r.split {
		who = "process (server, fake model and client together)"
	}
	fmt.Fprintf(out, "%s per cycle: %.0f allocations · %.1f KB allocated · %.2f reads · %.2f writer statements · %d goroutines at the end\n",
		who, float64(r.server.Mallocs)/n, float64(r.server.Bytes)/n/1000, float64(r.server.Reads)/n, float64(r.server.Writes)/n, r.server.Goroutines)
	if r.readsBy && len(r.server.ReadsBy) > 0 {
		qs := slices.Collect(maps.Keys(r.server.ReadsBy))
		slices.SortFunc(qs, func(a, b string) int { return cmp.Compare(r.server.ReadsBy[b], r.server.ReadsBy[a]) })
		fmt.Fprintln(out, "server reads per cycle by query:")
		for _, q := range qs {
			fmt.Fprintf(out, "  %6.2f  %.100s\n", float64(r.server.ReadsBy[q])/n, strings.Join(strings.Fields(q), " "))
		}
	}
	if r.syscalls != nil {
		r.syscalls.print(out, r.cycles)
	}
}

// serverCPU is the server's CPU time during the load: the server
// process's own when it ran apart, else this whole process's.
func (r *loadResult) serverCPU() time.Duration {
	if r.split {
		return r.server.CPU
	}
	return r.cpu
}

// load runs cycles in cfg.sessions concurrent sessions for cfg.duration
// after cfg.warmup cycles.
func (h *harness) load(ctx context.Context, cfg *config) (*loadResult, error) {
	var seq atomic.Int64
	key := func() string { return fmt.Sprintf("bench %d", seq.Add(1)) }
	if err := h.parallel(ctx, cfg.sessions, cfg.warmup, func(ctx context.Context) error {
		_, err := h.cycle(ctx, key())
		return err
	}); err != nil {
		return nil, fmt.Errorf("warm-up: %w", err)
	}
	child, _ := h.srv.(*childServer)
	if cfg.cpuprofile != "" {
		path := cfg.cpuprofile
		if child != nil {
			if err := child.command("cpuprofile " + cfg.cpuprofile); err != nil {
				return nil, err
			}
			defer func() { _ = child.command("stopcpuprofile") }()
			path += ".client"
		}
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return nil, err
		}
		defer pprof.StopCPUProfile()
	}
	if cfg.trace != "" {
		f, err := os.Create(cfg.trace)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return nil, err
		}
		defer trace.Stop()
	}
	var mu sync.Mutex
	res := &loadResult{readsBy: cfg.readsBy}
	res.split = child != nil
	var tracer *straceRun
	if cfg.strace {
		if child == nil {
			return nil, errors.New("-strace needs the server in its own process (not -inprocess)")
		}
		var err error
		if tracer, err = startStrace(child.pid()); err != nil {
			return nil, err
		}
	}
	before, err := h.srv.counts()
	if err != nil {
		return nil, err
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	start := time.Now()
	deadline := start.Add(cfg.duration)
	err = h.parallel(ctx, cfg.sessions, -1, func(ctx context.Context) error {
		if time.Now().After(deadline) {
			return errStop
		}
		s, err := h.cycle(ctx, key())
		if err != nil {
			return err
		}
		mu.Lock()
		res.overhead = append(res.overhead, s.overhead)
		res.card = append(res.card, s.card)
		mu.Unlock()
		return nil
	})
	res.elapsed = time.Since(start)
	res.cpu = cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	res.mallocs = ms1.Mallocs - ms0.Mallocs
	after, cerr := h.srv.counts()
	if tracer != nil {
		sc, serr := tracer.stop()
		if serr != nil {
			return nil, serr
		}
		res.syscalls = sc
	}
	if err != nil {
		return nil, err
	}
	if cerr != nil {
		return nil, cerr
	}
	res.server = serverCounts{Tx: after.Tx - before.Tx, Commits: after.Commits - before.Commits, Reads: after.Reads - before.Reads,
		Writes: after.Writes - before.Writes, CPU: after.CPU - before.CPU, Mallocs: after.Mallocs - before.Mallocs,
		Bytes: after.Bytes - before.Bytes, Goroutines: after.Goroutines, PID: after.PID, ReadsBy: map[string]int64{}}
	for q, n := range after.ReadsBy {
		if d := n - before.ReadsBy[q]; d > 0 {
			res.server.ReadsBy[q] = d
		}
	}
	res.cycles = len(res.overhead)
	res.cyclesPerSec = float64(res.cycles) / res.elapsed.Seconds()
	res.txPerCycle = float64(res.server.Tx) / float64(res.cycles)
	// Group commit: concurrent transactions share SQLite commits.
	res.commitsPerCycle = float64(res.server.Commits) / float64(res.cycles)
	slices.Sort(res.overhead)
	slices.Sort(res.card)
	if cfg.memprofile != "" && child != nil {
		if err := child.command("memprofile " + cfg.memprofile); err != nil {
			return nil, err
		}
	}
	return res, nil
}

var errStop = errors.New("stop")

// parallel calls fn from n goroutines until it has been called total times
// (total < 0: until fn returns errStop), and returns the first other error.
func (h *harness) parallel(ctx context.Context, n, total int, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var left atomic.Int64
	left.Store(int64(total))
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if total >= 0 && left.Add(-1) < 0 {
					return
				}
				err := fn(ctx)
				if errors.Is(err, errStop) {
					return
				}
				if err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return ctx.Err()
}

// settledRSS collects garbage, returns freed memory to the OS and reads the
// RSS and the live Go heap.
func settledRSS() (rss int64, heap uint64, err error) {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rss, err = rssBytes()
	return rss, ms.HeapInuse, err
}

// pausedRSS leaves runs paused (chat → user_input_required, never answered)
// until each count of cfg.paused is reached and prints the RSS there.
func (h *harness) pausedRSS(ctx context.Context, cfg *config, out io.Writer) error {
	var made atomic.Int64
	type point struct {
		n         int
		rss       int64
		heap      uint64
		goroutine int
	}
	var points []point
	b, err := h.srv.settled()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "paused runs: RSS of the server's process before %.1f MiB (Go heap in use %.1f MiB, %d goroutines)\n", mib(b.RSS), mib(int64(b.Heap)), b.Goroutines)
	start := time.Now()
	for _, target := range cfg.paused {
		need := target - int(made.Load())
		if need > 0 {
			if err := h.parallel(ctx, cfg.sessions, need, func(ctx context.Context) error {
				key := fmt.Sprintf("paused %d", made.Add(1))
				_, err := h.pause(ctx, key)
				h.fake.takeChunk(key) // the fake model keeps nothing per paused run
				return err
			}); err != nil {
				return err
			}
		}
		h.client.CloseIdleConnections()
		p, err := h.srv.settled()
		if err != nil {
			return err
		}
		points = append(points, point{target, p.RSS, p.Heap, p.Goroutines})
		fmt.Fprintf(out, "  %7d paused: RSS %.1f MiB · Go heap in use %.1f MiB · %d goroutines · %s elapsed\n",
			target, mib(p.RSS), mib(int64(p.Heap)), p.Goroutines, time.Since(start).Round(time.Second))
	}
	if len(points) >= 2 {
		a, b := points[len(points)-2], points[len(points)-1]
		n := float64(b.n - a.n)
		fmt.Fprintf(out, "per paused run (%d → %d): RSS %+.0f B · Go heap %+.0f B · goroutines %+d\n",
			a.n, b.n, float64(b.rss-a.rss)/n, (float64(b.heap)-float64(a.heap))/n, b.goroutine-a.goroutine)
	}
	path := h.srv.dbPath()
	if path == "" {
		return nil
	}
	var db, wal int64
	if st, err := os.Stat(path); err == nil {
		db = st.Size()
	}
	if st, err := os.Stat(path + "-wal"); err == nil {
		wal = st.Size()
	}
	fmt.Fprintf(out, "database file %.1f MiB + WAL %.1f MiB\n", mib(db), mib(wal))
	return nil
}

// cpuTime is the user+system CPU time this process used so far. Unlike wall
// time it does not grow when other processes take the CPU.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
