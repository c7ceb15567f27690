package store

import (
	"encoding/json"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// sameAsJSON checks decodeCallsFast against encoding/json on raw: when the
// fast path decodes, the calls are encoding/json's, nil and empty alike.
func sameAsJSON(t testing.TB, raw []byte) (fast bool) {
	got, ok := decodeCallsFast(raw)
	if !ok {
		return false
	}
	var want []ToolCall
	require.NoError(t, json.Unmarshal(raw, &want), "%q", raw)
	require.Equal(t, want, got, "%q", raw)
	require.Equal(t, want == nil, got == nil, "%q", raw)
	return true
}

// callStrings are strings whose encoding takes every path of fastString:
// escapes of quotes, backslashes, control bytes, HTML characters, U+2028,
// multi-byte UTF-8, invalid UTF-8 and lone surrogates (encoded as U+FFFD).
var callStrings = []string{"", "call_abc", "ask_user", `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析"}]}`,
	"a\"b\\c/d", "\b\f\n\r\t\x00\x1f", "<a>&</a>", "\u2028\u2029", "😀 emoji", "\xff\xfe bad", "\xed\xa0\x80", "tail\\"}

// DecodeCalls decodes what json.Marshal makes of calls as encoding/json
// does, by the fast path (the agent's calls), and every truncation and
// byte change of it either the same way or through encoding/json.
func TestDecodeCallsIsEncodingJSON(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	fast := 0
	var inputs [][]byte
	for n := range 4 {
		for range 60 {
			calls := make([]ToolCall, n)
			for i := range calls {
				calls[i] = ToolCall{ID: callStrings[rng.IntN(len(callStrings))], Name: callStrings[rng.IntN(len(callStrings))],
					Arguments: callStrings[rng.IntN(len(callStrings))] + callStrings[rng.IntN(len(callStrings))]}
			}
			raw, err := json.Marshal(calls)
			require.NoError(t, err)
			inputs = append(inputs, raw)
			if sameAsJSON(t, raw) {
				fast++
			}
			var want []ToolCall
			require.NoError(t, json.Unmarshal(raw, &want))
			require.Equal(t, want, DecodeCalls(raw))
		}
	}
	require.Greater(t, fast, 120, "most encoded calls take the fast path")
	odd := []byte{'"', '\\', '{', '}', '[', ']', ',', ':', ' ', 'u', '0', 'd', '8', 0, 0x1f, 0x80, 0xff, 'n'}
	for _, raw := range inputs[:80] {
		for i := 0; i <= len(raw); i++ {
			sameAsJSON(t, raw[:i])
		}
		for i := range raw {
			for _, b := range odd {
				m := append([]byte{}, raw...)
				m[i] = b
				sameAsJSON(t, m)
				ins := append(append(append([]byte{}, raw[:i]...), b), raw[i:]...)
				sameAsJSON(t, ins)
			}
			sameAsJSON(t, append(append([]byte{}, raw[:i]...), raw[i+1:]...))
		}
	}
	for _, raw := range []string{`[]`, `null`, `[{"id":"a","name":"b","arguments":"c"}] `, `[{"ID":"a","name":"b","arguments":"c"}]`,
		`[{"id":"a","name":"b","arguments":"\u00e9\u0041"}]`, `[{"id":"a","name":"b","arguments":"\ud83d\ude00"}]`} {
		sameAsJSON(t, []byte(raw))
		var want []ToolCall
		if json.Unmarshal([]byte(raw), &want) != nil {
			want = nil
		}
		require.Equal(t, want, DecodeCalls([]byte(raw)), raw)
	}
}

func FuzzDecodeCalls(f *testing.F) {
	for _, s := range []string{`[]`, `[{"id":"a","name":"b","arguments":"{\"x\":\"\\u003c\"}"}]`, `[{"id":"a","name":"b","arguments":"c"},{"id":"d","name":"e","arguments":"f"}]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { sameAsJSON(t, raw) })
}

// BenchmarkDecodeCalls decodes the benchmark's one ask_user call.
func BenchmarkDecodeCalls(b *testing.B) {
	raw, err := json.Marshal([]ToolCall{{ID: "call_0123456789abcdefghijklmnop", Name: "ask_user",
		Arguments: `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`}})
	require.NoError(b, err)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			DecodeCalls(raw)
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			decodeCallsJSON(raw)
		}
	})
}
