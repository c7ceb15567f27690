package store

import (
	"encoding/json"
	"unicode/utf8"
)

// decodeCallsFast decodes raw when it has the exact form json.Marshal
// gives a []ToolCall: no space, the keys id, name and arguments in that
// order, strings whose escapes are \" \\ \/ \b \f \n \r \t or a \u escape
// of a code point outside the surrogates, and whose other bytes are valid
// UTF-8 from U+0020 on. Those decode as encoding/json decodes them; ok is
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
			s, next, ok := fastString(src, i)
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

// fastString reads the JSON string starting at src[i] (its opening quote)
// and returns it and the index after its closing quote; ok is false for
// what decodeCallsFast leaves to encoding/json.
func fastString(src string, i int) (s string, next int, ok bool) {
	if i >= len(src) || src[i] != '"' {
		return "", 0, false
	}
	i++
	start := i
	var buf []byte // nil until the first escape
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			if buf == nil {
				if !utf8.ValidString(src[start:i]) {
					return "", 0, false
				}
				return src[start:i], i + 1, true
			}
			buf = append(buf, src[start:i]...)
			if !utf8.Valid(buf) {
				return "", 0, false
			}
			return string(buf), i + 1, true
		case c < 0x20:
			return "", 0, false
		case c == '\\':
			if i+1 >= len(src) {
				return "", 0, false
			}
			if buf == nil {
				buf = make([]byte, 0, len(src)-start)
			}
			buf = append(buf, src[start:i]...)
			e := src[i+1]
			i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				if i+4 > len(src) {
					return "", 0, false
				}
				var r rune
				for _, h := range []byte(src[i : i+4]) {
					switch {
					case '0' <= h && h <= '9':
						h -= '0'
					case 'a' <= h && h <= 'f':
						h -= 'a' - 10
					case 'A' <= h && h <= 'F':
						h -= 'A' - 10
					default:
						return "", 0, false
					}
					r = r<<4 | rune(h)
				}
				if 0xD800 <= r && r <= 0xDFFF {
					return "", 0, false
				}
				buf = utf8.AppendRune(buf, r)
				i += 4
			default:
				return "", 0, false
			}
			start = i
		default:
			i++
		}
	}
	return "", 0, false
}

// decodeCallsJSON is DecodeCalls through encoding/json.
func decodeCallsJSON(raw json.RawMessage) []ToolCall {
	var calls []ToolCall
	if json.Unmarshal(raw, &calls) != nil {
		return nil
	}
	return calls
}
