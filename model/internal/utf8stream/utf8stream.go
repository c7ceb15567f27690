// Package utf8stream passes streamed text on in whole UTF-8 characters.
// Model servers cut a stream's text by bytes; the SDKs (openai-go,
// anthropic-sdk-go) hand a JSON string's bytes over as they came, so a
// Chinese character may arrive in two chunks. Text holds the first piece
// back until the character is whole (docs/design.md §6: text_delta carries whole
// characters).
package utf8stream

import "unicode/utf8"

// Text accumulates a turn's streamed text. The zero value is ready to use.
type Text struct {
	b    []byte
	sent int // bytes of b already passed on
}

// Append adds s and passes every complete character not yet passed on to
// onDelta (nil allowed), holding back a trailing incomplete one.
func (t *Text) Append(s string, onDelta func(string)) {
	t.b = append(t.b, s...)
	t.emit(onDelta, CompletePrefix(t.b, t.sent))
}

// Flush passes on whatever is still held back, an incomplete character
// included (the stream has ended; it will never be completed).
func (t *Text) Flush(onDelta func(string)) { t.emit(onDelta, len(t.b)) }

// String is all the text appended so far.
func (t *Text) String() string { return string(t.b) }

func (t *Text) emit(onDelta func(string), end int) {
	if end > t.sent {
		if onDelta != nil {
			onDelta(string(t.b[t.sent:end]))
		}
		t.sent = end
	}
}

// CompletePrefix returns the end of b's longest prefix (not before from)
// that does not stop inside a UTF-8 character. Invalid bytes count as
// complete, so a stray continuation byte is never held forever.
func CompletePrefix(b []byte, from int) int {
	end := len(b)
	for i := end - 1; i >= from && i >= end-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:end]) {
				return i
			}
			return end
		}
	}
	return end
}
