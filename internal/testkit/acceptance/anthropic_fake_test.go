package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/anthropic"
)

// anthropicFake is fakeanthropic behind the real model/anthropic provider
// (issue 6): LUBAN_ACCEPTANCE_MODEL=anthropic runs the whole suite on it.
type anthropicFake struct{ srv *fakeanthropic.Server }

func newAnthropicFake(t testing.TB) *anthropicFake {
	return &anthropicFake{srv: fakeanthropic.New(t)}
}

func (f *anthropicFake) name() string { return "anthropic" }

func (f *anthropicFake) provider(t testing.TB) model.Provider {
	// No retries, as for openaiFake: an unexpected model call shows up
	// exactly once in the request count and fails the run at once.
	p, err := anthropic.New(anthropic.Options{BaseURL: f.srv.URL(), Model: "fake-model", MaxRetries: -1})
	require.NoError(t, err)
	return p
}

func (f *anthropicFake) push(turns ...turn) {
	for _, tr := range turns {
		ft := fakeanthropic.Turn{Text: tr.text}
		for _, c := range tr.calls {
			ft.ToolUses = append(ft.ToolUses, fakeanthropic.ToolUse{ID: c.id, Name: c.name, Input: c.args})
		}
		f.srv.Push(ft)
	}
}

func (f *anthropicFake) requests() []wireRequest { return convertAnthropic(f.srv.Requests()) }

func (f *anthropicFake) waitRequests(ctx context.Context, n int) ([]wireRequest, error) {
	reqs, err := f.srv.WaitRequests(ctx, n)
	if err != nil {
		return nil, err
	}
	return convertAnthropic(reqs), nil
}

// convertAnthropic maps Messages requests to the suite's neutral view, the
// OpenAI vocabulary luban's own model.Message uses: the system text first,
// one "tool" message per tool_result block, one "user" message per text
// block, one "assistant" message per assistant turn. It checks the Messages
// API's rules on the way (wireRequest.err): roles alternate starting with
// user, an assistant turn with tool_use blocks is followed by ONE user
// message whose first blocks are a tool_result for each of them, in call
// order, no text block is empty.
func convertAnthropic(reqs []*fakeanthropic.Request) []wireRequest {
	out := make([]wireRequest, len(reqs))
	for i, r := range reqs {
		w := wireRequest{raw: r.Raw, body: r.Body, tools: r.ToolNames}
		msgs, err := anthropicMessages(r.Raw)
		w.messages, w.err = msgs, err
		out[i] = w
	}
	return out
}

type anthropicBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
}

func anthropicMessages(raw []byte) ([]wireMessage, error) {
	var body struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	var out []wireMessage
	var firstErr error
	fail := func(format string, args ...any) {
		if firstErr == nil {
			firstErr = fmt.Errorf(format, args...)
		}
	}
	if len(body.System) > 0 {
		text, err := textOf(body.System)
		if err != nil {
			fail("system: %v", err)
		}
		out = append(out, wireMessage{role: "system", content: text})
	}
	var owed []string // tool_use ids the next user message must answer, in order
	for i, m := range body.Messages {
		want := "user"
		if i%2 == 1 {
			want = "assistant"
		}
		if m.Role != want {
			fail("message %d has role %q, want %q (roles alternate, user first)", i, m.Role, want)
		}
		var blocks []anthropicBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			var s string
			if json.Unmarshal(m.Content, &s) != nil {
				fail("message %d: content is neither blocks nor a string: %s", i, m.Content)
				continue
			}
			blocks = []anthropicBlock{{Type: "text", Text: &s}}
		}
		if len(blocks) == 0 {
			fail("message %d has no content", i)
		}
		switch m.Role {
		case "assistant":
			if len(owed) > 0 {
				fail("message %d: tool_use %v never answered", i, owed)
			}
			wm := wireMessage{role: "assistant"}
			for _, b := range blocks {
				switch b.Type {
				case "text":
					if b.Text == nil || *b.Text == "" {
						fail("message %d: empty text block", i)
						continue
					}
					wm.content += *b.Text
				case "tool_use":
					if b.ID == "" || b.Name == "" || len(b.Input) == 0 || b.Input[0] != '{' {
						fail("message %d: malformed tool_use %+v", i, b)
					}
					var args bytes.Buffer
					_ = json.Compact(&args, b.Input)
					wm.calls = append(wm.calls, call{id: b.ID, name: b.Name, args: args.String()})
					owed = append(owed, b.ID)
				case "thinking", "redacted_thinking":
					// Extended thinking sent back (checked by the fake's
					// reasoning mode); not part of the neutral view.
				default:
					fail("message %d: unexpected %s block in an assistant message", i, b.Type)
				}
			}
			out = append(out, wm)
		default:
			seenText := false
			for _, b := range blocks {
				switch b.Type {
				case "tool_result":
					if seenText {
						fail("message %d: tool_result after a text block", i)
					}
					if len(owed) == 0 || owed[0] != b.ToolUseID {
						fail("message %d: tool_result for %q, want the results of %v in call order", i, b.ToolUseID, owed)
					} else {
						owed = owed[1:]
					}
					text := ""
					if len(b.Content) > 0 {
						var err error
						if text, err = textOf(b.Content); err != nil {
							fail("message %d: tool_result content: %v", i, err)
						}
					}
					out = append(out, wireMessage{role: "tool", content: text, toolCallID: b.ToolUseID})
				case "text":
					seenText = true
					if b.Text == nil || *b.Text == "" {
						fail("message %d: empty text block", i)
						continue
					}
					out = append(out, wireMessage{role: "user", content: *b.Text})
				default:
					fail("message %d: unexpected %s block in a user message", i, b.Type)
				}
			}
			if len(owed) > 0 {
				fail("message %d: tool_use %v not answered in the user message right after it", i, owed)
				owed = nil
			}
		}
	}
	return out, firstErr
}

// textOf reads a string or a list of text blocks as one text.
func textOf(raw json.RawMessage) (string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return "", err
	}
	var out string
	for _, b := range blocks {
		if b.Type != "text" || b.Text == nil || *b.Text == "" {
			return "", fmt.Errorf("want non-empty text blocks, got %+v", b)
		}
		out += *b.Text
	}
	return out, nil
}
