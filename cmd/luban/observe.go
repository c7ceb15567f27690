package main

import (
	"context"
	"log/slog"
	"os"
	"reflect"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/telemetry"
	"github.com/lubanhq/luban/tool"
)

// observability is what `luban serve` adds around its parts to be watched
// and kept clean (docs/design.md §14): the metrics, the traces, the instrumented
// store, and the retention settings of the pruner.
type observability struct {
	metrics     *telemetry.Metrics
	store       store.Store
	maint       store.Maintainer
	log         *slog.Logger
	retain      time.Duration
	retainAudit time.Duration
	stopTracing func(context.Context) error
}

func (c *Serve) observability(ctx context.Context, log *slog.Logger, cfg serveConfig, st store.Store) (*observability, error) {
	stop, err := telemetry.SetupTracing(ctx, os.Getenv, versionString())
	if err != nil {
		return nil, err
	}
	if telemetry.TracingEnabled(os.Getenv) {
		log.Info("tracing: spans go to OTLP/HTTP", "endpoint", firstSet(os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")))
	}
	system := "sqlite"
	if isPostgres(cfg.db) {
		system = "postgresql"
	}
	m := telemetry.NewMetrics()
	m.SetBuildInfo(version)
	o := &observability{metrics: m, store: telemetry.InstrumentStore(st, m, system), log: log,
		retain: time.Duration(cfg.retain), retainAudit: time.Duration(cfg.retainAudit), stopTracing: stop}
	if mt, ok := st.(store.Maintainer); ok {
		o.maint = mt
		m.WatchStore(mt, log)
	}
	return o, nil
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// tool wraps t with its metrics and span.
func (o *observability) tool(t tool.Tool) tool.Tool { return telemetry.InstrumentTool(t, o.metrics) }

// shutdown flushes the spans still queued (bounded by 5 s).
func (o *observability) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := o.stopTracing(ctx); err != nil {
		o.log.Warn("tracing: flush at shutdown", "err", err)
	}
}

// pruneInterval is how often the pruner looks for rows past retention.
const pruneInterval = time.Hour

// prune deletes what retention allows (--retain, --retain-audit) once at
// start and then every pruneInterval, until ctx is done.
func (o *observability) prune(ctx context.Context) {
	if o.maint == nil || (o.retain <= 0 && o.retainAudit <= 0) {
		return
	}
	t := time.NewTicker(pruneInterval)
	defer t.Stop()
	for {
		if _, err := pruneOnce(ctx, o.maint, time.Now(), o.retain, o.retainAudit, o.log); err != nil && ctx.Err() == nil {
			o.log.Error("retention: prune", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruneOnce calls Prune until it deletes nothing and returns the total. A
// zero retention keeps that kind of row forever.
func pruneOnce(ctx context.Context, m store.Maintainer, now time.Time, retain, retainAudit time.Duration, log *slog.Logger) (store.PruneResult, error) {
	p := &store.PruneParams{}
	if retain > 0 {
		p.EventsBefore = now.Add(-retain)
	}
	if retainAudit > 0 {
		p.AuditBefore = now.Add(-retainAudit)
	}
	var total store.PruneResult
	for ctx.Err() == nil {
		res, err := m.Prune(ctx, p)
		if err != nil {
			return total, err
		}
		total.Add(res)
		if res.Total() == 0 {
			break
		}
	}
	if total.Total() > 0 {
		log.Info("retention: pruned", "events", total.Events, "trace", total.Trace, "audit", total.Audit, "feed", total.Feed, "webhooks", total.Webhooks)
	}
	return total, ctx.Err()
}

// instrumentTools wraps every tool of reg that the run executes itself
// with its metrics and span (telemetry.InstrumentTool). Call it once, after
// every tool is registered and before the runner starts.
func (o *observability) instrumentTools(reg *tool.Registry) {
	for _, name := range reg.Names() {
		if e, ok := reg.Get(name); ok && e.Tool != nil {
			e.Tool = o.tool(e.Tool)
		}
	}
}

// instrumentAgents wraps every agent's provider with its metrics and span
// (telemetry.InstrumentProvider), once per provider value, so agents that
// share a provider keep sharing one.
func (o *observability) instrumentAgents(agents []*agent.Agent) {
	wrapped := map[any]model.Provider{}
	for _, a := range agents {
		if a.Provider == nil {
			continue
		}
		if !reflect.TypeOf(a.Provider).Comparable() {
			a.Provider = telemetry.InstrumentProvider(a.Provider, o.metrics)
			continue
		}
		w, ok := wrapped[a.Provider]
		if !ok {
			w = telemetry.InstrumentProvider(a.Provider, o.metrics)
			wrapped[a.Provider] = w
		}
		a.Provider = w
	}
}
