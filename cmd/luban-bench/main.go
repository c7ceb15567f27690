// Command luban-bench measures what a pause costs (issue 8, docs/performance.md).
//
// It starts a real luban server (the same agent.Runner, server.Server and
// SQLite store `luban serve` builds) on a loopback port, with a zero-latency
// fake OpenAI-compatible model on another, and drives it over HTTP exactly as
// the page does: N concurrent sessions, each running
// chat → user_input_required → continue → resume → done cycles. It prints
//
//   - the server's overhead per cycle, p50/p95/p99: from the client sending
//     POST /api/chat/continue to the fake model receiving the next model
//     request (both clocks are this process's);
//   - cycles per second;
//   - tool call → card: from the fake model flushing its tool-call chunk to
//     the client reading the `event: user_input_required` bytes;
//   - the commits luban makes per cycle (counted at the store interface) and
//     the ceiling: plain Go on the same SQLite settings committing that many
//     small transactions per cycle, with the ratio luban ÷ ceiling;
//   - the process RSS (after a GC) with 10,000 and 100,000 runs paused at
//     once, and the growth per paused run between the two.
//
// Usage:
//
//	go run ./cmd/luban-bench [-sessions 8] [-duration 5s] [-paused 10000,100000] [-cpuprofile cpu.out] [-trace trace.out]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "luban-bench:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	sessions   int
	duration   time.Duration
	warmup     int
	paused     []int
	dir        string
	db         string
	cpuprofile string
	memprofile string
	trace      string
	skipLoad   bool
	inprocess  bool
	strace     bool
	readsBy    bool
	child      bool   // this process is the server of a parent luban-bench
	modelURL   string // -child: the parent's fake model
}

// pgURL is -db when it names PostgreSQL, else "".
func (c *config) pgURL() string {
	if isPostgres(c.db) {
		return c.db
	}
	return ""
}

func parseFlags(args []string, out io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("luban-bench", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.IntVar(&c.sessions, "sessions", 8, "concurrent sessions driving cycles")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "how long the cycle load (and the ceiling) runs")
	fs.IntVar(&c.warmup, "warmup", 200, "cycles run before measuring")
	paused := fs.String("paused", "10000,100000", "comma list of paused-run counts at which RSS is measured (empty: skip)")
	fs.StringVar(&c.db, "db", "", "the store: empty for SQLite in -dir, or a postgres:// URL (a fresh schema is created and dropped)")
	fs.StringVar(&c.dir, "dir", "", "directory for the SQLite files (default: a temporary one, removed at the end)")
	fs.StringVar(&c.cpuprofile, "cpuprofile", "", "write a CPU profile of the cycle load to this file (the server process's; the client's and fake model's to this file with .client appended)")
	fs.StringVar(&c.memprofile, "memprofile", "", "write the server process's allocations (warm-up and load) to this file (go tool pprof -sample_index alloc_objects)")
	fs.StringVar(&c.trace, "trace", "", "write an execution trace of the cycle load to this file (go tool trace)")
	fs.BoolVar(&c.skipLoad, "skip-load", false, "skip the cycle load and the ceiling (RSS only)")
	fs.BoolVar(&c.inprocess, "inprocess", false, "run the server in this process (default: a child process, so its CPU, allocations and system calls are its own)")
	fs.BoolVar(&c.strace, "strace", false, "count the server process's system calls during the load (strace -c -f; slows the load)")
	fs.BoolVar(&c.readsBy, "reads", false, "print the server's reads per cycle by query (SQLite)")
	fs.BoolVar(&c.child, "child", false, "internal: be the server process of a parent luban-bench")
	fs.StringVar(&c.modelURL, "model-url", "", "internal: with -child, the fake model's URL")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	for _, s := range strings.Split(*paused, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("-paused: %q is not a positive count", s)
		}
		c.paused = append(c.paused, n)
	}
	if c.sessions <= 0 {
		return nil, fmt.Errorf("-sessions must be positive")
	}
	return c, nil
}

func run(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parseFlags(args, out)
	if err != nil {
		return err
	}
	if cfg.child {
		return serveChild(ctx, cfg, os.Stdin, out)
	}
	dir := cfg.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "luban-bench-*"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		cfg.dir = dir
	}
	fmt.Fprintf(out, "luban-bench · %s %s/%s · %d CPU (GOMAXPROCS %d) · %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH,
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cpuModel())
	fmt.Fprintf(out, "sessions %d · duration %s · database directory %s\n\n", cfg.sessions, cfg.duration, dir)

	var pgURL string
	if cfg.db != "" {
		if !isPostgres(cfg.db) {
			return fmt.Errorf("-db: %q is not a postgres:// URL (leave it empty for SQLite)", cfg.db)
		}
		pgURL = cfg.db
		fmt.Fprintf(out, "store: PostgreSQL (a fresh schema)\n\n")
	}
	h, err := startHarness(ctx, cfg)
	if err != nil {
		return err
	}
	defer h.close()

	if !cfg.skipLoad {
		res, err := h.load(ctx, cfg)
		if err != nil {
			return err
		}
		res.print(out)
		if pgURL != "" {
			fmt.Fprintf(out, "ceiling: measured for SQLite only\n\n")
		} else if err := printCeiling(ctx, out, dir, cfg, res); err != nil {
			return err
		}
	}
	if len(cfg.paused) > 0 {
		if err := h.pausedRSS(ctx, cfg, out); err != nil {
			return err
		}
	}
	return nil
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// rssBytes is the resident set size of this process (Linux /proc).
func rssBytes() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/self/status")
}

// printCeiling measures and prints the commit ceiling for res's commits per
// cycle, and luban's ratio to it.
func printCeiling(ctx context.Context, out io.Writer, dir string, cfg *config, res *loadResult) error {
	ceil, err := ceiling(ctx, dir+"/ceiling.db", cfg.sessions, cfg.duration, res.commitsPerCycle)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "ceiling (plain Go, same SQLite settings, %.2f commits per cycle): %.0f commits/s = %.0f cycles/s\n",
		res.commitsPerCycle, ceil.commitsPerSec, ceil.cyclesPerSec)
	fmt.Fprintf(out, "ceiling CPU per cycle: %s\n", (time.Duration(res.commitsPerCycle * float64(ceil.cpuPerCommit))).Round(time.Microsecond))
	fmt.Fprintf(out, "ratio luban ÷ ceiling: %.0f %% (cycles/s) · %.0f %% (CPU per cycle, ceiling ÷ luban's server)\n\n", 100*res.cyclesPerSec/ceil.cyclesPerSec,
		100*res.commitsPerCycle*float64(ceil.cpuPerCommit)/(float64(res.serverCPU())/float64(max(res.cycles, 1))))
	return nil
}
