package telemetry_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *lockedBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuf) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func attr(s sdktrace.ReadOnlySpan, key string) (attribute.Value, bool) {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value, true
		}
	}
	return attribute.Value{}, false
}

// Not parallel: it installs the global tracer provider (the other tests of
// the package run after it and only add spans nobody reads).
func TestSpansOfACycle(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	logs := &lockedBuf{}
	c := startLogging(t, logs)
	c.run(t)
	require.NoError(t, tp.ForceFlush(t.Context()))
	// A step's span ends after the events it wrote reached the client, so
	// the last one may still be open when the cycle's stream ends: wait for it.
	steps := func() int {
		n := 0
		for _, s := range exp.GetSpans() {
			if s.Name == "run.step" {
				n++
			}
		}
		return n
	}
	// So may a request's server span: its handler returns after the client
	// read the last byte of the stream.
	ended := func(name string) bool {
		for _, s := range exp.GetSpans() {
			if s.Name == name {
				return true
			}
		}
		return false
	}
	require.Eventually(t, func() bool {
		return steps() >= 4 && ended("POST /api/chat") && ended("POST /api/chat/continue") && ended("GET /api/sessions/{id}")
	}, 10*time.Second, 5*time.Millisecond, "model turns and tool steps: %d run.step spans", steps())
	spans := exp.GetSpans().Snapshots()

	byName := map[string][]sdktrace.ReadOnlySpan{}
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[s.Name()] = append(byName[s.Name()], s)
		byID[s.SpanContext().SpanID()] = s
	}
	for _, n := range []string{"POST /api/chat", "POST /api/chat/continue", "GET /api/sessions/{id}", "run.step", "chat test-model", "execute_tool current_time", "store.tx"} {
		require.NotEmpty(t, byName[n], "no span %q among %d spans", n, len(spans))
	}
	require.Len(t, byName["chat test-model"], 3, "one span per model call")
	require.GreaterOrEqual(t, len(byName["run.step"]), 4, "model turns and tool steps")

	m := byName["chat test-model"][0]
	require.Equal(t, trace.SpanKindClient, m.SpanKind())
	for k, want := range map[string]string{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "fake", "gen_ai.request.model": "test-model"} {
		v, ok := attr(m, k)
		require.True(t, ok, k)
		require.Equal(t, want, v.AsString(), k)
	}
	v, ok := attr(m, "gen_ai.response.finish_reasons")
	require.True(t, ok)
	require.Equal(t, []string{"tool_calls"}, v.AsStringSlice())
	v, _ = attr(m, "luban.model.retries")
	require.Equal(t, int64(1), v.AsInt64())
	// A model call is a child of its run step.
	parent, ok := byID[m.Parent().SpanID()]
	require.True(t, ok, "the model span's parent is recorded")
	require.Equal(t, "run.step", parent.Name())

	tool := byName["execute_tool current_time"][0]
	v, _ = attr(tool, "gen_ai.tool.name")
	require.Equal(t, "current_time", v.AsString())
	require.Equal(t, "run.step", byID[tool.Parent().SpanID()].Name())

	// Store transactions of a step are its children too.
	children := 0
	for _, s := range byName["store.tx"] {
		if p, ok := byID[s.Parent().SpanID()]; ok && p.Name() == "run.step" {
			children++
		}
		v, _ := attr(s, "db.system.name")
		require.Equal(t, "sqlite", v.AsString())
	}
	require.NotZero(t, children)

	// The access log line of the chat request carries its span's trace id.
	chat := byName["POST /api/chat"][0]
	found := false
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &rec), l)
		if rec["msg"] == "http request" && rec["path"] == "/api/chat" {
			require.Equal(t, chat.SpanContext().TraceID().String(), rec["trace_id"])
			require.NotEmpty(t, rec["span_id"])
			found = true
		}
	}
	require.True(t, found, "an access log line for POST /api/chat:\n%s", logs.String())
}
