package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// waitFor bounds every wait of the suite on an event, a request or a stream.
// Nothing sleeps: a test waits for the thing it needs, at most this long.
const waitFor = 15 * time.Second

// env is one test's world: a luban server on loopback over a store backend,
// a fake model behind a real provider, and a clock the test may move.
type env struct {
	t       *testing.T
	srv     *lubantest.Server
	store   backend
	model   modelFake
	clock   *clock
	opts    lubantest.Options
	mu      sync.Mutex
	seen    []string // session ids, for the trace artifacts
	stopped bool
}

// setup builds the env of one test: backend and model fake chosen by
// LUBAN_ACCEPTANCE_STORE and LUBAN_ACCEPTANCE_MODEL (see doc.go), then each
// of mods applied to the server options (tools, TTL, sweep interval, ...).
func setup(t *testing.T, mods ...func(o *lubantest.Options)) *env {
	t.Helper()
	e := &env{t: t, clock: &clock{}}
	e.store = pickBackend(t)
	e.model = pickModel(t)
	e.opts = lubantest.Options{Provider: e.model.provider(t), Now: e.clock.now}
	for _, m := range mods {
		m(&e.opts)
	}
	e.start()
	t.Cleanup(e.saveEvidence) // runs before lubantest's own cleanup stops the server
	return e
}

// start starts a server on the backend's data (again after restart).
func (e *env) start() {
	o := e.opts
	e.store.configure(e.t, &o)
	e.srv = lubantest.Start(e.t, o)
	e.stopped = false
}

// restart stops the server (runs keep their checkpoints, the store is
// closed) and starts a new one, with a new runner, on the same data.
func (e *env) restart() {
	e.srv.Stop()
	e.stopped = true
	e.start()
}

func (e *env) remember(sessionID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range e.seen {
		if s == sessionID {
			return
		}
	}
	e.seen = append(e.seen, sessionID)
}

// saveEvidence writes, for a failed test (or every test with
// LUBAN_EVIDENCE=1), the model requests and each
// session's trace beside lubantest's raw SSE artifacts.
func (e *env) saveEvidence() {
	if !lubantest.KeepEvidence(e.t) {
		return
	}
	dir := lubantest.ArtifactDir(e.t)
	if os.MkdirAll(dir, 0o755) != nil {
		return
	}
	var b strings.Builder
	for i, r := range e.model.requests() {
		fmt.Fprintf(&b, "### request %d\n%s\n\n", i+1, r.raw)
	}
	_ = os.WriteFile(filepath.Join(dir, "model_requests.txt"), []byte(b.String()), 0o644)
	if e.stopped {
		return
	}
	e.mu.Lock()
	ids := append([]string(nil), e.seen...)
	e.mu.Unlock()
	// Evidence is best effort: the server may already be stopped (a
	// restarted server's cleanup runs before this one), and collecting
	// evidence must never fail a test.
	for _, id := range ids {
		req, err := http.NewRequest("GET", e.srv.URL+"/api/sessions/"+id+"/trace", nil)
		if err != nil {
			continue
		}
		req.Header.Set("Authorization", "Bearer "+e.srv.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			continue
		}
		var v any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		out, _ := json.MarshalIndent(v, "", "  ")
		_ = os.WriteFile(filepath.Join(dir, "trace_"+id+".json"), out, 0o644)
	}
}

// clock is the runner's clock: real time plus an offset the test moves
// forward, so a test reaches expiresAt without sleeping.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(time.Duration(c.off.Load())) }

// advance moves the clock forward by d.
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

// backend is a store the suite can run on. configure fills the store fields
// of o (DB, or Store); called again after a restart it must reach the same
// data.
type backend struct {
	name      string
	configure func(t testing.TB, o *lubantest.Options)
}

func pickBackend(t *testing.T) backend {
	switch v := os.Getenv("LUBAN_ACCEPTANCE_STORE"); v {
	case "", "sqlite":
		path := filepath.Join(t.TempDir(), "luban.db")
		return backend{name: "sqlite", configure: func(_ testing.TB, o *lubantest.Options) { o.DB = path }}
	case "postgres":
		return postgresBackend(t)
	default:
		t.Fatalf("LUBAN_ACCEPTANCE_STORE=%q: unknown store (known: sqlite, postgres)", v)
		return backend{}
	}
}

func pickModel(t *testing.T) modelFake {
	switch v := os.Getenv("LUBAN_ACCEPTANCE_MODEL"); v {
	case "", "openai":
		return newOpenAIFake(t)
	case "anthropic":
		return newAnthropicFake(t)
	default:
		t.Fatalf("LUBAN_ACCEPTANCE_MODEL=%q: unknown model fake (known: openai, anthropic)", v)
		return nil
	}
}

// waitRequests waits until the fake model received n requests and returns them.
func (e *env) waitRequests(n int) []wireRequest {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	reqs, err := e.model.waitRequests(ctx, n)
	require.NoError(e.t, err)
	return reqs
}
