package jsonstr

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// Read gives what encoding/json gives for every string it accepts, and
// the index after the closing quote; it refuses what encoding/json would
// replace (a lone surrogate, invalid UTF-8) or not read.
func TestReadAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{`""`, `"plain"`, `"a\"b\\c\/d"`, `"\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00 ok"`, `"中文 é"`, `"x\u0000y"`} {
		s, next, ok := Read(lit+",", 0)
		require.True(t, ok, lit)
		require.Equal(t, len(lit), next, lit)
		var want string
		require.NoError(t, json.Unmarshal([]byte(lit), &want), lit)
		require.Equal(t, want, s, lit)
	}
	for _, lit := range []string{`x`, `"open`, `"\x"`, `"\ud83d"`, `"\ud83dx"`, `"\u12"`, "\"\x01\"", "\"\xff\"", `"\`} {
		_, _, ok := Read(lit, 0)
		require.False(t, ok, lit)
	}
}

func FuzzRead(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9"`, `"\ud83d\ude00"`, `"\n"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, next, ok := Read(src, 0)
		if !ok {
			return
		}
		var want string
		require.NoError(t, json.Unmarshal([]byte(src[:next]), &want), src)
		require.Equal(t, want, s, src)
		require.True(t, utf8.ValidString(s))
	})
}
