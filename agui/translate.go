package agui

import (
	"encoding/json"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

// translator turns one run's luban events (docs/design.md §3) into AG-UI events
// (docs/design.md §13), in order. It keeps the one text message that may be open,
// closes it before anything else is sent, and reports the event that ends
// the stream (RUN_FINISHED or RUN_ERROR).
type translator struct {
	threadID, runID string // the AG-UI ids echoed in RUN_FINISHED
	legacy          bool   // the client speaks AG-UI before 1.0 (RunAgentInput.legacy)
	// answered is the front-end tool call whose result the client sent as
	// a tool message: its ToolResult is the client's own, not sent back.
	answered      string
	lubanRun      string // the luban run followed; "" follows whichever run ends next
	openText      string // messageId of the open text message
	openReasoning string // messageId (luban's) whose reasoning is open
	reasoned      string // messageId (luban's) whose reasoning was streamed
	textSent      string // the text openText streamed so far
	reasoningSent string // the reasoning openReasoning streamed so far
	parent        string // the assistant message the next tool calls belong to
	// waitingOn is the ids of the requests a run waits on (the questions
	// its pause put, docs/design.md §32); nil: one per pause.
	waitingOn func(runID string) []string
	// pausing are the interrupts of the pause being read, and waiting the
	// ids of its requests not read yet.
	pausing []Interrupt
	waiting map[string]bool
	// until, when not zero, ends the stream after the event of that Seq
	// (an answer that leaves the run waiting on others).
	until int64
}

// next translates ev. done is true when ev ended the run's stream.
func (t *translator) next(ev agent.Event) (out []Event, done bool) {
	out, done = t.translate(ev)
	if t.until > 0 && ev.Seq >= t.until {
		return t.closeText(out), true
	}
	return out, done
}

func (t *translator) translate(ev agent.Event) (out []Event, done bool) {
	switch ev.Name {
	case api.EventReasoningDelta:
		var d api.ReasoningDeltaEvent
		if json.Unmarshal(ev.Data, &d) != nil || d.Delta == "" {
			return nil, false
		}
		if t.openReasoning != d.MessageID {
			// The reasoning and the text of one message are batched
			// apart, so their deltas may interleave: each is a message of
			// its own and stays open beside the other.
			out = t.closeReasoning(out)
			out = append(out, reasoningStart(d.MessageID)...)
			t.openReasoning, t.reasoned, t.reasoningSent = d.MessageID, d.MessageID, ""
		}
		t.reasoningSent += d.Delta
		return append(out, Event{Type: EventReasoningMessageContent, MessageID: reasoningID(d.MessageID), Delta: d.Delta}), false
	case api.EventMessageDelta:
		var d api.MessageDeltaEvent
		if json.Unmarshal(ev.Data, &d) != nil || d.Delta == "" {
			return nil, false
		}
		if t.openText != d.MessageID {
			out = t.closeTextOnly(out)
			out = append(out, Event{Type: EventTextMessageStart, MessageID: d.MessageID, Role: "assistant"})
			t.openText, t.textSent = d.MessageID, ""
		}
		t.textSent += d.Delta
		return append(out, Event{Type: EventTextMessageContent, MessageID: d.MessageID, Delta: d.Delta}), false
	case api.EventMessage:
		var m api.MessageEvent
		if json.Unmarshal(ev.Data, &m) != nil || m.Role != api.RoleAssistant {
			// The user's own message is the one the client sent.
			return nil, false
		}
		t.parent = m.MessageID
		// What the message's deltas streamed begins its reasoning and
		// text; the rest, never streamed (a turn that arrives whole
		// streams nothing), comes with the message.
		if t.openReasoning == m.MessageID {
			if rest := unsent(m.Reasoning, t.reasoningSent); rest != "" {
				out = append(out, Event{Type: EventReasoningMessageContent, MessageID: reasoningID(m.MessageID), Delta: rest})
			}
		}
		if t.openText == m.MessageID {
			if rest := unsent(m.Content, t.textSent); rest != "" {
				out = append(out, Event{Type: EventTextMessageContent, MessageID: m.MessageID, Delta: rest})
			}
			return t.closeText(out), false
		}
		out = t.closeText(out)
		if m.Reasoning != "" && t.reasoned != m.MessageID {
			// Reasoning that was not streamed comes whole with the message.
			out = append(out, reasoningStart(m.MessageID)...)
			out = append(out, Event{Type: EventReasoningMessageContent, MessageID: reasoningID(m.MessageID), Delta: m.Reasoning})
			t.openReasoning = m.MessageID
			out = t.closeText(out)
		}
		if m.Content != "" {
			out = append(out,
				Event{Type: EventTextMessageStart, MessageID: m.MessageID, Role: "assistant"},
				Event{Type: EventTextMessageContent, MessageID: m.MessageID, Delta: m.Content},
				Event{Type: EventTextMessageEnd, MessageID: m.MessageID})
		}
		return out, false
	case api.EventToolCall:
		var c api.ToolCallEvent
		if json.Unmarshal(ev.Data, &c) != nil {
			return nil, false
		}
		out = t.closeText(nil)
		out = append(out, Event{Type: EventToolCallStart, ToolCallID: c.ToolCallID, ToolCallName: c.Name, ParentMessageID: t.parent})
		if c.Arguments != "" {
			out = append(out, Event{Type: EventToolCallArgs, ToolCallID: c.ToolCallID, Delta: c.Arguments})
		}
		return append(out, Event{Type: EventToolCallEnd, ToolCallID: c.ToolCallID}), false
	case api.EventToolResult:
		var r api.ToolResultEvent
		if json.Unmarshal(ev.Data, &r) != nil {
			return nil, false
		}
		out = t.closeText(nil)
		if r.ToolCallID == t.answered {
			return out, false
		}
		content := r.Content
		e := Event{Type: EventToolCallResult, MessageID: "result_" + r.ToolCallID, ToolCallID: r.ToolCallID, Content: &content, Role: "tool"}
		if r.IsError || len(r.Metadata) > 0 {
			lm := map[string]any{"isError": r.IsError}
			if len(r.Metadata) > 0 {
				lm["metadata"] = r.Metadata
			}
			e.Metadata = map[string]any{"luban": lm}
		}
		return append(out, e), false
	case api.EventUserInputResolved:
		var rc map[string]any
		if json.Unmarshal(ev.Data, &rc) != nil {
			return nil, false
		}
		return append(t.closeText(nil), Event{Type: EventCustom, Name: "luban.user_input_resolved", Value: rc}), false
	case api.EventUserInputRequired:
		if !t.ours(ev) {
			return nil, false
		}
		in, err := interruptOf(ev.Data)
		if err != nil {
			return append(t.closeText(nil), Event{Type: EventRunError, Code: api.CodeInternal, Message: "stored request cannot be read"}), true
		}
		// A pause may put several questions (docs/design.md §32): the
		// run finishes once every one of them is read, with all of them.
		if t.waiting == nil && t.waitingOn != nil {
			if ids := t.waitingOn(ev.RunID()); len(ids) > 1 {
				t.waiting = map[string]bool{}
				for _, id := range ids {
					t.waiting[id] = true
				}
			}
		}
		t.pausing = append(t.pausing, in)
		delete(t.waiting, in.ID)
		if len(t.waiting) > 0 {
			return t.closeText(nil), false
		}
		its := t.pausing
		t.pausing, t.waiting = nil, nil
		if len(its) == 1 && in.Reason == ReasonFrontendTool {
			// The call itself was the tool_call event before.
			return append(t.closeText(nil), t.frontendPending(in)), true
		}
		return append(t.closeText(nil), t.interrupts(its)), true
	case api.EventError:
		var e api.ErrorEvent
		if json.Unmarshal(ev.Data, &e) != nil || e.RunID == "" || !t.ours(ev) {
			return nil, false
		}
		return append(t.closeText(nil), Event{Type: EventRunError, Code: api.ErrorCode(e.Code), Message: e.Message}), true
	case api.EventDone:
		var d api.DoneEvent
		if json.Unmarshal(ev.Data, &d) != nil || !t.ours(ev) {
			return nil, false
		}
		return append(t.closeText(nil), t.outcome(d.Status, "")), true
	}
	return nil, false
}

// ours reports whether ev belongs to the followed run.
func (t *translator) ours(ev agent.Event) bool {
	var v struct {
		RunID string `json:"runId"`
	}
	_ = json.Unmarshal(ev.Data, &v)
	return t.lubanRun == "" || v.RunID == t.lubanRun
}

// unsent is what of whole a stream that sent sent did not send: "" when sent
// is not its beginning (a retried call that streamed other text).
func unsent(whole, sent string) string {
	if len(sent) > len(whole) || whole[:len(sent)] != sent {
		return ""
	}
	return whole[len(sent):]
}

// closeText closes the open reasoning and the open text message, so that
// what follows (more text, a tool call, the end of the run) stands alone.
func (t *translator) closeText(out []Event) []Event {
	return t.closeTextOnly(t.closeReasoning(out))
}

func (t *translator) closeReasoning(out []Event) []Event {
	if t.openReasoning != "" {
		id := reasoningID(t.openReasoning)
		out = append(out, Event{Type: EventReasoningMessageEnd, MessageID: id}, Event{Type: EventReasoningEnd, MessageID: id})
		t.openReasoning = ""
	}
	return out
}

func (t *translator) closeTextOnly(out []Event) []Event {
	if t.openText != "" {
		out = append(out, Event{Type: EventTextMessageEnd, MessageID: t.openText})
		t.openText = ""
	}
	return out
}

// frontendPending is the RUN_FINISHED that leaves front-end tool call in to
// the application (docs/design.md §21 "Front-end tools"): success, naming
// the call in pendingToolCallIds (not for a client before 1.0, whose
// success outcome takes nothing else), with the interrupt in
// metadata.luban.frontendTool for a resume or a cancel by id.
func (t *translator) frontendPending(in Interrupt) Event {
	oc := &Outcome{Type: OutcomeSuccess}
	if !t.legacy {
		oc.PendingToolCallIDs = []string{in.ToolCallID}
	}
	return Event{Type: EventRunFinished, ThreadID: t.threadID, RunID: t.runID, Outcome: oc,
		Metadata: map[string]any{"luban": map[string]any{"frontendTool": in}}}
}

// interrupts is RUN_FINISHED with the interrupt outcome: every question the
// run's pause put, in call order (docs/design.md §32), a front-end tool
// call among them as an interrupt of reason frontend_tool.
func (t *translator) interrupts(its []Interrupt) Event {
	return Event{Type: EventRunFinished, ThreadID: t.threadID, RunID: t.runID, Outcome: &Outcome{Type: OutcomeInterrupt, Interrupts: its}}
}

// outcome is the event that reports a run that ended with status: RUN_FINISHED
// success or cancelled (for a client before 1.0, RUN_FINISHED without an
// outcome and metadata.luban.outcome "cancelled"), or RUN_ERROR for expired (interaction_expired) and
// failed (internal_error, with why when known).
func (t *translator) outcome(status api.RunStatus, why string) Event {
	switch status {
	case api.RunCompleted:
		return Event{Type: EventRunFinished, ThreadID: t.threadID, RunID: t.runID, Outcome: &Outcome{Type: OutcomeSuccess}}
	case api.RunCancelled:
		if t.legacy {
			// Before 1.0 a run ends in success or interrupt only: a
			// cancelled outcome fails the client's schema and leaves its
			// interrupt pending (docs/design.md §21 "Clients before 1.0").
			// The run ends cleanly; metadata says how.
			return Event{Type: EventRunFinished, ThreadID: t.threadID, RunID: t.runID,
				Metadata: map[string]any{"luban": map[string]any{"outcome": OutcomeCancelled}}}
		}
		return Event{Type: EventRunFinished, ThreadID: t.threadID, RunID: t.runID, Outcome: &Outcome{Type: OutcomeCancelled}}
	case api.RunExpired:
		return Event{Type: EventRunError, Code: api.CodeInteractionExpired, Message: "the run ended because its question expired before it was answered"}
	}
	msg := "the run failed"
	if why != "" {
		msg += ": " + why
	}
	return Event{Type: EventRunError, Code: api.CodeInternal, Message: msg}
}

// reasoningID is the AG-UI id of the reasoning of luban message id: its own
// message in AG-UI, so it cannot share the text message's id.
func reasoningID(id string) string { return "reasoning_" + id }

func reasoningStart(msgID string) []Event {
	id := reasoningID(msgID)
	return []Event{{Type: EventReasoningStart, MessageID: id}, {Type: EventReasoningMessageStart, MessageID: id, Role: "reasoning"}}
}
