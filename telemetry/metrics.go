// Package telemetry is how luban is watched (docs/design.md §14): Prometheus
// metrics (Metrics, fed by the decorators InstrumentProvider,
// InstrumentTool and InstrumentStore, by the HTTP middleware of package
// server and by a collector that counts rows at scrape time),
// OpenTelemetry traces (SetupTracing; spans for model calls, tool calls and
// store transactions are made by the same decorators) and trace ids in log
// lines (LogHandler). Labels never hold a session id, a request id or free
// text: only methods, route patterns, status codes, provider, tool and
// status names.
package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/lubanhq/luban/store"
)

// Metrics holds luban's Prometheus metrics on a registry of their own (with
// the Go runtime and process collectors). Every name starts with luban_;
// durations are histograms in seconds. The list is in docs/operations.md.
// A nil *Metrics records nothing.
type Metrics struct {
	reg *prometheus.Registry

	httpRequests *prometheus.CounterVec
	httpDuration *prometheus.HistogramVec

	modelCalls    *prometheus.CounterVec
	modelDuration *prometheus.HistogramVec
	modelRetries  *prometheus.CounterVec

	toolCalls    *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec

	runsStarted    prometheus.Counter
	runsFinished   *prometheus.CounterVec
	leaseTakeovers prometheus.Counter

	interactionsAsked    prometheus.Counter
	interactionsResolved *prometheus.CounterVec
	answerSeconds        *prometheus.HistogramVec

	storeTx *prometheus.HistogramVec
}

// NewMetrics returns the metrics, registered on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.httpRequests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_http_requests_total",
		Help: "HTTP requests served, by method, route pattern and status code."}, []string{"method", "route", "code"})
	m.httpDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "luban_http_request_duration_seconds",
		Help:    "Time from a request's arrival to its handler's return (SSE streams: until the stream ends), by method and route pattern.",
		Buckets: prometheus.DefBuckets}, []string{"method", "route"})
	m.modelCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_model_calls_total",
		Help: "Model calls, by provider (as --model names it) and outcome (ok, error)."}, []string{"provider", "outcome"})
	m.modelDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "luban_model_call_duration_seconds",
		Help:    "Latency of a model call including its retries, by provider and outcome.",
		Buckets: []float64{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160}}, []string{"provider", "outcome"})
	m.modelRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_model_retries_total",
		Help: "Retried attempts of model calls (a call that succeeded at its third attempt counts 2), by provider."}, []string{"provider"})
	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_tool_calls_total",
		Help: "Calls of tools the run executes itself (not the ask tools), by tool and outcome (ok, error)."}, []string{"tool", "outcome"})
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "luban_tool_call_duration_seconds",
		Help: "Duration of a tool call, by tool.", Buckets: prometheus.DefBuckets}, []string{"tool"})
	m.runsStarted = prometheus.NewCounter(prometheus.CounterOpts{Name: "luban_runs_started_total",
		Help: "Runs started by this process."})
	m.runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_runs_finished_total",
		Help: "Runs this process moved to an end state, by status (completed, cancelled, expired, failed)."}, []string{"status"})
	m.leaseTakeovers = prometheus.NewCounter(prometheus.CounterOpts{Name: "luban_lease_takeovers_total",
		Help: "Runs this process took over after another process's lease expired (a crashed or stopped replica)."})
	m.interactionsAsked = prometheus.NewCounter(prometheus.CounterOpts{Name: "luban_interactions_requested_total",
		Help: "Questions put to people (ask_user / AskUser calls that paused a run)."})
	m.interactionsResolved = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "luban_interactions_resolved_total",
		Help: "Questions resolved, by status (answered, cancelled, expired)."}, []string{"status"})
	m.answerSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "luban_interaction_answer_seconds",
		Help:    "Time from a question being asked to its resolution, by status (answered, cancelled, expired).",
		Buckets: []float64{1, 5, 15, 30, 60, 300, 900, 1800, 3600, 4 * 3600, 24 * 3600}}, []string{"status"})
	m.storeTx = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "luban_store_transaction_duration_seconds",
		Help:    "Duration of a store transaction (begin to commit or rollback), by outcome (commit, rollback).",
		Buckets: []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}}, []string{"outcome"})
	// The Go runtime's metrics come from runtime/metrics, not MemStats: in
	// OpenMetrics, MemStats' go_memstats_alloc_bytes (a gauge) and
	// go_memstats_alloc_bytes_total (a counter, family
	// go_memstats_alloc_bytes) are one family twice, which Prometheus'
	// OpenMetrics parser rejects. The memory classes say the same and more.
	m.reg.MustRegister(collectors.NewGoCollector(collectors.WithGoCollectorMemStatsMetricsDisabled(),
		collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsGC, collectors.MetricsMemory, collectors.MetricsScheduler)), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.httpRequests, m.httpDuration, m.modelCalls, m.modelDuration, m.modelRetries, m.toolCalls, m.toolDuration,
		m.runsStarted, m.runsFinished, m.leaseTakeovers, m.interactionsAsked, m.interactionsResolved, m.answerSeconds, m.storeTx)
	return m
}

// Registry is the registry the metrics are on (to add more collectors).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format, or in
// OpenMetrics 1.0 when the scraper's Accept asks for
// application/openmetrics-text (Prometheus does); only OpenMetrics carries
// the exemplars that link the histograms to traces (a trace_id and span_id
// of the sampled span the observation was made in).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{EnableOpenMetrics: true})
}

// SetBuildInfo adds luban_build_info{version, revision, goversion} = 1:
// version as given (the release version, or "dev"), revision the VCS
// commit the binary was built from ("" when unknown) and goversion the Go
// release that built it. Call it once.
func (m *Metrics) SetBuildInfo(version string) {
	if m == nil {
		return
	}
	revision, goversion := "", runtime.Version()
	if bi, ok := debug.ReadBuildInfo(); ok {
		if version == "" || version == "dev" {
			if bi.Main.Version != "" {
				version = bi.Main.Version
			}
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				revision = s.Value
			}
		}
	}
	if version == "" {
		version = "dev"
	}
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "luban_build_info",
		Help: "Always 1: the version, VCS revision and Go version of the running binary."}, []string{"version", "revision", "goversion"})
	g.WithLabelValues(version, revision, goversion).Set(1)
	m.reg.MustRegister(g)
}

// observe records v on o, with the trace and span id of ctx's span as an
// exemplar when that span is sampled.
func observe(ctx context.Context, o prometheus.Observer, v float64) {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		if eo, ok := o.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(v, prometheus.Labels{"trace_id": sc.TraceID().String(), "span_id": sc.SpanID().String()})
			return
		}
	}
	o.Observe(v)
}

var knownMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true}

// ObserveHTTP records one served request. route is the pattern that served
// it (never a raw path); a method outside the standard ones is "OTHER".
// ctx is the request's: its sampled span is the duration's exemplar.
func (m *Metrics) ObserveHTTP(ctx context.Context, method, route string, code int, d time.Duration) {
	if m == nil {
		return
	}
	if !knownMethods[method] {
		method = "OTHER"
	}
	m.httpRequests.WithLabelValues(method, route, strconv.Itoa(code)).Inc()
	observe(ctx, m.httpDuration.WithLabelValues(method, route), d.Seconds())
}

// WatchStore adds the gauges read from the database at each scrape:
// luban_runs{status} (runs by status, every run the database holds) and
// luban_interactions_pending. A failed count is logged and leaves the
// gauges out of that scrape.
func (m *Metrics) WatchStore(st store.Maintainer, log *slog.Logger) {
	if log == nil {
		log = slog.Default()
	}
	m.reg.MustRegister(&storeCollector{st: st, log: log,
		runs:    prometheus.NewDesc("luban_runs", "Runs in the database, by status (running, waiting_input, completed, cancelled, expired, failed).", []string{"status"}, nil),
		pending: prometheus.NewDesc("luban_interactions_pending", "Questions waiting for an answer.", nil, nil)})
}

type storeCollector struct {
	st            store.Maintainer
	log           *slog.Logger
	runs, pending *prometheus.Desc
}

func (c *storeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.runs
	ch <- c.pending
}

// runStatuses are always exported, at 0 when no run has them.
var runStatuses = []store.RunStatus{store.RunRunning, store.RunWaitingInput, store.RunCompleted, store.RunCancelled, store.RunExpired, store.RunFailed}

func (c *storeCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.st.Stats(ctx)
	if err != nil {
		c.log.Warn("metrics: counting runs", "err", err)
		return
	}
	seen := map[store.RunStatus]bool{}
	for _, s := range runStatuses {
		seen[s] = true
		ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(st.Runs[s]), string(s))
	}
	for s, n := range st.Runs {
		if !seen[s] {
			ch <- prometheus.MustNewConstMetric(c.runs, prometheus.GaugeValue, float64(n), string(s))
		}
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(st.PendingInteractions))
}
