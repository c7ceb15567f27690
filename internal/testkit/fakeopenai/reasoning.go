package fakeopenai

import (
	"fmt"
	"net/http"
	"reflect"
	"sync"
)

// ReasoningMessage is the 400 message of a request whose tool-call turn
// came back without its reasoning, as DeepSeek's thinking mode words it.
const ReasoningMessage = "The reasoning_content in the thinking mode must be passed back to the API."

// reasoningMode is the state of EnforceReasoning: the reasoning streamed
// with each tool call, by call id.
type reasoningMode struct {
	mu    sync.Mutex
	on    bool
	byID  map[string]sentReasoning
	order []string
}

type sentReasoning struct {
	field, text string
	signature   string // ReasoningSignature: reasoning_details must come back too
}

// DetailsMessage is the 400 message of a request whose tool-call turn came
// back without its reasoning_details (OpenRouter relays the routed model's
// refusal, Anthropic's here).
const DetailsMessage = "Invalid `signature` in `thinking` block (reasoning_details of a tool-call turn must be passed back unchanged)"

// EnforceReasoning turns on reasoning mode, which plays a thinking model
// the way DeepSeek's thinking mode behaves:
//   - every streamed turn carries its reasoning field (Turn.ReasoningField,
//     default reasoning_content), at least once even when Turn.Reasoning is
//     empty;
//   - the server remembers the reasoning of every turn that made tool
//     calls, and answers 400 invalid_request_error (ReasoningMessage) to a
//     request in which an assistant message with one of those calls lacks
//     that reasoning in that field, byte for byte.
//
// With Turn.ReasoningSignature the turn's reasoning_details must come back
// too, merged into one entry with its text and signature (OpenRouter).
// Assistant messages without tool calls are not checked (DeepSeek ignores
// their reasoning).
func (s *Server) EnforceReasoning() {
	s.reasoning.mu.Lock()
	defer s.reasoning.mu.Unlock()
	s.reasoning.on = true
	if s.reasoning.byID == nil {
		s.reasoning.byID = map[string]sentReasoning{}
	}
}

func (m *reasoningMode) enabled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on
}

// remember records the reasoning of a turn about to be streamed.
func (m *reasoningMode) remember(turn Turn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on {
		return
	}
	for _, c := range turn.ToolCalls {
		m.byID[c.ID] = sentReasoning{field: reasoningField(turn), text: turn.Reasoning, signature: turn.ReasoningSignature}
		m.order = append(m.order, c.ID)
	}
}

// check returns the 400 message for a request that drops or changes the
// reasoning of a tool-call turn; "" when the request is fine.
func (m *reasoningMode) check(req *Request) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.on {
		return ""
	}
	for i, msg := range req.Messages {
		if msg["role"] != "assistant" {
			continue
		}
		calls, _ := msg["tool_calls"].([]any)
		for _, c := range calls {
			cm, _ := c.(map[string]any)
			id, _ := cm["id"].(string)
			sent, ok := m.byID[id]
			if !ok {
				continue
			}
			got, isString := msg[sent.field].(string)
			if !isString {
				return fmt.Sprintf("%s (messages[%d] has tool call %s without %s)", ReasoningMessage, i, id, sent.field)
			}
			if got != sent.text {
				return fmt.Sprintf("%s (messages[%d] %s differs from the reasoning sent with tool call %s)", ReasoningMessage, i, sent.field, id)
			}
			if sent.signature != "" {
				want := []any{map[string]any{"type": "reasoning.text", "text": sent.text, "signature": sent.signature, "format": "anthropic-claude-v1", "index": float64(0)}}
				if !reflect.DeepEqual(msg["reasoning_details"], want) {
					return fmt.Sprintf("%s: messages[%d] has %v", DetailsMessage, i, msg["reasoning_details"])
				}
			}
		}
	}
	return ""
}

func reasoningField(turn Turn) string {
	if turn.ReasoningField != "" {
		return turn.ReasoningField
	}
	return "reasoning_content"
}

// rejectReasoning answers 400 when reasoning mode finds the request
// breaking the rule; it reports whether it did.
func (s *Server) rejectReasoning(w http.ResponseWriter, req *Request) bool {
	msg := s.reasoning.check(req)
	if msg == "" {
		return false
	}
	writeErrorTyped(w, http.StatusBadRequest, "invalid_request_error", msg)
	return true
}
