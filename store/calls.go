package store

import (
	"encoding/json"

	"github.com/lubanhq/luban/internal/jsonstr"
)

// decodeCallsFast decodes raw when it has the exact form json.Marshal
// gives a []ToolCall: no space, the keys id, name and arguments in that
// order, strings jsonstr.Read reads (every escape, no lone surrogate, valid UTF-8
// from U+0020 on). Those decode as encoding/json decodes them; ok is
// false for anything else, which the caller decodes with encoding/json.
// Strings without escapes share one copy of raw.
func decodeCallsFast(raw []byte) (calls []ToolCall, ok bool) {
	if len(raw) < 2 || raw[0] != '[' {
		return nil, false
	}
	if len(raw) == 2 && raw[1] == ']' {
		return []ToolCall{}, true
	}
	n := 0
	for _, c := range raw {
		if c == '{' {
			n++
		}
	}
	calls = make([]ToolCall, 0, n)
	src := string(raw)
	i := 1
	for {
		var c ToolCall
		for k, key := range [3]string{`{"id":`, `,"name":`, `,"arguments":`} {
			if len(src)-i < len(key) || src[i:i+len(key)] != key {
				return nil, false
			}
			i += len(key)
			s, next, ok := jsonstr.Read(src, i)
			if !ok {
				return nil, false
			}
			switch k {
			case 0:
				c.ID = s
			case 1:
				c.Name = s
			default:
				c.Arguments = s
			}
			i = next
		}
		if i >= len(src) || src[i] != '}' {
			return nil, false
		}
		i++
		calls = append(calls, c)
		if i >= len(src) {
			return nil, false
		}
		switch src[i] {
		case ',':
			i++
		case ']':
			if i+1 != len(src) {
				return nil, false
			}
			return calls, true
		default:
			return nil, false
		}
	}
}

// decodeCallsJSON is DecodeCalls through encoding/json.
func decodeCallsJSON(raw json.RawMessage) []ToolCall {
	var calls []ToolCall
	if json.Unmarshal(raw, &calls) != nil {
		return nil
	}
	return calls
}
