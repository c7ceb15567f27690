package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/anthropic"
)

// Extended thinking with tools: thinking, redacted_thinking and interleaved
// thinking between two tool_use blocks come back as Message.Reasoning (the
// readable text joined, never in the answer text), and the next request
// sends every block back unchanged and in place, with thinking enabled,
// which the fake in reasoning mode insists on.
func TestThinkingKeptAndSentBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.EnforceThinking()
	first, second := "先想想 <b>部署</b> 😀", "再想第二个问题"
	b.fake.Push(fakeanthropic.Turn{Thinking: first, RedactedThinking: "RU5DUllQVEVE", Text: "我问两件事", ChunkBytes: 1,
		ToolUses: []fakeanthropic.ToolUse{
			{ID: "toolu_1", Name: "ask_user", Input: `{"title":"环境?"}`},
			{ID: "toolu_2", Name: "ask_user", Input: `{"title":"时间?"}`, ThinkingBefore: second},
		}}, fakeanthropic.Turn{Text: "好"})
	p := b.provider(t, anthropic.Options{ThinkingBudget: 2048})
	deltas, on := collect()
	thoughts, onReasoning := collect()
	firstReq := simpleRequest()
	firstReq.OnReasoning = onReasoning
	resp, err := p.Generate(b.ctx, firstReq, on)
	require.NoError(t, err)
	require.Equal(t, "我问两件事", resp.Message.Content)
	for _, th := range *thoughts {
		require.True(t, utf8.ValidString(th), "thinking piece %q is whole characters", th)
	}
	require.Equal(t, first+"\n\n"+second, strings.Join(*thoughts, ""), "the streamed thinking joins to Reasoning.Text")
	require.Equal(t, "我问两件事", strings.Join(*deltas, ""), "thinking is never a text delta")
	require.Len(t, resp.Message.ToolCalls, 2)
	r := resp.Message.Reasoning
	require.NotNil(t, r)
	require.Equal(t, model.ReasoningAnthropic, r.Provider)
	require.Equal(t, first+"\n\n"+second, r.Text)

	req := simpleRequest()
	req.Messages = append(req.Messages, resp.Message,
		model.Message{Role: model.RoleTool, ToolCallID: "toolu_1", Content: "prod"},
		model.Message{Role: model.RoleTool, ToolCallID: "toolu_2", Content: "now"})
	_, err = p.Generate(b.ctx, req, nil)
	require.NoError(t, err, "the fake accepts the blocks as sent back")

	got := b.fake.Requests()[1]
	require.Equal(t, map[string]any{"type": "enabled", "budget_tokens": float64(2048)}, got.Body["thinking"])
	require.Greater(t, got.Body["max_tokens"].(float64), float64(2048), "max_tokens is raised above the budget")
	content, err := json.Marshal(got.Messages[1]["content"])
	require.NoError(t, err)
	require.JSONEq(t, `[
		{"type":"thinking","thinking":`+quote(first)+`,"signature":`+quote(fakeanthropic.Signature(first))+`},
		{"type":"redacted_thinking","data":"RU5DUllQVEVE"},
		{"type":"text","text":"我问两件事"},
		{"type":"tool_use","id":"toolu_1","name":"ask_user","input":{"title":"环境?"}},
		{"type":"thinking","thinking":`+quote(second)+`,"signature":`+quote(fakeanthropic.Signature(second))+`},
		{"type":"tool_use","id":"toolu_2","name":"ask_user","input":{"title":"时间?"}}
	]`, string(content))
}

// Without ThinkingBudget no thinking is asked for; reasoning of another
// provider never reaches Anthropic; a budget under the API minimum is
// refused by New.
func TestThinkingOffAndForeign(t *testing.T) {
	t.Parallel()
	_, err := anthropic.New(anthropic.Options{Model: "m", ThinkingBudget: 100})
	require.ErrorContains(t, err, "1024")

	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Text: "ok"})
	req := simpleRequest()
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Content: "x", ToolCalls: []model.ToolCall{{ID: "toolu_f", Name: "ask_user", Arguments: `{}`}},
			Reasoning: &model.Reasoning{Provider: model.ReasoningOpenAI, Text: "deepseek thinking", Data: json.RawMessage(`{"fields":["reasoning_content"]}`)}},
		model.Message{Role: model.RoleTool, ToolCallID: "toolu_f", Content: "a"})
	_, err = b.provider(t, anthropic.Options{}).Generate(b.ctx, req, nil)
	require.NoError(t, err)
	got := b.fake.Requests()[0]
	require.NotContains(t, got.Body, "thinking")
	require.NotContains(t, string(got.Raw), "deepseek thinking")
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
