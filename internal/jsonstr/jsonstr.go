// Package jsonstr reads one JSON string literal in place, for the one-pass
// decoders of hot paths (store.DecodeCalls, askuser's arguments): a string
// without escapes is a slice of the text, not a copy.
package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// Read reads the JSON string literal whose opening quote is src[i] and
// returns its value and the index after its closing quote. It decodes
// every escape of RFC 8259 §7, a \u surrogate pair included. ok is false
// for what encoding/json would not read the same way or at all: no quote
// at i, an unterminated string, a control byte, an unknown escape, a lone
// surrogate or invalid UTF-8 (both of which encoding/json replaces with
// U+FFFD); the caller then decodes with encoding/json.
func Read(src string, i int) (s string, next int, ok bool) {
	if i >= len(src) || src[i] != '"' {
		return "", 0, false
	}
	i++
	start := i
	ascii := true
	for i < len(src) {
		switch c := src[i]; {
		case c == '"':
			if !ascii && !utf8.ValidString(src[start:i]) {
				return "", 0, false
			}
			return src[start:i], i + 1, true
		case c == '\\':
			return escaped(src, start, i)
		case c < 0x20:
			return "", 0, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		i++
	}
	return "", 0, false
}

// escaped reads the rest of a string that began at start from its first
// backslash at i.
func escaped(src string, start, i int) (string, int, bool) {
	b := make([]byte, 0, i-start+16)
	b = append(b, src[start:i]...)
	for i < len(src) {
		c := src[i]
		switch {
		case c == '"':
			if !utf8.Valid(b) {
				return "", 0, false
			}
			return string(b), i + 1, true
		case c < 0x20:
			return "", 0, false
		case c != '\\':
			b = append(b, c)
			i++
			continue
		}
		if i+1 >= len(src) {
			return "", 0, false
		}
		e := src[i+1]
		i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(src, i)
			if !ok {
				return "", 0, false
			}
			i += 4
			if utf16.IsSurrogate(r) {
				if len(src)-i < 2 || src[i:i+2] != `\u` {
					return "", 0, false
				}
				r2, ok := hex4(src, i+2)
				if !ok {
					return "", 0, false
				}
				i += 6
				if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
					return "", 0, false
				}
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", 0, false
		}
	}
	return "", 0, false
}

// hex4 is the value of the four hex digits of a \u escape at src[i:].
func hex4(src string, i int) (rune, bool) {
	if len(src)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range []byte(src[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
