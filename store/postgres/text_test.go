package postgres

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// FuzzTextCodec checks, for any string, that what the driver sends to
// PostgreSQL is valid UTF-8 without NUL, that it comes back byte for byte,
// and that a string PostgreSQL accepts and that holds no U+FDD0 is sent
// unchanged (so existing rows and equality keep their meaning).
func FuzzTextCodec(f *testing.F) {
	for _, s := range []string{"", "plain", "a\x00b", "\xff", "\ufdd0", "\ufdd00", "\ufdd0x4", "\ufdd0xzz", "中\x00\ufdd0E\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := encodeText(s)
		require.True(t, utf8.ValidString(enc), "%q", enc)
		require.NotContains(t, enc, "\x00")
		require.Equal(t, s, decodeText(enc))
		if utf8.ValidString(s) && !strings.ContainsRune(s, 0) && !strings.ContainsRune(s, textEscape) {
			require.Equal(t, s, enc)
			require.Equal(t, s, decodeText(s), "text without the escape reads back as written")
		}
	})
}

func TestEncodeArgs(t *testing.T) {
	t.Parallel()
	type status string
	args := []any{"a\x00", status("b\x00"), []string{"ok", "\x00"}, 7, nil, "clean"}
	out := encodeArgs(args)
	require.Equal(t, []any{"a\ufdd00", "b\ufdd00", []string{"ok", "\ufdd00"}, 7, nil, "clean"}, out)
	require.Equal(t, "a\x00", args[0], "the caller's arguments are left alone")
	clean := []any{"x", 1}
	require.Equal(t, clean, encodeArgs(clean))
}

// TestTextArray sends strings that an array literal must quote or escape
// as a text[] parameter (textArray through encodeArgs) and reads them back
// as the server parsed them, byte for byte.
func TestTextArray(t *testing.T) {
	t.Parallel()
	s, err := Open(context.Background(), pgtest.Schema(t), nil)
	require.NoError(t, err)
	defer s.Close()
	for _, want := range [][]string{
		{},
		{""},
		{"NULL", "null", "", " a b ", "{x,y}", `"quoted"`, `back\slash`, `\"`, `\`, `"`, "a,b", "中文"},
		{"a\x00b", "\xff\xfe", "\ufdd0", "\ufdd00", "x\ufdd0E\"\\"},
	} {
		var got []string
		err := textQuerier{s.pool}.QueryRow(context.Background(), `SELECT $1::text[]`, textArray(want)).Scan(&got)
		require.NoError(t, err)
		for i := range got {
			got[i] = decodeText(got[i])
		}
		require.Equal(t, want, got)
	}
}
