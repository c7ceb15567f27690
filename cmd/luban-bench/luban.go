package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/model/openai"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// lubanServer is the server under test: the store, agent.Runner and
// server.Server `luban serve` builds, listening on loopback.
type lubanServer struct {
	st      *countingStore
	raw     store.Store
	path    string // the SQLite file; "" on PostgreSQL
	dropDB  func()
	runner  *agent.Runner
	srv     *server.Server
	hs      *http.Server
	url     string
	stopRun context.CancelFunc
	runDone chan struct{}
}

func listen() (net.Listener, string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", err
	}
	return ln, "http://" + ln.Addr().String(), nil
}

// startLuban builds the server the way `luban serve` does (cmd/luban
// serve.go): SQLite store at dbPath (or PostgreSQL at pgURL), the ask tools
// plus current_time and list_files, the openai provider pointed at the
// model at modelURL.
func startLuban(ctx context.Context, dbPath, pgURL, modelURL string, sessions int) (*lubanServer, error) {
	l := &lubanServer{}
	var err error
	if pgURL != "" {
		u, drop, err := pgSchema(ctx, pgURL)
		if err != nil {
			return nil, err
		}
		l.dropDB = drop
		if l.raw, err = postgres.Open(ctx, u, &postgres.Options{MaxConns: int32(max(4, 2*sessions))}); err != nil {
			drop()
			return nil, err
		}
	} else {
		if l.raw, err = sqlite.Open(ctx, dbPath, nil); err != nil {
			return nil, err
		}
		l.path = dbPath
	}
	l.st = &countingStore{Store: l.raw}
	provider, err := openai.New(openai.Options{BaseURL: modelURL + "/v1", Model: "bench", MaxRetries: -1})
	if err != nil {
		return nil, err
	}
	ws, _ := os.Getwd()
	reg := tool.NewRegistry()
	if err := reg.Register(tool.CurrentTime(nil), true); err != nil {
		return nil, err
	}
	if err := reg.Register(tool.ListFiles(ws), true); err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	l.runner, err = agent.New(agent.Options{Store: l.st, Tools: reg, Workspace: ws, Logger: log,
		Agents: []*agent.Agent{{Name: "default", Provider: provider, Tools: tool.Allowlist{"ask_user", "AskUser", "current_time", "list_files"}}}})
	if err != nil {
		return nil, err
	}
	l.srv, err = server.New(server.Options{Runner: l.runner, Tokens: []string{benchToken}, Logger: log})
	if err != nil {
		return nil, err
	}
	ln, url, err := listen()
	if err != nil {
		return nil, err
	}
	l.url = url
	l.hs = &http.Server{Handler: l.srv, ReadHeaderTimeout: 10 * time.Second}
	l.hs.RegisterOnShutdown(l.srv.Close)
	go func() { _ = l.hs.Serve(ln) }()
	runCtx, cancel := context.WithCancel(context.Background())
	l.stopRun, l.runDone = cancel, make(chan struct{})
	go func() { defer close(l.runDone); _ = l.runner.Serve(runCtx) }()
	return l, nil
}

func (l *lubanServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.hs.Shutdown(ctx)
	l.stopRun()
	<-l.runDone
	_ = l.raw.Close()
	if l.dropDB != nil {
		l.dropDB()
	}
}

// serverCounts is a snapshot of the counters of the process the luban
// server runs in; load reports the difference of two per cycle.
type serverCounts struct {
	Tx         int64         // transactions luban asked for (countingStore)
	Commits    int64         // SQLite commits (group commit shares them); Tx on PostgreSQL
	Reads      int64         // statements on SQLite's reader pool
	Writes     int64         // statements on SQLite's writer
	CPU        time.Duration // the process's user+system CPU time
	Mallocs    uint64        // heap allocations (runtime.MemStats.Mallocs)
	Bytes      uint64        // bytes allocated (runtime.MemStats.TotalAlloc)
	Goroutines int
	PID        int
	ReadsBy    map[string]int64 // statements on the reader pool by query text
}

func (l *lubanServer) counts() serverCounts {
	c := serverCounts{Tx: l.st.commits.Load(), CPU: cpuTime(), Goroutines: runtime.NumGoroutine(), PID: os.Getpid()}
	c.Commits = c.Tx
	if sq, ok := l.raw.(*sqlite.Store); ok {
		n := sq.Counts()
		c.Commits, c.Reads, c.Writes = n.Commits, n.Reads, n.Writes
		c.ReadsBy = sq.ReadsByQuery()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	c.Mallocs, c.Bytes = ms.Mallocs, ms.TotalAlloc
	return c
}

// rssPoint is the process's memory after a GC.
type rssPoint struct {
	RSS        int64
	Heap       uint64
	Goroutines int
}

func settled() (rssPoint, error) {
	rss, heap, err := settledRSS()
	return rssPoint{RSS: rss, Heap: heap, Goroutines: runtime.NumGoroutine()}, err
}
