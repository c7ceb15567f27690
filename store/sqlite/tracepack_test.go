package sqlite

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// packTrace gives back the same bytes through unpackTrace for the agent's
// trace shapes and for data that only looks like them; the agent's shapes
// are stored in fewer bytes, and data with a control byte is kept as text.
func TestTracePackRoundTrip(t *testing.T) {
	t.Parallel()
	sha := "dd847c0da0c9f23ead78fa429b7cba0df3ca6ddf11264c9c8f10d142b076183a"
	call, ask := "call_x6pr7m42sjnz3mccj336722noq", "ask_jhbicney77ib3r5w6wpvj2t24u"
	shrinks := []string{
		`{"finishReason":"tool_calls","latencyMs":0,"messageCount":2,"model":"zero","provider":"bench:zero","retries":0,"tools":["ask_user"]}`,
		`{"argumentsBytes":156,"argumentsSha256":"` + sha + `","name":"ask_user","toolCallId":"` + call + `"}`,
		`{"action":"requested","requestId":"` + ask + `","toolCallId":"` + call + `"}`,
		`{"contentBytes":81,"contentSha256":"` + sha + `","isError":false,"name":"ask_user","toolCallId":"` + call + `"}`,
		`{"contentBytes":81,"contentSha256":"` + sha + `","isError":true,"name":"x","toolCallId":"call_1"}`,
		`{"toolCallId":"` + call + `","name":"ask_user"}`,
		`{"error":"boom","latencyMs":3,"messageCount":2,"model":"m","provider":"p:m","retries":2,"tools":[]}`,
		`{"action":"requested","kind":"form","requestId":"` + ask + `","toolCallId":"` + call + `"}`,
		`{"mode":"single","optionCount":2,"questionCount":0,"tool":"ask_user"}`,
		`{"mode":"single","selections":["safe"],"selectionCount":1,"customInputLen":0}`,
		`{"mode":"text","selectionCount":0,"customInputLen":5,"customInputSha256":"` + sha + `"}`,
	}
	same := []string{
		``, `{}`, `null`, `"x"`, `[1,2]`,
		`{"a":"` + strings.ToUpper(sha) + `"}`, // upper-case hex is not packed
		`{"a":"` + sha + `0"}`,                 // 65 digits
		`{"a":"` + sha[:63] + `"}`,             // 63
		`{"a":"call_x6pr7m42sjnz3mccj336722noq1"}`,
		`{"a":"call_x6pr7m42sjnz3mccj336722no"}`,
		`{"a":"call_X6pr7m42sjnz3mccj336722noq"}`,
		`{"a":"call_x6pr7m42sjnz3mccj336722nob"}`, // a last character NewID never makes
		`{"a":"b\u0001c"}`, "{\"a\":\t\"b\"}\n", `"\\"`, `{"a":"é中"}`,
		`{"finishReason":"`, `,"tools":[`, sha, `"` + sha, `"` + call,
	}
	for _, s := range append(append([]string{}, shrinks...), same...) {
		v := packTrace([]byte(s))
		got, err := unpackTrace(v)
		require.NoError(t, err, "%q", s)
		require.Equal(t, s, string(got), "round trip of %q (stored %q)", s, v)
	}
	for _, s := range shrinks {
		b, ok := packTrace([]byte(s)).([]byte)
		require.True(t, ok, "%q is packed", s)
		require.Less(t, len(b), len(s)*3/4, "%q packs to %d bytes", s, len(b))
	}
	// A digest or an id in a string a dictionary entry opens is packed
	// too: 1 + 1+3 + 1+33 + 1+8 + 1+18 + 1 bytes.
	b, _ := packTrace([]byte(shrinks[1])).([]byte)
	require.Len(t, b, 68, "%q", shrinks[1])
	b, _ = packTrace([]byte(shrinks[2])).([]byte)
	require.Len(t, b, 1+1+9+1+18+1+18+1, "%q", shrinks[2])
	require.Equal(t, "{\"a\":\"\x01\"}", packTrace([]byte("{\"a\":\"\x01\"}")), "a control byte keeps the data as text")
	_, err := unpackTrace([]byte{tracePacked, traceHex, 1})
	require.Error(t, err, "a digest cut short")
	_, err = unpackTrace([]byte{tracePacked, 0x00})
	require.Error(t, err, "an unknown code")
	_, err = unpackTrace([]byte{tracePacked, traceDictX, 0xff})
	require.Error(t, err, "a dictionary index out of range")
}

// Any data packs and unpacks to itself (the seeds run with go test; go
// test -fuzz FuzzTracePack explores).
func FuzzTracePack(f *testing.F) {
	for _, s := range []string{`{"argumentsBytes":1,"argumentsSha256":"dd847c0da0c9f23ead78fa429b7cba0df3ca6ddf11264c9c8f10d142b076183a","name":"a","toolCallId":"call_x6pr7m42sjnz3mccj336722noq"}`,
		`{"action":"answered","requestId":"ask_jhbicney77ib3r5w6wpvj2t24u"}`, "\x01\x02", `"}"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := unpackTrace(packTrace(data))
		if err != nil || string(got) != string(data) {
			t.Fatalf("%q: got %q, %v", data, got, err)
		}
	})
}

// traceDictAt and evDictAt find, at every offset of data made of their
// dictionary's strings, their prefixes and JSON around them, the string a
// scan of the whole dictionary finds: the longest that starts there, the
// first of those as long.
func TestDictAtMatchesScan(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		dict []string
		at   func([]byte) int
	}{"trace": {traceDict, traceDictAt}, "event": {eventDict[:], evDictAt}} {
		scan := func(data []byte) int {
			best := -1
			for k, s := range c.dict {
				if strings.HasPrefix(string(data), s) && (best < 0 || len(s) > len(c.dict[best])) {
					best = k
				}
			}
			return best
		}
		var b strings.Builder
		for i, s := range c.dict {
			b.WriteString(s)
			b.WriteString(`x",`)
			b.WriteString(s[:len(s)/2])
			b.WriteString(c.dict[(i*7)%len(c.dict)])
		}
		data := []byte(b.String())
		found := 0
		for i := range data {
			want := scan(data[i:])
			require.Equal(t, want, c.at(data[i:]), "%s at %d: %q", name, i, data[i:min(i+24, len(data))])
			if want >= 0 {
				found++
			}
		}
		require.GreaterOrEqual(t, found, len(c.dict), name)
	}
}
