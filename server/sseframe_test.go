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
