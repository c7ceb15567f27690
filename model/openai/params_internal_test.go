package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"testing"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
	"github.com/stretchr/testify/require"
	"github.com/tidwall/sjson"

	"github.com/lubanhq/luban/internal/testkit/fakemodel"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/model"
)

// requestBody writes what the SDK's own parameters encode to, with
// "stream": true set as its NewStreaming sets it: the same JSON value for
// every kind of message, tool and reasoning carried back.
func TestRequestBodyIsTheSDKs(t *testing.T) {
	t.Parallel()
	details := json.RawMessage(`{"details":[{"type":"reasoning.encrypted","data":"AAA","index":0}]}`)
	req := &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are luban. <&> \"quoted\"\n"},
			{Role: model.RoleUser, Content: ""},
			{Role: model.RoleUser, Content: "部署 \u2028 \x00"},
			{Role: model.RoleAssistant, Content: "", Reasoning: &model.Reasoning{Provider: model.ReasoningOpenAI, Text: "想", Data: json.RawMessage(`{"fields":["reasoning_content"]}`)},
				ToolCalls: []model.ToolCall{{ID: "call_a", Name: "ask_user", Arguments: `{"title":"环境?"}`}, {ID: "call_b", Name: "read_file", Arguments: ``}}},
			{Role: model.RoleTool, ToolCallID: "call_a", Name: "ask_user", Content: `{"selections":["prod"]}`},
			{Role: model.RoleTool, ToolCallID: "", Name: "read_file", Content: "", IsError: true},
			{Role: model.RoleAssistant, Content: "text and calls", Reasoning: &model.Reasoning{Provider: model.ReasoningOpenAI, Text: "r", Data: details},
				ToolCalls: []model.ToolCall{{ID: "call_c", Name: "x", Arguments: "{}"}}},
			{Role: model.RoleAssistant, Content: "", Reasoning: &model.Reasoning{Provider: model.ReasoningOpenAI, Text: "not sent back without calls"}},
			{Role: model.RoleAssistant, Content: "ok", Reasoning: &model.Reasoning{Provider: model.ReasoningAnthropic, Text: "other provider"},
				ToolCalls: []model.ToolCall{{ID: "call_d", Name: "y", Arguments: "{}"}}},
		},
		Tools: []model.ToolSpec{
			{Name: "ask_user", Description: "ask <the> user", Parameters: json.RawMessage(`{ "type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"] }`)},
			{Name: "no_schema"},
			{Name: "array_schema", Parameters: json.RawMessage(`[1]`)},
			{Name: "null_schema", Parameters: json.RawMessage(`null`)},
		},
	}
	p := &Provider{opts: Options{Model: "gpt-x"}}
	for _, r := range []*model.Request{req, {Messages: req.Messages[:2]}} {
		want, err := json.Marshal(sdkParams("gpt-x", r))
		require.NoError(t, err)
		want, err = sjson.SetBytes(want, "stream", true)
		require.NoError(t, err)
		got, err := p.requestBody(r)
		require.NoError(t, err)
		require.True(t, json.Valid(got), string(got))
		require.JSONEq(t, string(want), string(got))
		again, err := p.requestBody(r) // the tools' JSON from the cache
		require.NoError(t, err)
		require.Equal(t, got, again)
	}
}

// A tool whose schema changed in place gets JSON made from its new schema.
func TestToolDefsFollowTheSchema(t *testing.T) {
	t.Parallel()
	var c toolDefs
	schema := []byte(`{"type":"object","title":"a"}`)
	tool := model.ToolSpec{Name: "t", Parameters: schema}
	require.JSONEq(t, `{"type":"function","function":{"name":"t","parameters":{"type":"object","title":"a"}}}`, string(c.get(tool)))
	schema[len(schema)-3] = 'b'
	require.JSONEq(t, `{"type":"function","function":{"name":"t","parameters":{"type":"object","title":"b"}}}`, string(c.get(tool)))
	tool.Description = "now described"
	require.JSONEq(t, `{"type":"function","function":{"name":"t","description":"now described","parameters":{"type":"object","title":"b"}}}`, string(c.get(tool)))
}

// sdkParams maps a provider-neutral request to SDK parameters. Assistant
// tool calls keep id, name and arguments exactly as received; tool messages
// carry their tool_call_id; an assistant message with tool calls and no text
// omits "content" (OpenAI accepts that; some servers reject an empty string
// beside tool_calls). An assistant tool-call turn carries its reasoning back
// in the fields it came in (reasoningBack).
func sdkParams(modelName string, req *model.Request) oai.ChatCompletionNewParams {
	// include_usage: the last chunk reports the call's token counts
	// (model.Response.Usage).
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(modelName),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, messageParam(m))
	}
	for _, t := range req.Tools {
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: schemaMap(t.Parameters)}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(fd))
	}
	return p
}

func messageParam(m model.Message) oai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case model.RoleSystem:
		return oai.SystemMessage(m.Content)
	case model.RoleTool:
		return oai.ToolMessage(m.Content, m.ToolCallID)
	case model.RoleAssistant:
		a := oai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: tc.Arguments,
					},
				},
			})
		}
		if extra := reasoningBack(m); extra != nil {
			a.SetExtraFields(extra)
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		return oai.UserMessage(m.Content)
	}
}

// schemaMap decodes a tool's JSON Schema; an empty or non-object schema
// becomes the empty object schema, which every server accepts.
func schemaMap(raw json.RawMessage) shared.FunctionParameters {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return shared.FunctionParameters{"type": "object", "properties": map[string]any{}}
	}
	return m
}

// Concurrent calls through the default client's transport keep their
// connections: 8 calls at a time, 5 rounds, dial at most 16 connections
// (8 and a dial that a queued call no longer needed, now and then;
// http.DefaultTransport keeps 2 idle per host and closes the rest: ≥ 32).
func TestConcurrentCallsReuseConnections(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	tr := pooledTransport().(*http.Transport)
	dials := fakemodel.CountDials(t, tr)
	p, err := New(Options{BaseURL: fake.URL(), Model: "m", HTTPClient: &http.Client{Transport: tr}})
	require.NoError(t, err)
	const n = 8
	for range 5 {
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			fake.Push(fakeopenai.Turn{Text: "hello"})
		}
		for range n {
			wg.Go(func() {
				_, err := p.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}, nil)
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
	}
	require.LessOrEqual(t, dials.Load(), int64(2*n))
}
