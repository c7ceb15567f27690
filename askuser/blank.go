package askuser

import (
	"strings"
	"unicode"
)

// isBlank reports whether s would show nothing a person can read: it is
// empty or made only of white space (unicode.IsSpace), control characters
// (Cc, NUL included), format characters (Cf: zero-width space and joiners,
// word joiner, byte order mark, soft hyphen, direction marks), variation
// selectors and the characters that render as an empty cell (Hangul fillers,
// the blank Braille pattern). Such text is treated like an empty string
// wherever a value must not be blank (answers, titles, labels, names).
func isBlank(s string) bool {
	return strings.IndexFunc(s, isVisible) < 0
}

// isVisible reports whether r shows something on its own.
func isVisible(r rune) bool {
	switch {
	case unicode.IsSpace(r), unicode.Is(unicode.Cc, r), unicode.Is(unicode.Cf, r),
		unicode.Is(unicode.Variation_Selector, r):
		return false
	}
	switch r {
	case '\u115f', '\u1160', '\u3164', '\uffa0', // Hangul fillers
		'\u2800': // Braille pattern blank
		return false
	}
	return true
}
