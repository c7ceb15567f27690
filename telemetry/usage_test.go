package telemetry_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
	"github.com/lubanhq/luban/internal/testkit/fakemodel"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	lmodel "github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/anthropic"
	"github.com/lubanhq/luban/model/openai"
	"github.com/lubanhq/luban/telemetry"
)

// The GenAI attributes of a model call's span carry what the provider's
// server reported: the token counts of the usage it streamed (the fakes
// count the request body and the streamed turn, fakemodel.Tokens) and the
// model that answered, through the real OpenAI and Anthropic providers.
// Not parallel: it installs the global tracer provider.
func TestModelSpanUsage(t *testing.T) {
	prev := otel.GetTracerProvider()
	t.Cleanup(func() { otel.SetTracerProvider(prev) })
	req := &lmodel.Request{Messages: []lmodel.Message{{Role: lmodel.RoleSystem, Content: "be brief"}, {Role: lmodel.RoleUser, Content: "what time is it in Shanghai?"}},
		Tools: []lmodel.ToolSpec{{Name: "current_time", Description: "the time", Parameters: []byte(`{"type":"object"}`)}}}
	cases := map[string]func(t *testing.T) (lmodel.Provider, func() (raw []byte, out int64)){
		"openai": func(t *testing.T) (lmodel.Provider, func() ([]byte, int64)) {
			fake := fakeopenai.New(t)
			turn := fakeopenai.Turn{Text: "Let me look.", ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "current_time", Arguments: `{"tz":"Asia/Shanghai"}`}}}
			fake.Push(turn)
			p, err := openai.New(openai.Options{BaseURL: fake.URL(), Model: "gpt-test"})
			require.NoError(t, err)
			return p, func() ([]byte, int64) { return fake.Requests()[0].Raw, fakeopenai.OutputTokens(turn) }
		},
		"anthropic": func(t *testing.T) (lmodel.Provider, func() ([]byte, int64)) {
			fake := fakeanthropic.New(t)
			turn := fakeanthropic.Turn{Text: "Let me look.", ToolUses: []fakeanthropic.ToolUse{{ID: "toolu_1", Name: "current_time", Input: `{"tz":"Asia/Shanghai"}`}}}
			fake.Push(turn)
			p, err := anthropic.New(anthropic.Options{BaseURL: fake.URL(), APIKey: "k", Model: "claude-test"})
			require.NoError(t, err)
			return p, func() ([]byte, int64) { return fake.Requests()[0].Raw, fakeanthropic.OutputTokens(turn) }
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
			p, sent := setup(t)
			res, err := telemetry.InstrumentProvider(p, nil).Generate(context.Background(), req, nil)
			require.NoError(t, err)
			raw, out := sent()
			in := fakemodel.Tokens(string(raw))
			require.Greater(t, in, int64(10))
			require.Equal(t, lmodel.Usage{InputTokens: in, OutputTokens: out}, res.Usage, "the usage the server streamed")

			// luban's own span (the Anthropic SDK adds one of its own).
			var spans []sdktrace.ReadOnlySpan
			for _, s := range exp.GetSpans().Snapshots() {
				if s.InstrumentationScope().Name == telemetry.ScopeName {
					spans = append(spans, s)
				}
			}
			require.Len(t, spans, 1)
			s := spans[0]
			require.Equal(t, "chat "+res.Model, s.Name())
			v, ok := attr(s, "gen_ai.usage.input_tokens")
			require.True(t, ok)
			require.Equal(t, in, v.AsInt64())
			v, ok = attr(s, "gen_ai.usage.output_tokens")
			require.True(t, ok)
			require.Equal(t, out, v.AsInt64())
			v, _ = attr(s, "gen_ai.provider.name")
			require.Equal(t, name, v.AsString())
			v, _ = attr(s, "gen_ai.request.model")
			require.Equal(t, res.Model, v.AsString(), "the fakes answer as the model asked for")
			v, ok = attr(s, "gen_ai.response.model")
			require.True(t, ok)
			require.Equal(t, res.Model, v.AsString())
			require.NotEmpty(t, res.Model)
		})
	}
}
