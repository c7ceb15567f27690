package telemetry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// A run is durable: it pauses for people, survives restarts and may be
// finished by another process than the one that started it. Its
// invoke_agent span (OpenTelemetry gen_ai conventions) is therefore
// recorded when the run ends, with the run's stored creation time as its
// start, and its trace and span ids are derived from the run id, so every
// step span of every process that drove the run is its child in one trace
// (docs/design.md §27). The human waits of the run are children too.

// runSpanContext is the span context of run id's invoke_agent span: the
// first 16 bytes of SHA-256("luban run\0"+id) are its trace id, the next 8
// its span id.
func runSpanContext(runID string) trace.SpanContext {
	sum := sha256.Sum256([]byte("luban run\x00" + runID))
	var tid trace.TraceID
	var sid trace.SpanID
	copy(tid[:], sum[:16])
	copy(sid[:], sum[16:24])
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
}

type forcedIDsKey struct{}

// idGenerator is the tracer provider's ID generator (SetupTracing): random
// ids, except for a span started with a context carrying forced ids (the
// invoke_agent span of a run, recorded at its end).
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	if sc, ok := ctx.Value(forcedIDsKey{}).(trace.SpanContext); ok {
		return sc.TraceID(), sc.SpanID()
	}
	var tid trace.TraceID
	var sid trace.SpanID
	_, _ = rand.Read(tid[:])
	_, _ = rand.Read(sid[:])
	return tid, sid
}

func (idGenerator) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	if sc, ok := ctx.Value(forcedIDsKey{}).(trace.SpanContext); ok {
		return sc.SpanID()
	}
	var sid trace.SpanID
	_, _ = rand.Read(sid[:])
	return sid
}

// runInfo is what the spans of a run name besides its id, and when the
// run was created (its invoke_agent span's start).
type runInfo struct {
	session, agent string
	created        time.Time
}

// runs remembers the session and agent of the runs this process reads or
// starts (from the store's RunGet and RunInsert), so the spans of their
// steps, model and tool calls carry gen_ai.conversation.id; a run's entry
// goes when it ends. It is bounded: past maxRuns entries it starts over.
var runs = struct {
	sync.Mutex
	m map[string]runInfo
}{m: map[string]runInfo{}}

const maxRuns = 10000

func rememberRun(r *store.Run) {
	if r == nil || r.ID == "" {
		return
	}
	runs.Lock()
	if len(runs.m) >= maxRuns {
		runs.m = map[string]runInfo{}
	}
	runs.m[r.ID] = runInfo{session: r.SessionID, agent: r.Agent, created: r.CreatedAt}
	runs.Unlock()
}

func forgetRun(id string) {
	runs.Lock()
	delete(runs.m, id)
	runs.Unlock()
}

func lookupRun(id string) (runInfo, bool) {
	runs.Lock()
	defer runs.Unlock()
	ri, ok := runs.m[id]
	return ri, ok
}

type runIDKey struct{}

// runAttrs are the gen_ai attributes of the run whose step ctx is in.
func runAttrs(ctx context.Context) []attribute.KeyValue {
	id, _ := ctx.Value(runIDKey{}).(string)
	if id == "" {
		return nil
	}
	ri, ok := lookupRun(id)
	if !ok {
		return nil
	}
	return []attribute.KeyValue{attribute.String("gen_ai.conversation.id", ri.session), attribute.String("gen_ai.agent.name", ri.agent)}
}

// recordRunSpan records run r's invoke_agent span, from its creation to
// end, with its final status.
func recordRunSpan(ctx context.Context, r *store.Run, status store.RunStatus, end time.Time) {
	forgetRun(r.ID)
	if end.IsZero() {
		end = time.Now()
	}
	ctx = context.WithValue(trace.ContextWithSpanContext(context.WithoutCancel(ctx), trace.SpanContext{}), forcedIDsKey{}, runSpanContext(r.ID))
	_, span := tracer().Start(ctx, "invoke_agent "+r.Agent, trace.WithNewRoot(), trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(r.CreatedAt), trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "invoke_agent"),
			attribute.String("gen_ai.agent.name", r.Agent),
			attribute.String("gen_ai.conversation.id", r.SessionID),
			attribute.String("luban.run.id", r.ID),
			attribute.String("luban.run.status", string(status)),
			attribute.Int("luban.run.steps", r.Steps),
		))
	if status == store.RunFailed {
		span.SetStatus(codes.Error, "run failed")
		if r.Error != "" {
			span.SetAttributes(attribute.String("error.type", r.Error))
		}
	}
	span.End(trace.WithTimestamp(end))
}

// interactionKind is the kind of an interaction (docs/operations.md:
// ask, approval, elicitation-form, elicitation-url, frontend-tool, mcp for
// an MCP host's question) and the tool it is about (the approved tool for
// an approval, the called tool for a front-end tool, else the asking
// tool), read from its stored request.
func interactionKind(it *store.Interaction) (kind, tool string) {
	var req struct {
		Tool     string           `json:"tool"`
		Mode     string           `json:"mode"`
		ToolName string           `json:"toolName"`
		Source   *api.InputSource `json:"source"`
	}
	_ = json.Unmarshal(it.Request, &req)
	tool = it.Tool
	if tool == "" {
		tool = req.Tool
	}
	switch {
	case tool == api.ToolApproval || req.Mode == string(api.ModeApproval):
		if req.ToolName != "" {
			tool = req.ToolName
		}
		return "approval", tool
	case tool == api.ToolElicitation && req.Mode == string(api.ModeURL):
		return "elicitation-url", tool
	case tool == api.ToolElicitation:
		return "elicitation-form", tool
	case tool == api.ToolFrontend:
		if req.ToolName != "" {
			tool = req.ToolName
		}
		return "frontend-tool", tool
	case req.Source != nil && req.Source.Kind == api.SourceMCP:
		return "mcp", tool
	}
	return "ask", tool
}

// recordWaitSpan records the human wait of interaction it: a span
// "interaction.wait <tool>" from its creation to its resolution, a child of
// its run's invoke_agent span, with its kind, tool and outcome (answered,
// cancelled, expired; an answered approval or elicitation names its decision:
// approve, edit, reject, accept, decline).
func recordWaitSpan(ctx context.Context, it *store.Interaction, status string, end time.Time) {
	if it == nil || it.CreatedAt.IsZero() {
		return
	}
	if !it.ResolvedAt.IsZero() {
		end = it.ResolvedAt
	}
	if end.IsZero() {
		end = time.Now()
	}
	kind, tool := interactionKind(it)
	outcome := status
	if status == "answered" {
		var a struct {
			Decision string `json:"decision"`
		}
		if json.Unmarshal(it.Answer, &a) == nil && a.Decision != "" {
			outcome = a.Decision
		}
	}
	opts := []trace.SpanStartOption{trace.WithTimestamp(it.CreatedAt), trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(
		attribute.String("luban.interaction.kind", kind),
		attribute.String("luban.interaction.tool", tool),
		attribute.String("luban.interaction.outcome", outcome),
		attribute.String("luban.interaction.id", it.ID),
		attribute.String("luban.run.id", it.RunID),
		attribute.String("gen_ai.conversation.id", it.SessionID),
		attribute.Float64("luban.interaction.wait_seconds", end.Sub(it.CreatedAt).Seconds()),
	)}
	pctx := context.WithoutCancel(ctx)
	if it.RunID != "" {
		// The resolver (an HTTP request, a timer) is a link; the parent is
		// the run the person was keeping waiting.
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc}))
		}
		pctx = trace.ContextWithRemoteSpanContext(pctx, runSpanContext(it.RunID))
	}
	_, span := tracer().Start(pctx, "interaction.wait "+tool, opts...)
	span.End(trace.WithTimestamp(end))
}
