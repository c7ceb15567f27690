package telemetry_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	lmodel "github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/telemetry"
	"github.com/lubanhq/luban/tool"
)

// turns plays assistant turns in order; running out is a model error.
type turns struct {
	mu   sync.Mutex
	next []lmodel.Message
}

func (m *turns) Name() string { return "fake:test-model" }

func (m *turns) Generate(ctx context.Context, req *lmodel.Request, onDelta func(string)) (*lmodel.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.next) == 0 {
		return nil, errors.New("turns: no turn left")
	}
	msg := m.next[0]
	m.next = m.next[1:]
	msg.Role = lmodel.RoleAssistant
	reason := "stop"
	if len(msg.ToolCalls) > 0 {
		reason = "tool_calls"
	}
	return &lmodel.Response{Message: msg, FinishReason: reason, Retries: 1}, nil
}

const askArgs = `{"title":"Which way?","mode":"single","options":[{"id":"safe","label":"Safe"},{"id":"fast","label":"Fast"}]}`

// cycle is one server with metrics on a SQLite file.
type cycle struct {
	api     *lubantest.Server
	metrics *telemetry.Metrics
	url     string
}

func start(t *testing.T) *cycle { return startLogging(t, io.Discard) }

// startLogging is start with the server's and the runner's JSON log on w,
// trace ids included (telemetry.LogHandler).
func startLogging(t *testing.T, w io.Writer) *cycle {
	t.Helper()
	raw, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "luban.db"), nil)
	require.NoError(t, err)
	m := telemetry.NewMetrics()
	m.WatchStore(raw, nil)
	st := telemetry.InstrumentStore(raw, m, "sqlite")
	reg := tool.NewRegistry()
	require.NoError(t, reg.Register(telemetry.InstrumentTool(tool.CurrentTime(nil), m), true))
	prov := &turns{next: []lmodel.Message{
		{ToolCalls: []lmodel.ToolCall{{ID: "call_t", Name: "current_time", Arguments: `{}`}}},
		{ToolCalls: []lmodel.ToolCall{{ID: "call_a", Name: "ask_user", Arguments: askArgs}}},
		{Content: "Done, the safe way."},
	}}
	log := slog.New(telemetry.LogHandler(slog.NewJSONHandler(w, nil)))
	runner, err := agent.New(agent.Options{Store: st, Tools: reg, Workspace: t.TempDir(), Logger: log, SweepInterval: 50 * time.Millisecond, Step: telemetry.StepSpan,
		Agents: []*agent.Agent{{Name: "default", Provider: telemetry.InstrumentProvider(prov, m), Tools: tool.Allowlist{"ask_user", "current_time"}}}})
	require.NoError(t, err)
	srv, err := server.New(server.Options{Runner: runner, Tokens: []string{"test-token", "other-token"}, Logger: log, Metrics: m})
	require.NoError(t, err)
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.RegisterOnShutdown(srv.Close)
	hs.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = runner.Serve(ctx) }()
	t.Cleanup(func() {
		srv.Close()
		hs.Close()
		cancel()
		<-done
		raw.Close()
	})
	return &cycle{api: lubantest.Attach(t, hs.URL, "test-token"), metrics: m, url: hs.URL}
}

// run asks, answers and waits for the run's end; it returns the session id.
func (c *cycle) run(t *testing.T) string {
	t.Helper()
	evs, err := c.api.Chat("", "do the thing").Until("user_input_required", 10*time.Second)
	require.NoError(t, err)
	var sess api.SessionEvent
	first, ok := lubantest.Find(evs, "session")
	require.True(t, ok)
	require.NoError(t, first.Decode(&sess))
	ask, _ := lubantest.Find(evs, "user_input_required")
	var req struct {
		ID string `json:"id"`
	}
	require.NoError(t, ask.Decode(&req))
	resp := c.api.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess.SessionID, "requestId": req.ID, "selections": []string{"safe"}}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	c.api.EventsUntil(sess.SessionID, 0, "done", 10*time.Second)
	var tr map[string]any
	require.Equal(t, http.StatusOK, c.api.JSON("GET", "/api/sessions/"+sess.SessionID, nil, &tr))
	return sess.SessionID
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "/metrics needs no token")
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	require.NoError(t, err)
	return fams
}

// value is the counter, gauge or histogram count of the series of name
// whose labels include want; -1 when there is none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return -1
	}
next:
	for _, m := range f.Metric {
		got := map[string]string{}
		for _, l := range m.Label {
			got[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if got[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue()
		case m.Gauge != nil:
			return m.Gauge.GetValue()
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount())
		}
	}
	return -1
}

func TestMetricsAfterACycle(t *testing.T) {
	t.Parallel()
	c := start(t)
	before := scrape(t, c.url)
	require.Equal(t, float64(0), value(before, "luban_runs", map[string]string{"status": "completed"}))
	require.Equal(t, float64(0), value(before, "luban_runs_started_total", nil))

	sid := c.run(t)
	// The stream of POST /api/chat is counted when its handler returns,
	// which may be after the client stopped reading: wait on the registry
	// (not /metrics, which counts its own requests) for it.
	require.Eventually(t, func() bool {
		fams, err := c.metrics.Registry().Gather()
		require.NoError(t, err)
		byName := map[string]*dto.MetricFamily{}
		for _, f := range fams {
			byName[f.GetName()] = f
		}
		return value(byName, "luban_http_requests_total", map[string]string{"method": "POST", "route": "/api/chat", "code": "200"}) == 1
	}, 10*time.Second, 5*time.Millisecond)
	fams := scrape(t, c.url)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"luban_runs_started_total", nil, 1},
		{"luban_runs_finished_total", map[string]string{"status": "completed"}, 1},
		{"luban_runs", map[string]string{"status": "completed"}, 1},
		{"luban_runs", map[string]string{"status": "waiting_input"}, 0},
		{"luban_interactions_pending", nil, 0},
		{"luban_interactions_requested_total", nil, 1},
		{"luban_interactions_resolved_total", map[string]string{"status": "answered"}, 1},
		{"luban_interaction_answer_seconds", map[string]string{"status": "answered"}, 1},
		{"luban_model_calls_total", map[string]string{"provider": "fake:test-model", "outcome": "ok"}, 3},
		{"luban_model_call_duration_seconds", map[string]string{"provider": "fake:test-model", "outcome": "ok"}, 3},
		{"luban_model_retries_total", map[string]string{"provider": "fake:test-model"}, 3},
		{"luban_tool_calls_total", map[string]string{"tool": "current_time", "outcome": "ok"}, 1},
		{"luban_tool_call_duration_seconds", map[string]string{"tool": "current_time"}, 1},
		{"luban_http_requests_total", map[string]string{"method": "POST", "route": "/api/chat", "code": "200"}, 1},
		{"luban_http_requests_total", map[string]string{"method": "POST", "route": "/api/chat/continue", "code": "202"}, 1},
		{"luban_http_requests_total", map[string]string{"method": "GET", "route": "/api/sessions/{id}", "code": "200"}, 1},
		{"luban_http_requests_total", map[string]string{"method": "GET", "route": "/metrics", "code": "200"}, 1},
		{"luban_lease_takeovers_total", nil, 0},
	} {
		require.Equal(t, tc.want, value(fams, tc.name, tc.labels), "%s%v", tc.name, tc.labels)
	}
	require.Greater(t, value(fams, "luban_store_transaction_duration_seconds", map[string]string{"outcome": "commit"}), float64(0))

	// No label anywhere holds a session id, a request id or message text.
	for name, f := range fams {
		require.True(t, strings.HasPrefix(name, "luban_") || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_"), name)
		for _, m := range f.Metric {
			for _, l := range m.Label {
				require.NotContains(t, l.GetValue(), sid, "%s label %s", name, l.GetName())
				require.NotContains(t, l.GetValue(), "do the thing", "%s label %s", name, l.GetName())
			}
		}
	}
}

func TestLeaseTakeoverIsCounted(t *testing.T) {
	t.Parallel()
	raw, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "luban.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { raw.Close() })
	m := telemetry.NewMetrics()
	st := telemetry.InstrumentStore(raw, m, "sqlite")
	ctx := context.Background()
	now := time.Now()
	_, err = st.SessionCreate(ctx, &store.SessionCreateParams{ID: "s1", Owner: "o", Now: now})
	require.NoError(t, err)
	_, err = st.RunInsert(ctx, &store.RunInsertParams{ID: "r1", SessionID: "s1", Agent: "a", LeaseOwner: "dead-process", LeaseUntil: now.Add(time.Second), Now: now})
	require.NoError(t, err)

	later := now.Add(time.Minute)
	runs, err := st.RunListRecoverable(ctx, &store.RunListRecoverableParams{Now: later, Limit: 10})
	require.NoError(t, err)
	require.Len(t, runs, 1)
	won, err := st.RunLease(ctx, &store.RunLeaseParams{ID: "r1", Owner: "me", Until: later.Add(time.Minute), Now: later})
	require.NoError(t, err)
	require.True(t, won)
	// A heartbeat of the new owner is no takeover.
	won, err = st.RunLease(ctx, &store.RunLeaseParams{ID: "r1", Owner: "me", Until: later.Add(2 * time.Minute), Now: later})
	require.NoError(t, err)
	require.True(t, won)

	hs := httptest.NewServer(m.Handler())
	t.Cleanup(hs.Close)
	fams := scrape(t, hs.URL)
	require.Equal(t, float64(1), value(fams, "luban_lease_takeovers_total", nil))
	require.Equal(t, float64(1), value(fams, "luban_runs_started_total", nil))
}

// A wrapped tool keeps its own argument rules (tool.ArgsChecker): the run
// asks them before an approval, through the wrapper serve installs.
func TestInstrumentToolKeepsArgsChecker(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	wrapped := telemetry.InstrumentTool(tool.WriteFile(ws), nil)
	c, ok := wrapped.(tool.ArgsChecker)
	require.True(t, ok)
	ds := c.CheckArgs([]byte(`{"path":"../out.md","content":"x"}`))
	require.Len(t, ds, 1)
	require.Equal(t, "path", ds[0].Field)
	require.Contains(t, ds[0].Message, "outside the workspace")
	require.Empty(t, c.CheckArgs([]byte(`{"path":"in.md","content":"x"}`)))
	require.Empty(t, telemetry.InstrumentTool(tool.CurrentTime(nil), nil).(tool.ArgsChecker).CheckArgs([]byte(`{}`)))
}
