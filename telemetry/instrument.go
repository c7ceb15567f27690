package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// ScopeName is the instrumentation scope of luban's own spans.
const ScopeName = "github.com/lubanhq/luban"

func tracer() trace.Tracer { return otel.Tracer(ScopeName) }

// InstrumentProvider wraps p so that every Generate is counted and timed
// (luban_model_calls_total, luban_model_call_duration_seconds,
// luban_model_retries_total, labelled with p.Name()) and is a client span
// named "chat <model>" with the OpenTelemetry GenAI attributes
// gen_ai.operation.name, gen_ai.provider.name, gen_ai.request.model,
// gen_ai.response.model and gen_ai.response.finish_reasons, and the call's
// token counts gen_ai.usage.input_tokens and gen_ai.usage.output_tokens
// when the provider reported them (model.Response.Usage), plus
// luban.model.retries. m may be nil (spans only).
func InstrumentProvider(p model.Provider, m *Metrics) model.Provider {
	name := p.Name()
	system, mdl, ok := strings.Cut(name, ":")
	if !ok {
		mdl = name
	}
	return &instrumentedProvider{Provider: p, m: m, name: name, system: system, model: mdl}
}

type instrumentedProvider struct {
	model.Provider
	m                   *Metrics
	name, system, model string
}

func (p *instrumentedProvider) Generate(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
	ctx, span := tracer().Start(ctx, "chat "+p.model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", p.system),
		attribute.String("gen_ai.request.model", p.model),
		attribute.Int("luban.model.messages", len(req.Messages)),
		attribute.Int("luban.model.tools", len(req.Tools)),
	))
	span.SetAttributes(runAttrs(ctx)...)
	defer span.End()
	start := time.Now()
	res, err := p.Provider.Generate(ctx, req, onDelta)
	d := time.Since(start)
	retries := 0
	outcome := "ok"
	if err != nil {
		outcome = "error"
		var ce *model.CallError
		if errors.As(err, &ce) {
			retries = ce.Retries
		}
		span.RecordError(err)
		span.SetStatus(codes.Error, "model call failed")
		span.SetAttributes(attribute.String("error.type", errorType(ctx, err)))
	} else {
		retries = res.Retries
		span.SetAttributes(attribute.StringSlice("gen_ai.response.finish_reasons", []string{res.FinishReason}),
			attribute.Int("luban.model.tool_calls", len(res.Message.ToolCalls)))
		if u := res.Usage; u != (model.Usage{}) {
			span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", u.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", u.OutputTokens))
		}
		if res.Model != "" {
			span.SetAttributes(attribute.String("gen_ai.response.model", res.Model))
		}
	}
	span.SetAttributes(attribute.Int("luban.model.retries", retries))
	if p.m != nil {
		p.m.modelCalls.WithLabelValues(p.name, outcome).Inc()
		observe(ctx, p.m.modelDuration.WithLabelValues(p.name, outcome), d.Seconds())
		if retries > 0 {
			p.m.modelRetries.WithLabelValues(p.name).Add(float64(retries))
		}
	}
	return res, err
}

func errorType(ctx context.Context, err error) string {
	switch {
	case errors.Is(err, context.Canceled) || ctx.Err() == context.Canceled:
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	}
	return "error"
}

// InstrumentTool wraps t so that every call is counted and timed
// (luban_tool_calls_total{tool,outcome}, luban_tool_call_duration_seconds)
// and is an internal span "execute_tool <name>" with gen_ai.operation.name
// and gen_ai.tool.name. A call that returns an error or an error result has
// outcome "error". m may be nil (spans only).
func InstrumentTool(t tool.Tool, m *Metrics) tool.Tool {
	return &instrumentedTool{Tool: t, m: m, name: t.Spec().Name}
}

type instrumentedTool struct {
	tool.Tool
	m    *Metrics
	name string
}

// CheckArgs forwards to the wrapped tool's tool.ArgsChecker, so wrapping a
// tool keeps its argument rules (no problems when it has none).
func (t *instrumentedTool) CheckArgs(args json.RawMessage) []api.FieldError {
	if c, ok := t.Tool.(tool.ArgsChecker); ok {
		return c.CheckArgs(args)
	}
	return nil
}

func (t *instrumentedTool) Call(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
	ctx, span := tracer().Start(ctx, "execute_tool "+t.name, trace.WithAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", t.name),
	))
	span.SetAttributes(runAttrs(ctx)...)
	defer span.End()
	start := time.Now()
	res, err := t.Tool.Call(ctx, args)
	outcome := "ok"
	var in *tool.InputRequired
	if (err != nil && !errors.As(err, &in)) || res.IsError {
		outcome = "error"
		span.SetStatus(codes.Error, "tool call failed")
		if err != nil {
			span.RecordError(err)
		}
	}
	if t.m != nil {
		t.m.toolCalls.WithLabelValues(t.name, outcome).Inc()
		observe(ctx, t.m.toolDuration.WithLabelValues(t.name), time.Since(start).Seconds())
	}
	return res, err
}

// InstrumentStore wraps st (a decorator: every method not named here is
// st's own). Each InTx is a span "store.tx" (db.system.name = system) and is
// timed (luban_store_transaction_duration_seconds); committed writes move
// luban_runs_started_total, luban_runs_finished_total,
// luban_interactions_requested_total, luban_interactions_resolved_total,
// luban_interaction_answer_seconds and luban_lease_takeovers_total (a
// lease won on a run that RunListRecoverable listed under another owner).
// The store.Maintainer methods and Ping are passed through when st has
// them. m may be nil (spans only).
//
// A run's end records its invoke_agent span and an interaction's
// resolution records its human wait ("interaction.wait <tool>"), both from
// the stored creation time (docs/design.md §27); the runs it reads and
// inserts give the spans of their steps their gen_ai.conversation.id.
func InstrumentStore(st store.Store, m *Metrics, system string) store.Store {
	return &instrumentedStore{Store: st, m: m, system: system, recoverable: map[string]string{}}
}

type instrumentedStore struct {
	store.Store
	m      *Metrics
	system string

	mu          sync.Mutex
	recoverable map[string]string // run id → lease owner when listed as recoverable
}

// Unwrap returns the wrapped store.
func (s *instrumentedStore) Unwrap() store.Store { return s.Store }

func (s *instrumentedStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	ctx, span := tracer().Start(ctx, "store.tx", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("db.system.name", s.system)))
	defer span.End()
	start := time.Now()
	var after []func()
	err := s.Store.InTx(ctx, func(tx store.Tx) error {
		after = after[:0] // a retried fn starts over
		return fn(&instrumentedTx{Tx: tx, s: s, after: &after})
	})
	outcome := "commit"
	if err != nil {
		outcome = "rollback"
		span.SetStatus(codes.Error, "transaction rolled back")
	} else {
		for _, f := range after {
			f()
		}
	}
	if s.m != nil {
		s.m.storeTx.WithLabelValues(outcome).Observe(time.Since(start).Seconds())
	}
	return err
}

// counted writes, shared by the store and its transactions: each returns
// the func to run once the write is committed (nil when nothing counts).

func (s *instrumentedStore) onRunInsert(p *store.RunInsertParams, err error) func() {
	if err != nil {
		return nil
	}
	return func() {
		rememberRun(&store.Run{ID: p.ID, SessionID: p.SessionID, Agent: p.Agent, CreatedAt: p.Now})
		if s.m != nil {
			s.m.runsStarted.Inc()
		}
	}
}

func (s *instrumentedStore) onRunFinish(ctx context.Context, p *store.RunFinishParams, won bool, err error) func() {
	if err != nil || !won {
		return nil
	}
	return func() {
		if s.m != nil {
			s.m.runsFinished.WithLabelValues(string(p.To)).Inc()
		}
		if r := s.finishedRun(ctx, p); r != nil {
			recordRunSpan(ctx, r, p.To, p.Now)
		}
	}
}

// finishedRun is the run p ended, as its invoke_agent span needs it: from
// what this process remembers of the run when p says the rest (its steps,
// and its error when it failed), which is the case of a run completing
// here; else read from the store (nil when that fails).
func (s *instrumentedStore) finishedRun(ctx context.Context, p *store.RunFinishParams) *store.Run {
	if ri, ok := lookupRun(p.ID); ok && !ri.created.IsZero() && p.Steps != nil && (p.To != store.RunFailed || p.Error != "") {
		return &store.Run{ID: p.ID, SessionID: ri.session, Agent: ri.agent, CreatedAt: ri.created, Steps: *p.Steps, Error: p.Error}
	}
	r, err := s.Store.RunGet(context.WithoutCancel(ctx), p.ID)
	if err != nil {
		return nil
	}
	return r
}

func (s *instrumentedStore) onInteractionInsert(err error) func() {
	if err != nil || s.m == nil {
		return nil
	}
	return s.m.interactionsAsked.Inc
}

func (s *instrumentedStore) onInteractionResolve(ctx context.Context, p *store.InteractionResolveParams, won bool, err error) func() {
	if err != nil || !won {
		return nil
	}
	return func() {
		if s.m != nil {
			s.m.interactionsResolved.WithLabelValues(p.Status).Inc()
		}
		it, err := s.Store.InteractionGet(context.WithoutCancel(ctx), p.ID)
		if err == nil && !it.CreatedAt.IsZero() {
			end := p.Now
			if !it.ResolvedAt.IsZero() {
				end = it.ResolvedAt
			}
			if s.m != nil {
				observe(ctx, s.m.answerSeconds.WithLabelValues(p.Status), end.Sub(it.CreatedAt).Seconds())
			}
			recordWaitSpan(ctx, it, p.Status, end)
		}
	}
}

func (s *instrumentedStore) onInteractionResolveRun(ctx context.Context, p *store.InteractionResolveRunParams, its []*store.Interaction, err error) func() {
	if err != nil || len(its) == 0 {
		return nil
	}
	return func() {
		for _, it := range its {
			if s.m != nil {
				s.m.interactionsResolved.WithLabelValues(p.Status).Inc()
				observe(ctx, s.m.answerSeconds.WithLabelValues(p.Status), it.ResolvedAt.Sub(it.CreatedAt).Seconds())
			}
			recordWaitSpan(ctx, it, p.Status, it.ResolvedAt)
		}
	}
}

func (s *instrumentedStore) onRunLease(p *store.RunLeaseParams, won bool, err error) func() {
	s.mu.Lock()
	prev, listed := s.recoverable[p.ID]
	delete(s.recoverable, p.ID)
	s.mu.Unlock()
	if err != nil || !won || !listed || prev == "" || prev == p.Owner || s.m == nil {
		return nil
	}
	return s.m.leaseTakeovers.Inc
}

func run(f func()) {
	if f != nil {
		f()
	}
}

func (s *instrumentedStore) RunInsert(ctx context.Context, p *store.RunInsertParams) (*store.Run, error) {
	r, err := s.Store.RunInsert(ctx, p)
	run(s.onRunInsert(p, err))
	return r, err
}

// RunGet remembers the run's session and agent for the spans of its steps.
func (s *instrumentedStore) RunGet(ctx context.Context, id string) (*store.Run, error) {
	r, err := s.Store.RunGet(ctx, id)
	if err == nil {
		rememberRun(r)
	}
	return r, err
}

func (s *instrumentedStore) RunFinish(ctx context.Context, p *store.RunFinishParams) (bool, error) {
	won, err := s.Store.RunFinish(ctx, p)
	run(s.onRunFinish(ctx, p, won, err))
	return won, err
}

func (s *instrumentedStore) RunLease(ctx context.Context, p *store.RunLeaseParams) (bool, error) {
	won, err := s.Store.RunLease(ctx, p)
	run(s.onRunLease(p, won, err))
	return won, err
}

func (s *instrumentedStore) RunListRecoverable(ctx context.Context, p *store.RunListRecoverableParams) ([]*store.Run, error) {
	runs, err := s.Store.RunListRecoverable(ctx, p)
	if err == nil && len(runs) > 0 {
		s.mu.Lock()
		if len(s.recoverable) > 10000 {
			clear(s.recoverable)
		}
		for _, r := range runs {
			s.recoverable[r.ID] = r.LeaseOwner
		}
		s.mu.Unlock()
	}
	return runs, err
}

func (s *instrumentedStore) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	it, err := s.Store.InteractionInsert(ctx, p)
	run(s.onInteractionInsert(err))
	return it, err
}

func (s *instrumentedStore) InteractionResolve(ctx context.Context, p *store.InteractionResolveParams) (bool, error) {
	won, err := s.Store.InteractionResolve(ctx, p)
	run(s.onInteractionResolve(ctx, p, won, err))
	return won, err
}

var errNoMaintainer = errors.New("telemetry: the wrapped store does not implement store.Maintainer")

// SessionDelete passes through to the wrapped store.Maintainer.
func (s *instrumentedStore) SessionDelete(ctx context.Context, id string) error {
	if m, ok := s.Store.(store.Maintainer); ok {
		return m.SessionDelete(ctx, id)
	}
	return errNoMaintainer
}

// SessionSetTitle passes through to the wrapped store.Maintainer.
func (s *instrumentedStore) SessionSetTitle(ctx context.Context, id, title string) error {
	if m, ok := s.Store.(store.Maintainer); ok {
		return m.SessionSetTitle(ctx, id, title)
	}
	return errNoMaintainer
}

// Prune passes through to the wrapped store.Maintainer.
func (s *instrumentedStore) Prune(ctx context.Context, p *store.PruneParams) (*store.PruneResult, error) {
	if m, ok := s.Store.(store.Maintainer); ok {
		return m.Prune(ctx, p)
	}
	return nil, errNoMaintainer
}

// Stats passes through to the wrapped store.Maintainer.
func (s *instrumentedStore) Stats(ctx context.Context) (*store.Stats, error) {
	if m, ok := s.Store.(store.Maintainer); ok {
		return m.Stats(ctx)
	}
	return nil, errNoMaintainer
}

// Ping passes through when the wrapped store has it; otherwise it looks up
// a session that cannot exist.
func (s *instrumentedStore) Ping(ctx context.Context) error {
	if p, ok := s.Store.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	if _, err := s.Store.SessionGet(ctx, "ping"); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// instrumentedTx counts the writes of one transaction once it commits.
type instrumentedTx struct {
	store.Tx
	s     *instrumentedStore
	after *[]func()
}

func (t *instrumentedTx) defer_(f func()) {
	if f != nil {
		*t.after = append(*t.after, f)
	}
}

func (t *instrumentedTx) RunInsert(ctx context.Context, p *store.RunInsertParams) (*store.Run, error) {
	r, err := t.Tx.RunInsert(ctx, p)
	t.defer_(t.s.onRunInsert(p, err))
	return r, err
}

func (t *instrumentedTx) RunFinish(ctx context.Context, p *store.RunFinishParams) (bool, error) {
	won, err := t.Tx.RunFinish(ctx, p)
	t.defer_(t.s.onRunFinish(ctx, p, won, err))
	return won, err
}

func (t *instrumentedTx) InteractionResolveRun(ctx context.Context, p *store.InteractionResolveRunParams) ([]*store.Interaction, error) {
	its, err := t.Tx.InteractionResolveRun(ctx, p)
	t.defer_(t.s.onInteractionResolveRun(ctx, p, its, err))
	return its, err
}

func (t *instrumentedTx) RunLease(ctx context.Context, p *store.RunLeaseParams) (bool, error) {
	won, err := t.Tx.RunLease(ctx, p)
	t.defer_(t.s.onRunLease(p, won, err))
	return won, err
}

func (t *instrumentedTx) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	it, err := t.Tx.InteractionInsert(ctx, p)
	t.defer_(t.s.onInteractionInsert(err))
	return it, err
}

func (t *instrumentedTx) InteractionResolve(ctx context.Context, p *store.InteractionResolveParams) (bool, error) {
	won, err := t.Tx.InteractionResolve(ctx, p)
	t.defer_(t.s.onInteractionResolve(ctx, p, won, err))
	return won, err
}

// StepSpan is an agent.Options.Step: every step of a run is an internal
// span "run.step" with luban.run.id; the model call, tool calls and store
// transactions of the step are its children. A failed step has status
// error; a step that paused or ended the run has luban.run.paused = true.
//
// The step is a child of its run's invoke_agent span (recorded when the run
// ends, docs/design.md §27), whatever process drives it; what started the
// step (an HTTP request) is a link. Once the step has read its run, the
// step and the model and tool calls under it carry gen_ai.conversation.id
// (the session id) and gen_ai.agent.name.
func StepSpan(ctx context.Context, runID string) (context.Context, func(paused bool, err error)) {
	opts := []trace.SpanStartOption{trace.WithAttributes(attribute.String("luban.run.id", runID))}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
	}
	ctx = context.WithValue(trace.ContextWithRemoteSpanContext(ctx, runSpanContext(runID)), runIDKey{}, runID)
	ctx, span := tracer().Start(ctx, "run.step", opts...)
	known := runAttrs(ctx)
	span.SetAttributes(known...)
	return ctx, func(paused bool, err error) {
		if known == nil {
			// The step read its run (the first step in this process).
			span.SetAttributes(runAttrs(ctx)...)
		}
		span.SetAttributes(attribute.Bool("luban.run.paused", paused))
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, "step failed")
		}
		span.End()
	}
}
