package lubantest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stretchr/testify/require"
)

// Event is one SSE event as read off the wire.
type Event struct {
	ID   int64
	Name string
	Data json.RawMessage
}

// Decode unmarshals the event's data into v.
func (e Event) Decode(v any) error { return json.Unmarshal(e.Data, v) }

// Stream reads SSE frames from a response body, keeping every raw byte.
type Stream struct {
	Resp *http.Response
	Raw  bytes.Buffer
	br   *bufio.Reader
	srv  *Server
	name string
}

// Open wraps resp (status must be 200 text/event-stream; the caller checks).
func (s *Server) Open(resp *http.Response, name string) *Stream {
	st := &Stream{Resp: resp, srv: s, name: name}
	st.br = bufio.NewReader(io.TeeReader(resp.Body, writerFunc(func(p []byte) (int, error) {
		st.Raw.Write(p)
		s.record(name+".sse", p)
		return len(p), nil
	})))
	return st
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// Next returns the next event (heartbeat comments are skipped), io.EOF at
// the end of the stream, or ctx's error. Give ctx a deadline.
func (st *Stream) Next(ctx context.Context) (Event, error) {
	type res struct {
		ev  Event
		err error
	}
	ch := make(chan res, 1)
	go func() {
		ev, err := st.read()
		ch <- res{ev, err}
	}()
	select {
	case r := <-ch:
		return r.ev, r.err
	case <-ctx.Done():
		st.Resp.Body.Close()
		return Event{}, ctx.Err()
	}
}

func (st *Stream) read() (Event, error) {
	var ev Event
	var data []string
	seen := false
	for {
		line, err := st.br.ReadString('\n')
		if err != nil {
			if err == io.EOF && seen {
				return Event{}, fmt.Errorf("stream ended inside an event: %w", io.ErrUnexpectedEOF)
			}
			return Event{}, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if seen {
				ev.Data = json.RawMessage(strings.Join(data, "\n"))
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			seen = true
			n, err := strconv.ParseInt(line[4:], 10, 64)
			if err != nil {
				return Event{}, fmt.Errorf("bad id line %q", line)
			}
			ev.ID = n
		case strings.HasPrefix(line, "event: "):
			seen = true
			ev.Name = line[7:]
		case strings.HasPrefix(line, "data: "):
			seen = true
			data = append(data, line[6:])
		default:
			return Event{}, fmt.Errorf("unexpected SSE line %q", line)
		}
	}
}

// All reads events until the stream ends (within d).
func (st *Stream) All(d time.Duration) ([]Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out []Event
	for {
		ev, err := st.Next(ctx)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev)
	}
}

// Until reads events until one named name arrives (returned last) or d passes.
func (st *Stream) Until(name string, d time.Duration) ([]Event, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var out []Event
	for {
		ev, err := st.Next(ctx)
		if err != nil {
			return out, fmt.Errorf("waiting for %q: %w (got %v)", name, err, names(out))
		}
		out = append(out, ev)
		if ev.Name == name {
			return out, nil
		}
	}
}

// Close closes the body.
func (st *Stream) Close() { st.Resp.Body.Close() }

func names(evs []Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Name
	}
	return out
}

// Names lists the events' names, in order.
func Names(evs []Event) []string { return names(evs) }

// Logged is what a session's log keeps of the live events evs once their
// messages committed: all but the streamed deltas (message_delta,
// reasoning_delta), which a message's transaction deletes. A stream slow
// enough to commit a delta shows it live only, and the ids of a later
// replay skip it (docs/design.md §3: ids increase; they may skip deleted deltas).
func Logged(evs []Event) []Event {
	var out []Event
	for _, ev := range evs {
		if ev.Name != "message_delta" && ev.Name != "reasoning_delta" {
			out = append(out, ev)
		}
	}
	return out
}

// RequireNext checks that ev is the event that follows id after in a
// session's log: id after+1, or a larger id when ev is an assistant message,
// whose streamed deltas just before it may be deleted by the time the log
// is read (docs/design.md §3: ids increase; they may skip deleted deltas).
func RequireNext(t require.TestingT, after int64, ev Event, msgAndArgs ...any) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	var d struct{ Role string }
	if ev.Name == "message" && json.Unmarshal(ev.Data, &d) == nil && d.Role == "assistant" {
		require.Greater(t, ev.ID, after, msgAndArgs...)
		return
	}
	require.Equal(t, after+1, ev.ID, msgAndArgs...)
}

// Find returns the first event named name.
func Find(evs []Event, name string) (Event, bool) {
	for _, e := range evs {
		if e.Name == name {
			return e, true
		}
	}
	return Event{}, false
}

// Chat posts a message (sessionID "" for a new session) and returns the
// stream; it fails the test unless the answer is a 200 SSE stream.
func (s *Server) Chat(sessionID, message string) *Stream {
	s.t.Helper()
	resp := s.Request("POST", "/api/chat", map[string]any{"sessionId": sessionID, "message": message}, "")
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("POST /api/chat: %s %s", resp.Status, b)
	}
	return s.Open(resp, "chat")
}

// TryChat is Chat on a server that may die before it answers: it returns
// the transport error (with a nil stream) instead of failing the test. A
// non-200 answer still fails it.
func (s *Server) TryChat(sessionID, message string) (*Stream, error) {
	s.t.Helper()
	resp, err := s.TryRequest("POST", "/api/chat", map[string]any{"sessionId": sessionID, "message": message}, "")
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("POST /api/chat: %s %s", resp.Status, b)
	}
	return s.Open(resp, "chat"), nil
}

// TokenPrincipal is the principal luban derives from a bearer token
// without people: "p_" and the first 16 hex digits of its SHA-256
// (server.Principal).
func TokenPrincipal(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "p_" + hex.EncodeToString(sum[:8])
}

// Continue posts an answer and returns the raw response (the caller checks
// the status; on 200 wrap it with Open).
func (s *Server) Continue(body map[string]any) *http.Response {
	s.t.Helper()
	return s.Request("POST", "/api/chat/continue", body, "")
}

// Events subscribes to a session's event log after lastID.
func (s *Server) Events(sessionID string, lastID int64) *Stream {
	s.t.Helper()
	resp := s.Request("GET", "/api/sessions/"+sessionID+"/events", nil, "", "Last-Event-ID", strconv.FormatInt(lastID, 10))
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		s.t.Fatalf("GET events: %s %s", resp.Status, b)
	}
	return s.Open(resp, "events")
}

// EventsUntil replays a session's event log after lastID (Events), reads
// it until the first event called name (the event included) or until d has
// passed, closes the stream and returns what it read. Anything else (a
// timeout, a broken stream) fails the test.
func (s *Server) EventsUntil(sessionID string, lastID int64, name string, d time.Duration) []Event {
	s.t.Helper()
	st := s.Events(sessionID, lastID)
	defer st.Close()
	evs, err := st.Until(name, d)
	require.NoError(s.t, err, "events of %s after %d until %q", sessionID, lastID, name)
	return evs
}
