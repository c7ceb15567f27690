package openai

import (
	"crypto/rand"
	"encoding/hex"

	oai "github.com/openai/openai-go/v3"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/internal/utf8stream"
)

// accumulator builds one assistant turn from stream chunks. Text and
// arguments are kept as bytes: the SDK hands over a JSON string's bytes as
// they came, so a character a server cut between two chunks is whole again
// once both pieces are appended.
type accumulator struct {
	text      utf8stream.Text // passed on in whole characters
	reasoning reasoningAcc
	// onReasoning receives the reasoning as it streams (may be nil).
	onReasoning func(string)
	calls       []*callAcc
	byIdx       map[int64]*callAcc
	finish      string
	usage       model.Usage
	model       string
}

type callAcc struct {
	id, name string
	args     []byte
}

// add folds one chunk in. Only choice 0 counts (luban never asks for n > 1).
func (a *accumulator) add(c *oai.ChatCompletionChunk, onDelta func(string)) {
	if c.Model != "" {
		a.model = c.Model
	}
	// The usage chunk (stream_options.include_usage) has no choices; the
	// other chunks carry usage null.
	if c.JSON.Usage.Valid() {
		a.usage = model.Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.FinishReason != "" {
			a.finish = ch.FinishReason
		}
		d := ch.Delta
		// Reasoning arrives in fields the SDK does not know
		// (reasoning_content, reasoning): it is kept apart from the text.
		if len(d.JSON.ExtraFields) > 0 {
			a.reasoning.add(d.JSON.ExtraFields, a.onReasoning)
		}
		if d.Content != "" {
			a.text.Append(d.Content, onDelta)
		}
		for _, tc := range d.ToolCalls {
			a.addCall(tc)
		}
	}
}

// addCall accumulates a tool-call delta by index. id and name usually come
// only in a call's first chunk; servers that repeat them are tolerated; a
// different id at an index already in use (a habit of some compatible
// servers that send every call at index 0) starts a new call.
func (a *accumulator) addCall(tc oai.ChatCompletionChunkChoiceDeltaToolCall) {
	if a.byIdx == nil {
		a.byIdx = map[int64]*callAcc{}
	}
	c := a.byIdx[tc.Index]
	if c == nil || (tc.ID != "" && c.id != "" && tc.ID != c.id) {
		c = &callAcc{}
		a.byIdx[tc.Index] = c
		a.calls = append(a.calls, c)
	}
	if c.id == "" {
		c.id = tc.ID
	}
	if c.name == "" {
		c.name = tc.Function.Name
	}
	c.args = append(c.args, tc.Function.Arguments...)
}

// flush sends whatever reasoning and text is still held back.
func (a *accumulator) flush(onDelta func(string)) {
	a.reasoning.text.Flush(a.onReasoning)
	a.text.Flush(onDelta)
}

// response is the finished turn. A call without an id gets a random
// "call_<hex>" so that its tool message can still name it.
func (a *accumulator) response() *model.Response {
	msg := model.Message{Role: model.RoleAssistant, Content: a.text.String(), Reasoning: a.reasoning.reasoning()}
	for _, c := range a.calls {
		id := c.id
		if id == "" {
			id = randomCallID()
		}
		msg.ToolCalls = append(msg.ToolCalls, model.ToolCall{ID: id, Name: c.name, Arguments: string(c.args)})
	}
	return &model.Response{Message: msg, FinishReason: a.finish, Usage: a.usage, Model: a.model}
}

func randomCallID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "call_" + hex.EncodeToString(b[:])
}
