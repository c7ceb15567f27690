package openai

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/lubanhq/luban/model"
)

// requestBody is the JSON of the Chat Completions request for req, what the
// SDK's ChatCompletionNewParams would encode to, written directly (the SDK's
// reflection over its parameter unions cost more than the rest of the
// provider): model, messages, tools when there are any, and stream_options
// asking for usage in the last chunk (model.Response.Usage). Assistant tool
// calls keep id, name and arguments exactly as received; tool messages carry
// their tool_call_id; an assistant message with tool calls and no text omits
// "content" (OpenAI accepts that; some servers reject an empty string beside
// tool_calls). An assistant tool-call turn carries its reasoning back in the
// fields it came in (reasoningBack). It asks for a stream ("stream": true),
// as the SDK's NewStreaming would add.
func (p *Provider) requestBody(req *model.Request) ([]byte, error) {
	name, err := json.Marshal(p.opts.Model)
	if err != nil {
		return nil, err
	}
	size := len(name) + 128
	for _, m := range req.Messages {
		size += len(m.Content) + 64
		for _, tc := range m.ToolCalls {
			size += len(tc.ID) + len(tc.Name) + len(tc.Arguments) + 96
		}
	}
	defs := make([][]byte, len(req.Tools))
	for i, t := range req.Tools {
		defs[i] = p.defs.get(t)
		size += len(defs[i]) + 1
	}
	buf := bytes.NewBuffer(make([]byte, 0, size))
	buf.WriteString(`{"model":`)
	buf.Write(name)
	buf.WriteString(`,"messages":[`)
	// Each message is encoded into buf directly (an Encoder's buffer is
	// pooled), not marshalled alone and copied.
	enc := json.NewEncoder(buf)
	for i, m := range req.Messages {
		if i > 0 {
			buf.WriteByte(',')
		}
		w := messageWire(m)
		if err := enc.Encode(w.wire); err != nil {
			return nil, err
		}
		buf.Truncate(buf.Len() - 1) // Encode's newline
		if len(w.extra) > 2 {
			buf.Truncate(buf.Len() - 1) // the object's "}": extra's members follow
			buf.WriteByte(',')
			buf.Write(w.extra[1:])
		}
	}
	buf.WriteByte(']')
	if len(defs) > 0 {
		buf.WriteString(`,"tools":[`)
		for i, d := range defs {
			if i > 0 {
				buf.WriteByte(',')
			}
			buf.Write(d)
		}
		buf.WriteByte(']')
	}
	buf.WriteString(`,"stream":true,"stream_options":{"include_usage":true}}`)
	return buf.Bytes(), nil
}

// wireMessage is one message of the request: its fields (wire) and an
// object whose members are added after them (extra, reasoningBack).
type wireMessage struct {
	wire  wireFields
	extra json.RawMessage
}

// wireFields are a message's own fields. Content is a pointer so that an
// assistant tool-call turn without text leaves it out while every other
// message carries it, empty or not; tool_call_id is on tool messages only.
type wireFields struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCallID *string        `json:"tool_call_id,omitempty"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

func messageWire(m model.Message) wireMessage {
	switch m.Role {
	case model.RoleSystem:
		return wireMessage{wire: wireFields{Role: "system", Content: &m.Content}}
	case model.RoleTool:
		return wireMessage{wire: wireFields{Role: "tool", Content: &m.Content, ToolCallID: &m.ToolCallID}}
	case model.RoleAssistant:
		w := wireMessage{wire: wireFields{Role: "assistant"}}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			w.wire.Content = &m.Content
		}
		if len(m.ToolCalls) > 0 {
			w.wire.ToolCalls = make([]wireToolCall, len(m.ToolCalls))
			for i, tc := range m.ToolCalls {
				w.wire.ToolCalls[i] = wireToolCall{ID: tc.ID, Type: "function", Function: wireFunction{Name: tc.Name, Arguments: tc.Arguments}}
			}
		}
		if extra := reasoningBack(m); len(extra) > 0 {
			w.extra, _ = json.Marshal(extra)
		}
		return w
	default:
		return wireMessage{wire: wireFields{Role: "user", Content: &m.Content}}
	}
}

// toolDefs holds the function tool JSON of each tool the provider was asked
// with, so that a tool's schema is checked and written once, not on every
// call. An entry is found by the address of the tool's schema bytes and
// used only while the tool's name, description and schema are still the
// ones it was made from.
type toolDefs struct {
	mu sync.Mutex
	m  map[*byte]toolDef
}

type toolDef struct {
	name, description string
	parameters        []byte // a copy of the schema the JSON was made from
	json              []byte
}

// maxToolDefs bounds the cache: past it, it starts again empty.
const maxToolDefs = 512

func (c *toolDefs) get(t model.ToolSpec) []byte {
	if len(t.Parameters) == 0 {
		return functionTool(t)
	}
	key := &t.Parameters[0]
	c.mu.Lock()
	d, ok := c.m[key]
	c.mu.Unlock()
	if ok && d.name == t.Name && d.description == t.Description && bytes.Equal(d.parameters, t.Parameters) {
		return d.json
	}
	d = toolDef{name: t.Name, description: t.Description, parameters: bytes.Clone(t.Parameters), json: functionTool(t)}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxToolDefs {
		c.m = map[*byte]toolDef{}
	}
	c.m[key] = d
	c.mu.Unlock()
	return d.json
}

// functionTool is t as a function tool of the request: name, description
// (left out when empty) and the tool's JSON Schema as the bytes the tool
// declared, compacted; an empty or non-object schema becomes the empty
// object schema, which every server accepts.
func functionTool(t model.ToolSpec) []byte {
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}
	f := function{t.Name, t.Description, t.Parameters}
	if !isObject(t.Parameters) {
		f.Parameters = emptySchema
	}
	b, err := json.Marshal(struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}{"function", f})
	if err != nil { // not reached: the schema is a valid object
		return nil
	}
	return b
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// isObject reports whether raw is one valid JSON object.
func isObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(raw)
}
