package openai_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/openai"
)

// A thinking model's tool-call turn: the reasoning, cut inside characters,
// comes back whole as Message.Reasoning and never in the text; the next
// request carries it back in the same field, byte for byte, on that
// tool-call turn, which the fake in reasoning mode insists on.
func TestReasoningKeptAndSentBack(t *testing.T) {
	t.Parallel()
	for _, field := range []string{"reasoning_content", "reasoning"} {
		t.Run(field, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.fake.EnforceReasoning()
			reasoning := "先确认环境 <b>\"再\"</b> 😀\n第二行"
			b.fake.Push(fakeopenai.Turn{Reasoning: reasoning, ReasoningField: field, Text: "我问一下", ChunkBytes: 1,
				ToolCalls: []fakeopenai.ToolCall{{ID: "call_r", Name: "ask_user", Arguments: `{"title":"环境?"}`}}})
			p := b.provider(t, openai.Options{})
			deltas, on := collect()
			thoughts, onReasoning := collect()
			first := simpleRequest()
			first.OnReasoning = onReasoning
			resp, err := p.Generate(b.ctx, first, on)
			require.NoError(t, err)
			require.Equal(t, "我问一下", resp.Message.Content)
			require.Greater(t, len(*thoughts), 1, "reasoning streams in pieces")
			for _, th := range *thoughts {
				require.True(t, utf8.ValidString(th), "reasoning piece %q is whole characters", th)
			}
			require.Equal(t, reasoning, strings.Join(*thoughts, ""))
			require.Equal(t, "我问一下", strings.Join(*deltas, ""), "reasoning is never a text delta")
			require.NotNil(t, resp.Message.Reasoning)
			require.Equal(t, model.ReasoningOpenAI, resp.Message.Reasoning.Provider)
			require.Equal(t, reasoning, resp.Message.Reasoning.Text)

			// The turn goes back as the run continues; a later plain turn
			// with reasoning does not carry it back (no tool calls).
			b.fake.Push(fakeopenai.Turn{Text: "好"})
			req := simpleRequest()
			req.Messages = append(req.Messages, resp.Message,
				model.Message{Role: model.RoleTool, ToolCallID: "call_r", Name: "ask_user", Content: "prod"},
				model.Message{Role: model.RoleAssistant, Content: "earlier answer", Reasoning: &model.Reasoning{Provider: model.ReasoningOpenAI, Text: "old", Data: resp.Message.Reasoning.Data}},
				model.Message{Role: model.RoleUser, Content: "再来"})
			_, err = p.Generate(b.ctx, req, nil)
			require.NoError(t, err, "the fake accepts the turn with its reasoning")
			got := b.fake.Requests()[1].Messages
			require.Equal(t, reasoning, got[1][field], "byte for byte, in the field it came in")
			require.NotContains(t, got[3], field, "no reasoning back on a turn without tool calls")
			for _, other := range []string{"reasoning_content", "reasoning"} {
				if other != field {
					require.NotContains(t, got[1], other)
				}
			}
		})
	}
}

// An empty reasoning field is still reasoning: it goes back empty (DeepSeek
// answers 400 when a tool-call turn lacks reasoning_content, even an empty
// one); reasoning of another provider's kind never goes to this one.
func TestReasoningEmptyAndForeign(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.EnforceReasoning()
	b.fake.Push(fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_e", Name: "ask_user", Arguments: `{}`}}}, fakeopenai.Turn{Text: "ok"})
	p := b.provider(t, openai.Options{})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.NotNil(t, resp.Message.Reasoning)
	require.Empty(t, resp.Message.Reasoning.Text)

	foreign := model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_x", Name: "ask_user", Arguments: `{}`}},
		Reasoning: &model.Reasoning{Provider: model.ReasoningAnthropic, Text: "claude thinking", Data: json.RawMessage(`{"blocks":[]}`)}}
	req := simpleRequest()
	req.Messages = append(req.Messages, resp.Message, model.Message{Role: model.RoleTool, ToolCallID: "call_e", Content: "a"},
		foreign, model.Message{Role: model.RoleTool, ToolCallID: "call_x", Content: "b"})
	_, err = p.Generate(b.ctx, req, nil)
	require.NoError(t, err)
	got := b.fake.Requests()[1].Messages
	require.Equal(t, "", got[1]["reasoning_content"])
	require.Contains(t, got[1], "reasoning_content")
	require.NotContains(t, got[3], "reasoning_content")
	require.NotContains(t, string(b.fake.Requests()[1].Raw), "claude thinking")
}

// A server without reasoning gives no Reasoning, and the request body stays
// exactly as before (TestRequestBodyExact).
func TestNoReasoningField(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Text: "plain", ToolCalls: []fakeopenai.ToolCall{{ID: "c", Name: "ask_user", Arguments: `{}`}}})
	resp, err := b.provider(t, openai.Options{}).Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Nil(t, resp.Message.Reasoning)
}

// OpenRouter relays a routed model's signed thinking as reasoning_details
// pieces (text pieces, then the signature, one index): they are merged into
// one entry and sent back with the reasoning on the tool-call turn, which
// the fake insists on.
func TestReasoningDetailsMergedAndSentBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.EnforceReasoning()
	thinking := "路由后的思考 \"quoted\" 😀"
	b.fake.Push(fakeopenai.Turn{Reasoning: thinking, ReasoningField: "reasoning", ReasoningSignature: "c2lnLW9wZW5yb3V0ZXI=", ChunkBytes: 1,
		ToolCalls: []fakeopenai.ToolCall{{ID: "call_or", Name: "ask_user", Arguments: `{}`}}}, fakeopenai.Turn{Text: "ok"})
	p := b.provider(t, openai.Options{})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, thinking, resp.Message.Reasoning.Text)

	req := simpleRequest()
	req.Messages = append(req.Messages, resp.Message, model.Message{Role: model.RoleTool, ToolCallID: "call_or", Content: "a"})
	_, err = p.Generate(b.ctx, req, nil)
	require.NoError(t, err, "the fake accepts the merged reasoning_details")
	got := b.fake.Requests()[1].Messages[1]
	require.Equal(t, thinking, got["reasoning"])
	require.Equal(t, []any{map[string]any{"type": "reasoning.text", "text": thinking, "signature": "c2lnLW9wZW5yb3V0ZXI=", "format": "anthropic-claude-v1", "index": float64(0)}}, got["reasoning_details"])

	// Without them the fake refuses, as OpenRouter does.
	b.fake.Push(fakeopenai.Turn{Text: "unused"})
	bare := *resp.Message.Reasoning
	bare.Data = json.RawMessage(`{"fields":["reasoning"]}`)
	msg := resp.Message
	msg.Reasoning = &bare
	req.Messages[1] = msg
	_, err = p.Generate(b.ctx, req, nil)
	require.ErrorContains(t, err, "reasoning_details")
}
