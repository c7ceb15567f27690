package opstest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/fakemodel"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// lubanBin is the binary TestMain built.
var lubanBin string

func TestMain(m *testing.M) {
	code := lubantest.RunWithLuban(m, "opstest", &lubanBin)
	removeImageBuild()
	os.Exit(code)
}

// receiver is an OTLP/HTTP trace receiver: POST /v1/traces with a protobuf
// ExportTraceServiceRequest, as the OpenTelemetry collector takes it.
type receiver struct {
	mu       sync.Mutex
	spans    []*tracepb.Span
	services []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
		return
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	for _, rs := range req.ResourceSpans {
		for _, a := range rs.GetResource().GetAttributes() {
			if a.Key == "service.name" {
				rc.services = append(rc.services, a.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.ScopeSpans {
			rc.spans = append(rc.spans, ss.Spans...)
		}
	}
	rc.mu.Unlock()
	out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func strAttr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			return anyString(a.Value)
		}
	}
	return ""
}

// intAttr is the integer attribute key of s; -1 when it has none.
func intAttr(s *tracepb.Span, key string) int64 {
	for _, a := range s.Attributes {
		if a.Key == key {
			if iv, ok := a.Value.GetValue().(*commonpb.AnyValue_IntValue); ok {
				return iv.IntValue
			}
		}
	}
	return -1
}

func anyString(v *commonpb.AnyValue) string {
	if v == nil {
		return ""
	}
	return v.GetStringValue()
}

func TestOTLPReceiverSeesTheSpansOfOneCycle(t *testing.T) {
	t.Parallel()
	rc := &receiver{}
	otlp := httptest.NewServer(rc)
	t.Cleanup(otlp.Close)
	fake := fakeopenai.New(t)
	turns := []fakeopenai.Turn{
		{ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "ask_user",
			Arguments: `{"title":"Which way?","mode":"single","options":[{"id":"safe","label":"Safe"},{"id":"fast","label":"Fast"}]}`}}},
		{Text: "Done the safe way."},
	}
	fake.Push(turns...)
	p := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "otlp", DB: t.TempDir() + "/luban.db", ModelURL: fake.URL(),
		Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + otlp.URL, "LUBAN_LOG_FORMAT=json"}, TermOnCleanup: true})

	evs, err := p.API.Chat("", "do it").Until("user_input_required", 30*time.Second)
	require.NoError(t, err)
	first, _ := lubantest.Find(evs, "session")
	var sess api.SessionEvent
	require.NoError(t, first.Decode(&sess))
	ask, _ := lubantest.Find(evs, "user_input_required")
	var req struct {
		ID string `json:"id"`
	}
	require.NoError(t, ask.Decode(&req))
	resp := p.API.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess.SessionID, "requestId": req.ID, "selections": []string{"safe"}}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	p.API.EventsUntil(sess.SessionID, 0, "done", 30*time.Second)

	// /metrics of the serving process, no token, parsed as Prometheus text.
	mr, err := http.Get(p.URL + "/metrics")
	require.NoError(t, err)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(mr.Body)
	mr.Body.Close()
	require.NoError(t, err)
	calls := 0.0
	for _, m := range fams["luban_model_calls_total"].GetMetric() {
		calls += m.GetCounter().GetValue()
	}
	require.Equal(t, 2.0, calls)
	var completed float64
	for _, m := range fams["luban_runs"].GetMetric() {
		if m.GetLabel()[0].GetValue() == "completed" {
			completed = m.GetGauge().GetValue()
		}
	}
	require.Equal(t, 1.0, completed)

	// The same /metrics asked for OpenMetrics, as Prometheus asks, parsed
	// by Prometheus' own OpenMetrics parser: luban_build_info, and the
	// request histogram's exemplars name traces that were exported.
	omReq, err := http.NewRequest("GET", p.URL+"/metrics", nil)
	require.NoError(t, err)
	omReq.Header.Set("Accept", "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	om, err := http.DefaultClient.Do(omReq)
	require.NoError(t, err)
	require.Equal(t, expfmt.FmtOpenMetrics_1_0_0, expfmt.ResponseFormat(om.Header), "Content-Type %q", om.Header.Get("Content-Type"))
	omFams := map[string]*dto.MetricFamily{}
	dec := expfmt.NewDecoder(om.Body, expfmt.ResponseFormat(om.Header))
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			require.ErrorIs(t, err, io.EOF)
			break
		}
		omFams[mf.GetName()] = &mf
	}
	om.Body.Close()
	bi := omFams["luban_build_info"]
	require.NotNil(t, bi, "luban_build_info among %d families", len(omFams))
	require.Len(t, bi.GetMetric(), 1)
	require.Equal(t, 1.0, bi.GetMetric()[0].GetGauge().GetValue())
	biLabels := map[string]string{}
	for _, l := range bi.GetMetric()[0].GetLabel() {
		biLabels[l.GetName()] = l.GetValue()
	}
	require.NotEmpty(t, biLabels["version"])
	require.True(t, strings.HasPrefix(biLabels["goversion"], "go"), "%v", biLabels)
	var exemplarTraces []string
	for _, m := range omFams["luban_http_request_duration_seconds"].GetMetric() {
		for _, b := range m.GetHistogram().GetBucket() {
			if e := b.GetExemplar(); e != nil {
				for _, l := range e.GetLabel() {
					if l.GetName() == "trace_id" {
						exemplarTraces = append(exemplarTraces, l.GetValue())
					}
				}
			}
		}
	}
	require.NotEmpty(t, exemplarTraces, "the request histogram has exemplars")

	// SIGTERM flushes the spans still queued.
	p.Term()
	rc.mu.Lock()
	spans := append([]*tracepb.Span{}, rc.spans...)
	services := append([]string{}, rc.services...)
	rc.mu.Unlock()
	require.NotEmpty(t, services)
	require.Equal(t, "luban", services[0])

	byName := map[string][]*tracepb.Span{}
	byID := map[string]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
		byID[hex.EncodeToString(s.SpanId)] = s
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	for _, n := range []string{"POST /api/chat", "POST /api/chat/continue", "run.step", "chat fake", "store.tx"} {
		require.NotEmpty(t, byName[n], "span %q among %v", n, names)
	}
	require.Len(t, byName["chat fake"], 2)
	// The token counts of each call as the fake model reported them
	// (stream_options.include_usage): the request's and the turn's.
	var wantUsage, gotUsage [][2]int64
	for i, r := range fake.Requests() {
		wantUsage = append(wantUsage, [2]int64{fakemodel.Tokens(string(r.Raw)), fakeopenai.OutputTokens(turns[i])})
	}
	for _, m := range byName["chat fake"] {
		gotUsage = append(gotUsage, [2]int64{intAttr(m, "gen_ai.usage.input_tokens"), intAttr(m, "gen_ai.usage.output_tokens")})
		require.Equal(t, "fake", strAttr(m, "gen_ai.response.model"))
	}
	require.ElementsMatch(t, wantUsage, gotUsage)
	for _, m := range byName["chat fake"] {
		require.Equal(t, "openai", strAttr(m, "gen_ai.provider.name"))
		require.Equal(t, "fake", strAttr(m, "gen_ai.request.model"))
		require.Equal(t, tracepb.Span_SPAN_KIND_CLIENT, m.Kind)
		parent := byID[hex.EncodeToString(m.ParentSpanId)]
		require.NotNil(t, parent, "the model span's parent was exported")
		require.Equal(t, "run.step", parent.Name)
	}
	for _, s := range byName["POST /api/chat"] {
		require.Equal(t, tracepb.Span_SPAN_KIND_SERVER, s.Kind)
		require.Empty(t, s.ParentSpanId)
	}

	// One invoke_agent span for the run (OpenTelemetry gen_ai conventions),
	// recorded when the run ended, from its creation: every step of the run
	// is its child, and its wait for a person is a span of its own, from the
	// question's creation to its answer, with kind, tool and outcome.
	var invoke []*tracepb.Span
	for n, ss := range byName {
		if strings.HasPrefix(n, "invoke_agent ") {
			invoke = append(invoke, ss...)
		}
	}
	require.Len(t, invoke, 1, "one invoke_agent span among %v", names)
	ia := invoke[0]
	require.Equal(t, "invoke_agent", strAttr(ia, "gen_ai.operation.name"))
	require.Equal(t, sess.SessionID, strAttr(ia, "gen_ai.conversation.id"))
	require.NotEmpty(t, strAttr(ia, "gen_ai.agent.name"))
	require.Equal(t, "completed", strAttr(ia, "luban.run.status"))
	for _, st := range byName["run.step"] {
		require.Equal(t, ia.TraceId, st.TraceId)
		require.Equal(t, ia.SpanId, st.ParentSpanId, "a step is a child of its run's invoke_agent span")
		require.Equal(t, sess.SessionID, strAttr(st, "gen_ai.conversation.id"))
		require.GreaterOrEqual(t, st.StartTimeUnixNano, ia.StartTimeUnixNano)
	}
	for _, m := range byName["chat fake"] {
		require.Equal(t, sess.SessionID, strAttr(m, "gen_ai.conversation.id"))
	}
	waits := byName["interaction.wait ask_user"]
	require.Len(t, waits, 1, "the human wait among %v", names)
	w := waits[0]
	require.Equal(t, "ask", strAttr(w, "luban.interaction.kind"))
	require.Equal(t, "ask_user", strAttr(w, "luban.interaction.tool"))
	require.Equal(t, "answered", strAttr(w, "luban.interaction.outcome"))
	require.Equal(t, req.ID, strAttr(w, "luban.interaction.id"))
	require.Equal(t, sess.SessionID, strAttr(w, "gen_ai.conversation.id"))
	require.Equal(t, ia.SpanId, w.ParentSpanId)
	require.Equal(t, ia.TraceId, w.TraceId)
	require.Len(t, w.Links, 1, "the answering request is a link")
	require.Equal(t, byName["POST /api/chat/continue"][0].TraceId, w.Links[0].TraceId)
	require.Greater(t, w.EndTimeUnixNano, w.StartTimeUnixNano)

	// Every exemplar names an exported trace.
	traces := map[string]bool{}
	for _, s := range spans {
		traces[hex.EncodeToString(s.TraceId)] = true
	}
	for _, tid := range exemplarTraces {
		require.True(t, traces[tid], "exemplar trace %s was exported", tid)
	}

	// Log lines of requests carry the trace id of their span.
	chatTrace := hex.EncodeToString(byName["POST /api/chat"][0].TraceId)
	var line string
	for _, l := range strings.Split(p.Log(), "\n") {
		if strings.Contains(l, `"msg":"http request"`) && strings.Contains(l, `"path":"/api/chat"`) {
			line = l
		}
	}
	require.Contains(t, line, `"trace_id":"`+chatTrace+`"`)
}
