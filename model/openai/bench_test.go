package openai_test

// The provider's cost of one model call, against a loopback server that
// streams a fixed tool-call turn (what luban-bench's fake model sends):
//
//	go test -run '^$' -bench Generate -benchmem ./model/openai

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/openai"
)

const benchTurn = `data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"role":"assistant","content":"我需要问一下。"},"finish_reason":null}]}

data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_bench_1","type":"function","function":{"name":"ask_user","arguments":"{\"title\":\"请选择执行方式\",\"mode\":\"single\",\"options\":[{\"id\":\"safe\",\"label\":\"先分析\",\"recommended\":true},{\"id\":\"implement\",\"label\":\"直接实现\"}]}"}}]},"finish_reason":null}]}

data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}

data: [DONE]

`

// BenchmarkGenerate is one Generate of a tool-call turn: the request built
// and sent, the stream read and accumulated.
func BenchmarkGenerate(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, benchTurn)
	}))
	b.Cleanup(srv.Close)
	p, err := openai.New(openai.Options{BaseURL: srv.URL, Model: "bench", MaxRetries: -1})
	require.NoError(b, err)
	req := &model.Request{
		Messages: []model.Message{{Role: model.RoleSystem, Content: "You are luban."}, {Role: model.RoleUser, Content: "bench 1"}},
		Tools:    []model.ToolSpec{{Name: "ask_user", Description: "ask the user", Parameters: askSchema}},
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := p.Generate(ctx, req, nil)
		if err != nil || len(resp.Message.ToolCalls) != 1 {
			b.Fatal(err)
		}
	}
}
