package server

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// specEvent is an event as a browser's EventSource dispatches it.
type specEvent struct{ id, name, data string }

// parseSpec reads an event stream the way the WHATWG HTML standard says
// (server-sent events, "interpreting an event stream"): lines end at CRLF,
// CR or LF; a blank line dispatches; ":" starts a comment; one space after
// the colon is dropped; data lines are joined with LF.
func parseSpec(stream string) []specEvent {
	var out []specEvent
	var id, name string
	var data strings.Builder
	for len(stream) > 0 {
		i := strings.IndexAny(stream, "\r\n")
		if i < 0 {
			break // an unterminated last line is discarded
		}
		line := stream[:i]
		if stream[i] == '\r' && i+1 < len(stream) && stream[i+1] == '\n' {
			i++
		}
		stream = stream[i+1:]
		if line == "" {
			if data.Len() > 0 {
				d := strings.TrimSuffix(data.String(), "\n")
				n := name
				if n == "" {
					n = "message"
				}
				out = append(out, specEvent{id, n, d})
			}
			data.Reset()
			name = ""
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			name = value
		case "data":
			data.WriteString(value)
			data.WriteByte('\n')
		case "id":
			if !strings.ContainsRune(value, 0) {
				id = value
			}
		}
	}
	return out
}

// FuzzWriteEvent checks, for any sequence number, name and data, that the
// frame writeEvent writes is read by a browser as exactly that one event:
// same id, same name (less line breaks), same data with its line breaks as
// LF, and that frames written one after another never run into each other.
func FuzzWriteEvent(f *testing.F) {
	f.Add(int64(1), "message", []byte(`{"role":"user","content":"你好"}`))
	f.Add(int64(7), "done", []byte("{\"a\":\n1}\r\n\r\nid: 99\nevent: done\ndata: {}\n\n"))
	f.Add(int64(0), "", []byte(""))
	f.Add(int64(3), "x\ny", []byte("\r\r\n\n"))
	f.Fuzz(func(t *testing.T, seq int64, name string, data []byte) {
		var buf bytes.Buffer
		require.NoError(t, writeEvent(&buf, seq, name, data))
		require.NoError(t, writeEvent(&buf, seq+1, "done", []byte(`{}`)))
		got := parseSpec(buf.String())
		wantName := strings.NewReplacer("\r", "", "\n", "").Replace(name)
		if wantName == "" {
			wantName = "message"
		}
		wantData := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
		require.Equal(t, []specEvent{
			{strconv.FormatInt(seq, 10), wantName, wantData},
			{strconv.FormatInt(seq+1, 10), "done", "{}"},
		}, got, "frame %q", buf.String())
	})
}

// A stream's frames share one buffer: each frame is exactly its own,
// whatever the frames before it were (longer, with line breaks), and a
// frame smaller than the largest before it is written from the same bytes.
func TestFramesReuseTheirBuffer(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	var f frames
	events := []specEvent{
		{"1", "user_input_required", `{"title":"` + strings.Repeat("长", 200) + `"}`},
		{"2", "message", "a\r\nb\rc\nd"},
		{"3", "done", `{}`},
	}
	var first *byte
	for _, ev := range events {
		seq, _ := strconv.ParseInt(ev.id, 10, 64)
		require.NoError(t, f.write(&out, seq, ev.name, []byte(ev.data)))
		if first == nil {
			first = &f.buf[0]
		}
		require.Same(t, first, &f.buf[0], "frame %s reuses the first frame's buffer", ev.id)
	}
	want := events
	want[1].data = "a\nb\nc\nd"
	require.Equal(t, want, parseSpec(out.String()))
}
