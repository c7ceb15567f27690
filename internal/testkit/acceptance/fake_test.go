package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/openai"
)

// modelFake is a fake model server scripted by a test, seen through
// provider-neutral turns and requests so that the suite's tests do not
// depend on one wire format. Each implementation translates its real wire
// format (OpenAI chat.completion chunks here; Anthropic Messages later)
// strictly, failing on shapes it does not expect.
type modelFake interface {
	name() string
	// provider is the real luban provider pointed at the fake.
	provider(t testing.TB) model.Provider
	// push queues the turns the model plays, one per request, in order.
	push(turns ...turn)
	// requests are every request received so far, decoded.
	requests() []wireRequest
	// waitRequests waits until n requests were received.
	waitRequests(ctx context.Context, n int) ([]wireRequest, error)
}

// turn is one scripted assistant turn: text, then tool calls.
type turn struct {
	text  string
	calls []call
}

// call is a tool call the fake model makes, or one it received back in the
// conversation. args is sent verbatim (it may be invalid JSON).
type call struct {
	id, name, args string
}

// wireRequest is one model request as the fake received it.
type wireRequest struct {
	raw      []byte
	body     map[string]any
	tools    []string
	messages []wireMessage
	err      error // set when the body did not have the expected shape
}

// wireMessage is one conversation message of a request.
type wireMessage struct {
	role       string
	content    string
	calls      []call
	toolCallID string
}

// toolMessages returns the request's tool messages, in order.
func (r wireRequest) toolMessages() []wireMessage {
	var out []wireMessage
	for _, m := range r.messages {
		if m.role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// last returns the request's last message.
func (r wireRequest) last() wireMessage { return r.messages[len(r.messages)-1] }

// hasText reports whether any message's content is s.
func (r wireRequest) hasText(s string) bool {
	for _, m := range r.messages {
		if m.content == s {
			return true
		}
	}
	return false
}

// openaiFake is fakeopenai behind the real model/openai provider.
type openaiFake struct{ srv *fakeopenai.Server }

func newOpenAIFake(t testing.TB) *openaiFake { return &openaiFake{srv: fakeopenai.New(t)} }

func (f *openaiFake) name() string { return "openai" }

func (f *openaiFake) provider(t testing.TB) model.Provider {
	// No retries: an unexpected model call shows up exactly once in the
	// request count and fails the run at once.
	p, err := openai.New(openai.Options{BaseURL: f.srv.URL(), Model: "fake-model", MaxRetries: -1})
	require.NoError(t, err)
	return p
}

func (f *openaiFake) push(turns ...turn) {
	for _, tr := range turns {
		ft := fakeopenai.Turn{Text: tr.text}
		for _, c := range tr.calls {
			ft.ToolCalls = append(ft.ToolCalls, fakeopenai.ToolCall{ID: c.id, Name: c.name, Arguments: c.args})
		}
		f.srv.Push(ft)
	}
}

func (f *openaiFake) requests() []wireRequest { return convertOpenAI(f.srv.Requests()) }

func (f *openaiFake) waitRequests(ctx context.Context, n int) ([]wireRequest, error) {
	reqs, err := f.srv.WaitRequests(ctx, n)
	if err != nil {
		return nil, err
	}
	return convertOpenAI(reqs), nil
}

func convertOpenAI(reqs []*fakeopenai.Request) []wireRequest {
	out := make([]wireRequest, len(reqs))
	for i, r := range reqs {
		w := wireRequest{raw: r.Raw, body: r.Body, tools: r.ToolNames}
		for _, m := range r.Messages {
			wm, err := openaiMessage(m)
			if err != nil && w.err == nil {
				w.err = err
			}
			w.messages = append(w.messages, wm)
		}
		out[i] = w
	}
	return out
}

// openaiMessage decodes one Chat Completions message strictly: content a
// string (or absent on an assistant message with tool calls), tool calls of
// type "function" with string arguments, tool messages with a tool_call_id.
func openaiMessage(m map[string]any) (wireMessage, error) {
	var w wireMessage
	var ok bool
	if w.role, ok = m["role"].(string); !ok {
		return w, fmt.Errorf("message without role: %v", m)
	}
	switch c := m["content"].(type) {
	case string:
		w.content = c
	case nil:
		if w.role != "assistant" {
			return w, fmt.Errorf("%s message without content", w.role)
		}
	default:
		return w, fmt.Errorf("%s message content is %T, want a string", w.role, c)
	}
	if w.role == "tool" {
		if w.toolCallID, ok = m["tool_call_id"].(string); !ok || w.toolCallID == "" {
			return w, fmt.Errorf("tool message without tool_call_id: %v", m)
		}
	}
	if tcs, present := m["tool_calls"]; present {
		list, ok := tcs.([]any)
		if !ok || w.role != "assistant" {
			return w, fmt.Errorf("tool_calls on a %s message: %v", w.role, tcs)
		}
		for _, x := range list {
			b, _ := json.Marshal(x)
			var tc struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			}
			if err := json.Unmarshal(b, &tc); err != nil || tc.Type != "function" || tc.ID == "" || tc.Function.Name == "" {
				return w, fmt.Errorf("malformed tool call %s", b)
			}
			w.calls = append(w.calls, call{id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
		}
	}
	return w, nil
}
