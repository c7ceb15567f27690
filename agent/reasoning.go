package agent

import (
	"encoding/json"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// messageMetadata is the metadata of a stored assistant message: the
// reasoning the model produced with it (model.Reasoning, provider data
// included), so that it is sent back on later requests exactly as received
// (docs/models.md "Reasoning models").
type messageMetadata struct {
	Reasoning *model.Reasoning `json:"reasoning,omitempty"`
}

// assistantMetadata is the metadata column of the assistant message m; nil
// when it has no reasoning.
func assistantMetadata(m model.Message) json.RawMessage {
	if m.Reasoning == nil {
		return nil
	}
	return mustJSON(messageMetadata{Reasoning: m.Reasoning})
}

// MessageReasoning is the reasoning stored with an assistant message, nil
// when it has none (or its metadata is not luban's). It is never part of
// m.Content.
func MessageReasoning(m *store.Message) *model.Reasoning {
	if m.Role != "assistant" || len(m.Metadata) == 0 {
		return nil
	}
	var md messageMetadata
	if json.Unmarshal(m.Metadata, &md) != nil {
		return nil
	}
	return md.Reasoning
}

// reasoningText is the readable reasoning of m, "" when none.
func reasoningText(m model.Message) string {
	if m.Reasoning == nil {
		return ""
	}
	return m.Reasoning.Text
}
