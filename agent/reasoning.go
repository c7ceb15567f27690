package agent

import (
	"context"
	"encoding/json"
	"time"

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

// modelStream is a model call (callModel): its request, its streamed text and
// its reasoning, each batched into delta events of message msgID
// (message_delta and reasoning_delta), the Seqs of those events, and the
// liveTurn a cancel claims; one allocation holds it all. The reasoning
// batcher's add goes to model.Request.OnReasoning; both batchers' take must
// be called once the call returned, before the message's transaction (which
// deletes the deltas), and drop the batches still waiting, which the
// message event carries.
type modelStream struct {
	req       model.Request // the call's request
	r         *Runner
	ctx       context.Context
	sessionID string
	seqs      streamedSeqs
	text      deltaBatcher
	reasoning deltaBatcher
	live      liveTurn
}

func (r *Runner) newModelStream(ctx context.Context, sessionID, msgID string) *modelStream {
	s := &modelStream{r: r, ctx: ctx, sessionID: sessionID}
	now := time.Now()
	s.text = deltaBatcher{out: s, event: api.EventMessageDelta, lastFlush: now}
	s.reasoning = deltaBatcher{out: s, event: api.EventReasoningDelta, lastFlush: now}
	s.live = liveTurn{msgID: msgID, deltas: &s.text, seqs: &s.seqs, stream: s}
	return s
}

// emit commits text as one delta event of b, the stream's text or its
// reasoning, and records its Seq.
func (s *modelStream) emit(b *deltaBatcher, text string) {
	var v any = api.MessageDeltaEvent{MessageID: s.live.msgID, Delta: text}
	what := "emit delta"
	if b == &s.reasoning {
		v, what = api.ReasoningDeltaEvent{MessageID: s.live.msgID, Delta: text}, "emit reasoning delta"
	}
	ev, err := s.r.emit(s.ctx, s.r.st, s.sessionID, b.event, v)
	if err != nil && s.ctx.Err() == nil {
		s.r.log.Error(what, "err", err)
	}
	s.seqs.add(ev)
}

// onText is the model call's text callback: it batches text and lets a
// test's fault hook in.
func (s *modelStream) onText(text string) {
	s.text.add(text)
	s.r.fault("model_stream")
}
