package openai

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/openai/openai-go/v3/packages/respjson"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/internal/utf8stream"
)

// reasoningFields are the delta fields OpenAI-compatible servers stream
// reasoning in, in order of preference: reasoning_content (DeepSeek thinking
// mode, Qwen3 thinking on DashScope, older vLLM) and reasoning (vLLM,
// OpenRouter, Ollama).
var reasoningFields = []string{"reasoning_content", "reasoning"}

// reasoningData is model.Reasoning.Data for this provider: the delta fields
// the reasoning came in, each to be sent back with the text, and
// OpenRouter's reasoning_details entries (signed or encrypted reasoning of
// the routed model), each as one JSON object to be sent back as it came.
type reasoningData struct {
	Fields  []string          `json:"fields"`
	Details []json.RawMessage `json:"details,omitempty"`
}

// detailsField is OpenRouter's structured reasoning: an array of entries
// ({"type":"reasoning.text","text","signature","format","index"},
// "reasoning.summary" with "summary", "reasoning.encrypted" with "data")
// streamed in pieces that share an index.
const detailsField = "reasoning_details"

// appendedDetailFields are the reasoning_details fields whose streamed
// pieces are appended; every other field of an entry keeps its last value.
var appendedDetailFields = map[string]bool{"text": true, "summary": true, "data": true}

// detailAcc is one reasoning_details entry being streamed.
type detailAcc struct {
	index string // the raw JSON of "index"; "" when absent
	typ   string
	keys  []string // field order as first seen
	strs  map[string][]byte
	raw   map[string]json.RawMessage
}

// addDetails folds one delta's reasoning_details array in: a piece joins
// the entry with the same index (without an index: the last entry, when it
// has none either and the same type), else it starts a new entry.
func (r *reasoningAcc) addDetails(lit string) {
	var items []map[string]json.RawMessage
	if json.Unmarshal([]byte(lit), &items) != nil {
		return
	}
	for _, it := range items {
		idx := string(it["index"])
		if idx == "null" {
			idx = ""
		}
		var typ string
		_ = json.Unmarshal(it["type"], &typ)
		var d *detailAcc
		for _, x := range r.details {
			if idx != "" && x.index == idx {
				d = x
			}
		}
		if n := len(r.details); d == nil && idx == "" && n > 0 && r.details[n-1].index == "" && (typ == "" || r.details[n-1].typ == typ) {
			d = r.details[n-1]
		}
		if d == nil {
			d = &detailAcc{index: idx, typ: typ, strs: map[string][]byte{}, raw: map[string]json.RawMessage{}}
			r.details = append(r.details, d)
		}
		for k, v := range it {
			if string(v) == "null" {
				continue
			}
			if _, seen := d.strs[k]; !seen {
				if _, seen := d.raw[k]; !seen {
					d.keys = append(d.keys, k)
				}
			}
			if str, ok := rawString(string(v)); ok && appendedDetailFields[k] {
				d.strs[k] = append(d.strs[k], str...)
				continue
			}
			d.raw[k] = v
		}
	}
}

// encode is the finished entry as one JSON object, fields in the order they
// first came.
func (d *detailAcc) encode() json.RawMessage {
	var b []byte
	b = append(b, '{')
	for i, k := range d.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(b, kb...)
		b = append(b, ':')
		if s, ok := d.strs[k]; ok {
			sb, _ := json.Marshal(string(s))
			b = append(b, sb...)
		} else {
			b = append(b, d.raw[k]...)
		}
	}
	return append(b, '}')
}

// reasoningAcc accumulates a turn's reasoning. A field counts as present
// once a chunk carried it as a JSON string, even an empty one (DeepSeek
// requires an empty reasoning_content back on a tool-call turn too); null
// does not count.
type reasoningAcc struct {
	text    utf8stream.Text
	fields  []string
	main    string // the field whose text is kept
	details []*detailAcc
}

// add reads the reasoning fields of one delta.
func (r *reasoningAcc) add(extra map[string]respjson.Field, onReasoning func(string)) {
	if v, ok := extra[detailsField]; ok {
		r.addDetails(v.Raw())
	}
	for _, f := range reasoningFields {
		v, ok := extra[f]
		if !ok {
			continue
		}
		s, ok := rawString(v.Raw())
		if !ok {
			continue
		}
		if !r.has(f) {
			r.fields = append(r.fields, f)
		}
		// Servers that stream both fields send the same text twice: the
		// first field that carried text is the one kept.
		if s != "" && (r.main == "" || r.main == f) {
			r.main = f
			r.text.Append(s, onReasoning)
		}
	}
}

func (r *reasoningAcc) has(f string) bool {
	for _, x := range r.fields {
		if x == f {
			return true
		}
	}
	return false
}

// reasoning is the finished turn's reasoning; nil when no field came.
// Without a text field, the text is that of the reasoning_details entries.
func (r *reasoningAcc) reasoning() *model.Reasoning {
	if len(r.fields) == 0 && len(r.details) == 0 {
		return nil
	}
	d := reasoningData{Fields: r.fields}
	if d.Fields == nil {
		d.Fields = []string{}
	}
	text := r.text.String()
	for _, x := range r.details {
		d.Details = append(d.Details, x.encode())
		if len(r.fields) == 0 {
			for _, k := range []string{"text", "summary"} {
				if s := x.strs[k]; len(s) > 0 {
					if text != "" {
						text += "\n\n"
					}
					text += string(s)
				}
			}
		}
	}
	data, _ := json.Marshal(d)
	return &model.Reasoning{Provider: model.ReasoningOpenAI, Text: text, Data: data}
}

// reasoningBack is the extra fields of an assistant message that carry its
// reasoning back: each field it came in, with its text. Only reasoning of
// this provider's kind, on an assistant turn that made tool calls, goes
// back: DeepSeek's thinking mode answers 400 when a tool-call turn comes
// back without its reasoning_content, and ignores (its older reasoner
// rejected) reasoning on turns without tool calls; OpenRouter needs the
// reasoning_details of a tool-call turn back for signed reasoning (Claude,
// Gemini behind it).
func reasoningBack(m model.Message) map[string]any {
	r := m.Reasoning
	if r == nil || r.Provider != model.ReasoningOpenAI || len(m.ToolCalls) == 0 {
		return nil
	}
	var d reasoningData
	if json.Unmarshal(r.Data, &d) != nil || (len(d.Fields) == 0 && len(d.Details) == 0) {
		d.Fields = reasoningFields[:1]
	}
	out := map[string]any{}
	for _, f := range d.Fields {
		out[f] = r.Text
	}
	if len(d.Details) > 0 {
		out[detailsField] = d.Details
	}
	return out
}

// rawString decodes a JSON string literal, keeping bytes that are not valid
// UTF-8 as they are (encoding/json would turn them into U+FFFD): a server
// that cut a character between two chunks sends its bytes raw in two
// strings, and the pieces are whole again once appended. ok is false for
// anything but a string (null included).
func rawString(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	in := lit[1 : len(lit)-1]
	out := make([]byte, 0, len(in))
	for i := 0; i < len(in); i++ {
		c := in[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(in) {
			return "", false
		}
		switch in[i] {
		case '"', '\\', '/':
			out = append(out, in[i])
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, n := hexRune(in[i+1:])
			if n == 0 {
				return "", false
			}
			i += n
			if utf16Surrogate(r) {
				// A high surrogate followed by "\uDC00".."\uDFFF" is one
				// character; a lone surrogate is U+FFFD, as in encoding/json.
				if i+2 < len(in) && in[i+1] == '\\' && in[i+2] == 'u' {
					if r2, n2 := hexRune(in[i+3:]); n2 > 0 && r >= 0xD800 && r < 0xDC00 && r2 >= 0xDC00 && r2 < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
						i += 2 + n2
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

// hexRune reads the four hex digits of a \u escape; n is 4, or 0 when they
// are not there.
func hexRune(s string) (rune, int) {
	if len(s) < 4 {
		return 0, 0
	}
	v, err := strconv.ParseUint(s[:4], 16, 32)
	if err != nil {
		return 0, 0
	}
	return rune(v), 4
}

func utf16Surrogate(r rune) bool { return r >= 0xD800 && r < 0xE000 }
