package fakeanthropic

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
)

// Signature is the signature the fake gives a thinking block: a function of
// its text alone, so that the fake can tell a thinking block sent back
// unchanged from one whose text or signature was altered (the real API
// checks its own cryptographic signature the same way).
func Signature(thinking string) string {
	sum := sha256.Sum256([]byte("fakeanthropic thinking\x00" + thinking))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// sentBlock is a non-text content block of a turn the fake streamed, in the
// form the client must send back: a thinking block with its signature, a
// redacted_thinking block with its data, or a tool_use block by id.
type sentBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"`
	Data      string `json:"data,omitempty"`
	ID        string `json:"id,omitempty"`
}

// thinkingMode is the state of EnforceThinking: the non-text blocks of each
// streamed turn that had thinking and tool_use, by tool_use id.
type thinkingMode struct {
	mu   sync.Mutex
	on   bool
	byID map[string][]sentBlock
}

// EnforceThinking turns on reasoning mode, which plays extended thinking
// the way the Messages API enforces it:
//   - every request must enable it: "thinking" {"type":"enabled",
//     "budget_tokens" >= 1024 and < max_tokens}, else 400;
//   - thinking blocks are signed (Signature); a thinking block sent back
//     whose signature does not match its text is 400 "Invalid signature";
//   - an assistant message with a tool_use of a turn that had thinking must
//     carry that turn's thinking and redacted_thinking blocks unchanged, in
//     their places among its tool_use blocks; the final assistant message
//     must start with them ("Expected thinking or redacted_thinking, but
//     found tool_use"), else 400.
func (s *Server) EnforceThinking() {
	s.thinking.mu.Lock()
	defer s.thinking.mu.Unlock()
	s.thinking.on = true
	if s.thinking.byID == nil {
		s.thinking.byID = map[string][]sentBlock{}
	}
}

// remember records the blocks of a turn about to be streamed.
func (m *thinkingMode) remember(turn Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on {
		return
	}
	blocks := sentBlocks(turn)
	if len(blocks) == len(turn.ToolUses) { // no thinking at all
		return
	}
	for _, tu := range turn.ToolUses {
		m.byID[tu.ID] = blocks
	}
}

// sentBlocks are the non-text blocks of turn in stream order (streamTurn's
// order).
func sentBlocks(turn Turn) []sentBlock {
	var out []sentBlock
	if turn.Thinking != "" {
		out = append(out, sentBlock{Type: "thinking", Thinking: turn.Thinking, Signature: Signature(turn.Thinking)})
	}
	if turn.RedactedThinking != "" {
		out = append(out, sentBlock{Type: "redacted_thinking", Data: turn.RedactedThinking})
	}
	for _, tu := range turn.ToolUses {
		if tu.ThinkingBefore != "" {
			out = append(out, sentBlock{Type: "thinking", Thinking: tu.ThinkingBefore, Signature: Signature(tu.ThinkingBefore)})
		}
		out = append(out, sentBlock{Type: "tool_use", ID: tu.ID})
	}
	return out
}

// check returns the 400 message for a request that breaks the rules of
// EnforceThinking; "" when it is fine.
func (m *thinkingMode) check(req *Request) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on {
		return ""
	}
	th, _ := req.Body["thinking"].(map[string]any)
	budget, _ := th["budget_tokens"].(float64)
	maxTokens, _ := req.Body["max_tokens"].(float64)
	if th["type"] != "enabled" || budget < 1024 || budget >= maxTokens {
		return fmt.Sprintf("thinking: reasoning mode needs {\"type\":\"enabled\",\"budget_tokens\">=1024 and < max_tokens}, got %v (max_tokens %v)", req.Body["thinking"], maxTokens)
	}
	lastAssistant := -1
	for i, msg := range req.Messages {
		if msg["role"] == "assistant" {
			lastAssistant = i
		}
	}
	for i, msg := range req.Messages {
		if msg["role"] != "assistant" {
			continue
		}
		var got []sentBlock
		var want []sentBlock
		first := ""
		content, _ := msg["content"].([]any)
		for j, c := range content {
			raw, _ := json.Marshal(c)
			var b sentBlock
			_ = json.Unmarshal(raw, &b)
			if j == 0 {
				first = b.Type
			}
			switch b.Type {
			case "thinking":
				if b.Signature != Signature(b.Thinking) {
					return fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, j)
				}
				got = append(got, b)
			case "redacted_thinking":
				got = append(got, b)
			case "tool_use":
				got = append(got, sentBlock{Type: "tool_use", ID: b.ID})
				if want == nil {
					want = m.byID[b.ID]
				}
			}
		}
		if want == nil {
			continue
		}
		if i == lastAssistant && first != "thinking" && first != "redacted_thinking" && want[0].Type != "tool_use" {
			return fmt.Sprintf("messages.%d.content.0.type: Expected `thinking` or `redacted_thinking`, but found `%s`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).", i, first)
		}
		if !sameBlocks(got, want) {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			return fmt.Sprintf("messages.%d.content: the thinking blocks of this tool_use turn must be passed back unchanged: got %s, want %s", i, g, w)
		}
	}
	return ""
}

func sameBlocks(a, b []sentBlock) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rejectThinking answers 400 when reasoning mode finds the request
// breaking a rule; it reports whether it did.
func (s *Server) rejectThinking(w http.ResponseWriter, req *Request) bool {
	msg := s.thinking.check(req)
	if msg == "" {
		return false
	}
	writeError(w, http.StatusBadRequest, "", "invalid_request_error", msg)
	return true
}
