package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// rawString decodes like encoding/json, except that raw bytes of a cut
// character are kept; non-strings are refused.
func TestRawString(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{`""`, `"abc"`, `"a\"b\\c\/d\n\t\r\b\f"`, `"\u4e2d\u6587"`, `"\ud83d\ude00 x"`, `"<>&"`, `"中文😀"`} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(lit), &want))
		got, ok := rawString(lit)
		require.True(t, ok, lit)
		require.Equal(t, want, got, lit)
	}
	got, ok := rawString("\"\xe4\xb8\"")
	require.True(t, ok)
	require.Equal(t, "\xe4\xb8", got, "the first bytes of a cut character stay raw")
	got, ok = rawString(`"\ud83d x"`)
	require.True(t, ok)
	require.Equal(t, "\uFFFD x", got, "a lone surrogate is U+FFFD")
	for _, bad := range []string{`null`, `1`, `"`, `"\"`, `"\x"`, `"\u12"`, `{}`} {
		_, ok := rawString(bad)
		require.False(t, ok, bad)
	}
}
