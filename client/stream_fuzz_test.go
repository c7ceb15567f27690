package client

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzStreamNext checks, for any bytes a server or a proxy may send, that
// Stream.Next never panics, ends (io.EOF, io.ErrUnexpectedEOF or another
// error that then repeats), dispatches at most one event per blank line, and
// keeps LastEventID at the id of the last event that carried one. A valid
// frame appended after the noise, following a blank line, is read intact.
func FuzzStreamNext(f *testing.F) {
	f.Add("id: 1\nevent: message\ndata: {\"role\":\"user\"}\n\n")
	f.Add(": ping\r\n\r\nid: 2\r\nevent: done\r\ndata: {\"runId\":\r\ndata: \"r\"}\r\n\r\n")
	f.Add("id: x\nevent\ndata\n\nid: 9")
	f.Add("data: {\n\n\n\n:\n")
	f.Fuzz(func(t *testing.T, noise string) {
		if len(noise) > 1<<16 {
			return
		}
		const tail = "id: 424242\nevent: done\ndata: {\"runId\":\"run_tail\",\ndata: \"status\":\"completed\"}\n\n"
		body := noise + "\n\n" + tail
		s := newStream(&http.Response{Body: io.NopCloser(strings.NewReader(body))}, 0)
		blank := strings.Count(body, "\n\n") + strings.Count(body, "\n\r\n") + 1
		var last *Event
		var n int
		for {
			ev, err := s.Next()
			if err != nil && ev == nil {
				require.True(t, errors.Is(err, io.EOF), "a complete stream ends in EOF, got %v", err)
				_, again := s.Next()
				require.Equal(t, err, again)
				break
			}
			n++
			require.LessOrEqual(t, n, blank, "more events than blank lines")
			last = ev
		}
		require.NotNil(t, last)
		require.Equal(t, int64(424242), last.ID, "the tail frame is read intact after %q", noise)
		require.Equal(t, "done", last.Name)
		require.JSONEq(t, `{"runId":"run_tail","status":"completed"}`, string(last.Data), fmt.Sprintf("%q", last.Data))
		require.Equal(t, int64(424242), s.LastEventID())
	})
}
