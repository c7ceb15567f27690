package anthropic

import (
	"crypto/rand"
	"encoding/hex"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/internal/utf8stream"
)

// accumulator builds one assistant turn from Messages stream events. Text and
// tool input are kept as bytes: the SDK hands over a JSON string's bytes as
// they came, so a character a server cut between two deltas is whole again
// once both pieces are appended.
type accumulator struct {
	text   utf8stream.Text // passed on in whole characters
	blocks map[int64]*block
	order  []*block // tool_use blocks in stream order
	// thinking are the thinking and redacted_thinking blocks in stream
	// order, each with the number of tool_use blocks before it.
	thinking []*thinkingBlock
	// reasoning streams the thinking text to onReasoning (may be nil) in
	// whole characters, blocks joined by a blank line as in
	// model.Reasoning.Text.
	reasoning   utf8stream.Text
	onReasoning func(string)
	// sepPending: a thinking block after one with text has begun; the blank
	// line goes out before its first text.
	sepPending bool
	stop       string
	stopped    bool // message_stop seen
	usage      model.Usage
	model      string
}

// block is one content block. tool_use and thinking blocks are kept; text
// goes straight into accumulator.text.
type block struct {
	kind       string
	id, name   string
	startInput string // content_block_start's input, used when no delta came
	input      []byte
	// thinking is the block's entry in accumulator.thinking (thinking and
	// redacted_thinking blocks only); thinkingText its text as it streams.
	thinking     *thinkingBlock
	thinkingText []byte
}

// add folds one event in.
func (a *accumulator) add(ev sdk.MessageStreamEventUnion, onDelta func(string)) {
	if a.blocks == nil {
		a.blocks = map[int64]*block{}
	}
	switch ev.Type {
	case "content_block_start":
		cb := ev.ContentBlock
		b := &block{kind: cb.Type, id: cb.ID, name: cb.Name, startInput: cb.JSON.Input.Raw()}
		a.blocks[ev.Index] = b
		if cb.Type == "tool_use" {
			a.order = append(a.order, b)
		}
		if cb.Type == "text" && cb.Text != "" {
			a.text.Append(cb.Text, onDelta)
		}
		if cb.Type == "thinking" || cb.Type == "redacted_thinking" {
			b.thinking = &thinkingBlock{Type: cb.Type, Signature: cb.Signature, Data: cb.Data, ToolUsesBefore: len(a.order)}
			a.thinking = append(a.thinking, b.thinking)
			a.sepPending = a.reasoning.String() != ""
			a.addThinking(b, cb.Thinking)
		}
	case "content_block_delta":
		b := a.blocks[ev.Index]
		switch ev.Delta.Type {
		case "text_delta":
			a.text.Append(ev.Delta.Text, onDelta)
		case "input_json_delta":
			if b != nil {
				b.input = append(b.input, ev.Delta.PartialJSON...)
			}
		case "thinking_delta":
			// Thinking is kept apart from the answer text.
			if b != nil && b.thinking != nil {
				a.addThinking(b, ev.Delta.Thinking)
			}
		case "signature_delta":
			if b != nil && b.thinking != nil {
				b.thinking.Signature += ev.Delta.Signature
			}
		}
	case "message_start":
		// Usage counts input once, here; the cache's tokens are input too.
		u := ev.Message.Usage
		a.model = string(ev.Message.Model)
		a.usage = model.Usage{InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens, OutputTokens: u.OutputTokens}
	case "message_delta":
		// message_delta's usage is cumulative; input counts come again only
		// from some servers.
		u := ev.Usage
		if u.OutputTokens > 0 {
			a.usage.OutputTokens = u.OutputTokens
		}
		if in := u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens; in > 0 {
			a.usage.InputTokens = in
		}
		if ev.Delta.StopReason != "" {
			a.stop = string(ev.Delta.StopReason)
		}
	case "message_stop":
		a.stopped = true
	}
}

// addThinking appends a piece of b's thinking text and streams it.
func (a *accumulator) addThinking(b *block, s string) {
	if s == "" {
		return
	}
	b.thinkingText = append(b.thinkingText, s...)
	if a.sepPending {
		a.sepPending = false
		a.reasoning.Append("\n\n", a.onReasoning)
	}
	a.reasoning.Append(s, a.onReasoning)
}

// flush sends whatever reasoning and text is still held back.
func (a *accumulator) flush(onDelta func(string)) {
	a.reasoning.Flush(a.onReasoning)
	a.text.Flush(onDelta)
}

// response is the finished turn: the text of every text block, the
// thinking blocks as model.Reasoning, and every
// tool_use block in stream order (one without an id gets a random
// "toolu_<hex>"). A tool_use without input deltas keeps the
// input of its content_block_start ("{}" for a call without arguments).
func (a *accumulator) response() *model.Response {
	for _, b := range a.blocks {
		if b.thinking != nil {
			b.thinking.Thinking = string(b.thinkingText)
		}
	}
	msg := model.Message{Role: model.RoleAssistant, Content: a.text.String(), Reasoning: reasoning(a.thinking)}
	for _, b := range a.order {
		args := string(b.input)
		if args == "" {
			args = b.startInput
		}
		if args == "" {
			args = "{}"
		}
		id := b.id
		if id == "" {
			id = randomID()
		}
		msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: id, Name: b.name, Arguments: args})
	}
	return &model.Response{Message: msg, FinishReason: a.stop, Usage: a.usage, Model: a.model}
}

// randomID names a tool_use block that came without an id, so that its
// tool_result can still refer to it.
func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "toolu_" + hex.EncodeToString(b[:])
}
