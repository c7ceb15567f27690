package store

import (
	"bytes"
	"encoding/json"
)

// The holes an event referencing a message (EventAppendParams.MessageRef)
// keeps in the place of what the message holds.
var (
	contentHole   = []byte(`"content":""`)
	argumentsHole = []byte(`"arguments":""`)
)

// SpliceMessage returns tmpl, an event stored with EventAppendParams.
// MessageRef, with the message's part in its hole: content (encoded as
// encoding/json encodes a string, HTML characters escaped) as the value of
// its first "content" key when it has one whose value is ""; otherwise,
// for an "arguments":"" hole, the arguments of the call in toolCalls (the
// message's tool_calls: a JSON array of {id, name, arguments}) whose id is
// tmpl's "toolCallId", as the bytes toolCalls holds them. A JSON string
// cannot hold such a hole's bytes unescaped, so the first match is a key.
// tmpl without a hole it can fill is returned as it is.
func SpliceMessage(tmpl []byte, content string, toolCalls []byte) json.RawMessage {
	if i := bytes.Index(tmpl, contentHole); i >= 0 {
		enc, err := json.Marshal(content)
		if err != nil {
			return tmpl
		}
		return splice(tmpl, i+len(contentHole)-2, enc)
	}
	i := bytes.Index(tmpl, argumentsHole)
	if i < 0 || len(toolCalls) == 0 {
		return tmpl
	}
	var ev struct {
		ToolCallID string `json:"toolCallId"`
	}
	var calls []struct {
		ID        string          `json:"id"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(tmpl, &ev) != nil || json.Unmarshal(toolCalls, &calls) != nil {
		return tmpl
	}
	for _, c := range calls {
		if c.ID == ev.ToolCallID && len(c.Arguments) > 0 {
			return splice(tmpl, i+len(argumentsHole)-2, c.Arguments)
		}
	}
	return tmpl
}

// splice replaces the two bytes `""` at at in tmpl with value.
func splice(tmpl []byte, at int, value []byte) json.RawMessage {
	out := make([]byte, 0, len(tmpl)+len(value)-2)
	out = append(out, tmpl[:at]...)
	out = append(out, value...)
	return append(out, tmpl[at+2:]...)
}
