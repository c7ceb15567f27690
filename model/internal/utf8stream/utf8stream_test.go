package utf8stream_test

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/model/internal/utf8stream"
)

// setup returns an empty Text and the deltas it passes on.
func setup(t *testing.T) (*utf8stream.Text, *[]string, func(string)) {
	t.Helper()
	var deltas []string
	return &utf8stream.Text{}, &deltas, func(s string) { deltas = append(deltas, s) }
}

func TestCompletePrefix(t *testing.T) {
	t.Parallel()
	zh := []byte("a中") // 'a' + 3 bytes
	require.Equal(t, 4, utf8stream.CompletePrefix(zh, 0))
	require.Equal(t, 1, utf8stream.CompletePrefix(zh[:3], 0), "holds back a cut character")
	require.Equal(t, 1, utf8stream.CompletePrefix(zh[:2], 0))
	require.Equal(t, 2, utf8stream.CompletePrefix([]byte{'a', 0x80}, 0), "a stray continuation byte is not held forever")
	require.Equal(t, 0, utf8stream.CompletePrefix(nil, 0))
	require.Equal(t, 3, utf8stream.CompletePrefix(zh[:3], 2), "not before from")
}

// Text cut at every byte still reaches onDelta as whole characters, in
// order, and all of it.
func TestTextCutAtEveryByte(t *testing.T) {
	t.Parallel()
	const s = "a中文😀b"
	for cut := 1; cut <= len(s); cut++ {
		txt, deltas, on := setup(t)
		for i := 0; i < len(s); i += cut {
			txt.Append(s[i:min(i+cut, len(s))], on)
		}
		txt.Flush(on)
		joined := ""
		for _, d := range *deltas {
			require.True(t, utf8.ValidString(d), "cut %d: delta %q", cut, d)
			require.NotEmpty(t, d)
			joined += d
		}
		require.Equal(t, s, joined, "cut %d", cut)
		require.Equal(t, s, txt.String())
	}
}

// Flush passes on a character the stream never completed.
func TestTextFlushIncomplete(t *testing.T) {
	t.Parallel()
	txt, deltas, on := setup(t)
	txt.Append("好"[:2], on)
	require.Empty(t, *deltas, "held back")
	txt.Flush(on)
	require.Equal(t, []string{"好"[:2]}, *deltas)
	txt.Flush(on)
	require.Len(t, *deltas, 1, "nothing twice")
}

// A nil onDelta only accumulates.
func TestTextNilOnDelta(t *testing.T) {
	t.Parallel()
	var txt utf8stream.Text
	txt.Append("中"[:1], nil)
	txt.Append("中"[1:], nil)
	txt.Flush(nil)
	require.Equal(t, "中", txt.String())
}
