package acceptance

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/anthropic"
	"github.com/lubanhq/luban/model/openai"
)

// Reasoning models (docs/models.md "Reasoning models"): a thinking model
// asks with ask_user; the run pauses; the server restarts; the person
// answers; the request that continues the run must carry the assistant
// turn's reasoning back exactly as the provider sent it, or the fake (in
// reasoning mode, like DeepSeek's thinking mode and Anthropic's extended
// thinking) answers 400 and the run fails. Each fake runs here whatever
// LUBAN_ACCEPTANCE_MODEL says; the store is the suite's.

// reasoningFake is a model fake in reasoning mode.
type reasoningFake interface {
	modelFake
	// pushReasoning queues a turn with reasoning text.
	pushReasoning(reasoning string, tr turn)
	// sentBack returns the reasoning request i carried back on the
	// assistant turn that made tool call callID, as the wire had it
	// (OpenAI: the reasoning_content string; Anthropic: the thinking block
	// text, checked to carry its signature); ok false when there was none.
	sentBack(t *testing.T, i int, callID string) (string, bool)
}

func (f *openaiFake) pushReasoning(reasoning string, tr turn) {
	ft := fakeopenai.Turn{Text: tr.text, Reasoning: reasoning, ChunkBytes: 1}
	for _, c := range tr.calls {
		ft.ToolCalls = append(ft.ToolCalls, fakeopenai.ToolCall{ID: c.id, Name: c.name, Arguments: c.args})
	}
	f.srv.Push(ft)
}

func (f *openaiFake) sentBack(t *testing.T, i int, callID string) (string, bool) {
	for _, m := range f.srv.Requests()[i].Messages {
		calls, _ := m["tool_calls"].([]any)
		for _, c := range calls {
			if cm, _ := c.(map[string]any); cm["id"] == callID {
				s, ok := m["reasoning_content"].(string)
				return s, ok
			}
		}
	}
	return "", false
}

func (f *anthropicFake) pushReasoning(reasoning string, tr turn) {
	ft := fakeanthropic.Turn{Text: tr.text, Thinking: reasoning, ChunkBytes: 1}
	for _, c := range tr.calls {
		ft.ToolUses = append(ft.ToolUses, fakeanthropic.ToolUse{ID: c.id, Name: c.name, Input: c.args})
	}
	f.srv.Push(ft)
}

func (f *anthropicFake) sentBack(t *testing.T, i int, callID string) (string, bool) {
	for _, m := range f.srv.Requests()[i].Messages {
		blocks, _ := m["content"].([]any)
		var thinking *string
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			switch bm["type"] {
			case "thinking":
				s, _ := bm["thinking"].(string)
				require.Equal(t, fakeanthropic.Signature(s), bm["signature"], "the signature comes back with its block")
				thinking = &s
			case "tool_use":
				if bm["id"] == callID {
					if thinking == nil {
						return "", false
					}
					return *thinking, true
				}
			}
		}
	}
	return "", false
}

func TestReasoningAskUserCycle(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"openai", "anthropic"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var f reasoningFake
			var provider func() model.Provider
			switch name {
			case "openai":
				of := newOpenAIFake(t)
				of.srv.EnforceReasoning()
				f, provider = of, func() model.Provider {
					p, err := openai.New(openai.Options{BaseURL: of.srv.URL(), Model: "deepseek-reasoner", MaxRetries: -1})
					require.NoError(t, err)
					return p
				}
			case "anthropic":
				af := newAnthropicFake(t)
				af.srv.EnforceThinking()
				f, provider = af, func() model.Provider {
					p, err := anthropic.New(anthropic.Options{BaseURL: af.srv.URL(), Model: "claude-thinking", MaxRetries: -1, ThinkingBudget: 1024})
					require.NoError(t, err)
					return p
				}
			}
			e := &env{t: t, clock: &clock{}, store: pickBackend(t), model: f}
			e.opts = lubantest.Options{Provider: provider(), Now: e.clock.now}
			e.start()
			t.Cleanup(e.saveEvidence)

			reasoning := "先想清楚：用户要部署 <script>alert(1)</script> 😀\n需要问环境"
			text := "我需要确认一下环境。"
			final := "好的，部署到生产。"
			f.pushReasoning(reasoning, turn{text: text, calls: []call{{id: "call_think", name: "ask_user", args: singleArgs}}})
			f.pushReasoning("最后的想法", turn{text: final})

			p := e.ask("", "部署一下")
			require.Equal(t, text, deltas(t, p.events), "reasoning is never a message_delta")
			msg := assistantEvent(t, p.events)
			require.Equal(t, text, msg.Content)
			require.Equal(t, reasoning, msg.Reasoning, "the message event carries the reasoning apart")
			require.Equal(t, reasoning, reasoningDeltas(t, p.events), "reasoning_delta streams it, whole characters")

			// The reasoning survives a restart: it is stored with the message.
			e.restart()
			evs := e.answer(body(p.sessionID, p.req.ID, []string{"safe"}, ""))
			require.Equal(t, "completed", doneStatus(t, evs), "events: %v", lubantest.Names(evs))
			require.Equal(t, final, deltas(t, evs))
			require.Equal(t, "最后的想法", assistantEvent(t, evs).Reasoning)

			reqs := e.waitRequests(2)
			require.NoError(t, reqs[1].err)
			got, ok := f.sentBack(t, 1, "call_think")
			require.True(t, ok, "the request after the resume carries the tool-call turn's reasoning")
			require.Equal(t, reasoning, got, "byte for byte")
			require.Equal(t, text, reqs[1].messages[len(reqs[1].messages)-2].content, "the answer text stays the text")

			tr := e.transcriptReasoning(p.sessionID)
			var contents, reasonings []string
			for _, m := range tr {
				if m.Role == "assistant" {
					contents = append(contents, m.Content)
					reasonings = append(reasonings, m.Reasoning)
					require.Empty(t, m.Metadata, "provider data (signatures) stays on the server")
				}
			}
			require.Equal(t, []string{text, final}, contents)
			require.Equal(t, []string{reasoning, "最后的想法"}, reasonings)
		})
	}
}

type messageEvent struct {
	Role, Content, Reasoning string
}

// assistantEvent is the one assistant message event of evs.
func assistantEvent(t *testing.T, evs []lubantest.Event) messageEvent {
	t.Helper()
	var out []messageEvent
	for _, ev := range named(evs, "message") {
		var m messageEvent
		require.NoError(t, ev.Decode(&m))
		if m.Role == "assistant" {
			out = append(out, m)
		}
	}
	require.Len(t, out, 1)
	return out[0]
}

type reasoningMessage struct {
	Role      string          `json:"role"`
	Content   string          `json:"content"`
	Reasoning string          `json:"reasoning"`
	Metadata  json.RawMessage `json:"metadata"`
}

// transcriptReasoning is the messages of the session's transcript with
// their reasoning.
func (e *env) transcriptReasoning(sessionID string) []reasoningMessage {
	e.t.Helper()
	var v struct {
		Messages []reasoningMessage `json:"messages"`
	}
	e.get("/api/sessions/"+sessionID, &v)
	return v.Messages
}

// withoutReasoning is evs without reasoning_delta events and without the
// reasoning field of message events, for checks that reasoning reaches
// nothing else.
func withoutReasoning(t *testing.T, evs []lubantest.Event) []lubantest.Event {
	t.Helper()
	var out []lubantest.Event
	for _, ev := range evs {
		switch ev.Name {
		case "reasoning_delta":
			continue
		case "message":
			var m map[string]any
			require.NoError(t, ev.Decode(&m))
			delete(m, "reasoning")
			ev.Data = mustMarshal(t, m)
		}
		out = append(out, ev)
	}
	return out
}

// reasoningDeltas is the reasoning evs show a client: each message's
// reasoning_delta text (every delta whole UTF-8, before its message event,
// together the beginning of its reasoning), completed by the message
// event's reasoning. A turn that arrives whole streams no delta
// (docs/design.md "Streamed text").
func reasoningDeltas(t *testing.T, evs []lubantest.Event) string {
	t.Helper()
	var b strings.Builder
	done := map[string]bool{}
	streamed := map[string]string{}
	for _, ev := range evs {
		var d struct{ MessageID, Role, Delta, Reasoning string }
		switch ev.Name {
		case "message":
			require.NoError(t, ev.Decode(&d))
			done[d.MessageID] = true
			if d.Role == "assistant" {
				require.True(t, strings.HasPrefix(d.Reasoning, streamed[d.MessageID]), "the deltas begin the reasoning")
				b.WriteString(d.Reasoning)
			}
		case "reasoning_delta":
			require.NoError(t, ev.Decode(&d))
			require.False(t, done[d.MessageID], "a reasoning_delta after its message")
			require.True(t, utf8.ValidString(d.Delta), "delta %q is whole characters", d.Delta)
			streamed[d.MessageID] += d.Delta
		}
	}
	return b.String()
}
