package agent

import (
	"context"
	"encoding/json"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// messageMetadata is the metadata of a stored assistant message: the
// reasoning the model produced with it (model.Reasoning, provider data
// included), so that it is sent back on later requests exactly as received
// (docs/models.md "Reasoning models").
type messageMetadata struct {
	Reasoning *model.Reasoning `json:"reasoning,omitempty"`
	// Stopped marks an assistant reply a cancel cut short (api.MessageView.Stopped).
	Stopped bool `json:"stopped,omitempty"`
}

// assistantMetadata is the metadata column of the assistant message m; nil
// when it has no reasoning.
func assistantMetadata(m model.Message) json.RawMessage {
	if m.Reasoning == nil {
		return nil
	}
	return mustJSON(messageMetadata{Reasoning: m.Reasoning})
}

// messageReasoning is the reasoning stored with an assistant message, nil
// when it has none (or its metadata is not luban's). It is never part of
// m.Content.
func messageReasoning(m *store.Message) *model.Reasoning {
	if m.Role != "assistant" || len(m.Metadata) == 0 {
		return nil
	}
	var md messageMetadata
	if json.Unmarshal(m.Metadata, &md) != nil {
		return nil
	}
	return md.Reasoning
}

// messageStopped reports whether m is an assistant reply a cancel cut
// short: its content is the text streamed until the cancel.
func messageStopped(m *store.Message) bool {
	if m.Role != "assistant" || len(m.Metadata) == 0 {
		return false
	}
	var md messageMetadata
	return json.Unmarshal(m.Metadata, &md) == nil && md.Stopped
}

// reasoningText is the readable reasoning of m, "" when none.
func reasoningText(m model.Message) string {
	if m.Reasoning == nil {
		return ""
	}
	return m.Reasoning.Text
}

// reasoningStream streams a model call's reasoning as reasoning_delta
// events of message msgID, batched like message_delta, and records their
// Seqs in seqs. Its add goes to model.Request.OnReasoning; its take ends
// the stream and drops the batch still waiting, which the message event's
// reasoning carries. take must be called once the call returned, before
// the message's transaction (which deletes the deltas, as it does the
// message_deltas).
func (r *Runner) reasoningStream(ctx context.Context, sessionID, msgID string, seqs *streamedSeqs) *deltaBatcher {
	b := newDeltaBatcher(func(text string) {
		ev, err := r.emit(ctx, r.st, sessionID, api.EventReasoningDelta, api.ReasoningDeltaEvent{MessageID: msgID, Delta: text})
		if err != nil && ctx.Err() == nil {
			r.log.Error("emit reasoning delta", "err", err)
		}
		seqs.add(ev)
	})
	return b
}
