package client

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"strconv"
	"strings"

	"github.com/lubanhq/luban/api"
)

// Event is one SSE event of a session's event log (docs/design.md §3). ID is its
// per-session sequence number (the SSE "id:", for Last-Event-ID); Name is
// the event name (api.EventMessageDelta, ...); Data is the raw JSON.
// Value is Data decoded into the event's payload type (api.NewEventPayload):
//
//	session             *api.SessionEvent
//	message_delta       *api.MessageDeltaEvent
//	reasoning_delta     *api.ReasoningDeltaEvent
//	message             *api.MessageEvent
//	tool_call           *api.ToolCallEvent
//	tool_result         *api.ToolResultEvent
//	user_input_required *api.InputRequest
//	user_input_resolved *api.Receipt
//	done                *api.DoneEvent
//	error               *api.ErrorEvent
//
// An event name this client does not know leaves Value nil (a newer server
// may add events; skipping them is safe).
type Event struct {
	ID    int64
	Name  string
	Data  json.RawMessage
	Value any
}

// Decode unmarshals the event's raw data into v.
func (e *Event) Decode(v any) error { return json.Unmarshal(e.Data, v) }

// decodeValue fills e.Value from e.Name and e.Data.
func (e *Event) decodeValue() error {
	v := api.NewEventPayload(e.Name)
	if v == nil {
		return nil
	}
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("client: event %d %s: %w", e.ID, e.Name, err)
	}
	e.Value = v
	return nil
}

// maxEventBytes bounds one SSE line; a longer one is an error.
const maxEventBytes = 8 << 20

// Stream reads the typed events of one SSE response. It is not safe for
// concurrent use. The context of the call that opened it governs it: when
// that ctx ends, the connection is closed and Next returns an error.
// Always Close a stream (Close after the end is harmless).
type Stream struct {
	resp   *http.Response
	sc     *bufio.Scanner
	lastID int64
	err    error
	// queue holds events read ahead (Resume's catch-up), yielded first.
	queue []*Event
	// skip, when set, drops the events it reports (Resume: what the
	// transcript already holds).
	skip func(*Event) bool
}

func newStream(resp *http.Response, after int64) *Stream {
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	return &Stream{resp: resp, sc: sc, lastID: after}
}

// Next returns the next event, skipping heartbeat comments. At the end of
// the stream it returns io.EOF; a stream cut inside an event returns
// io.ErrUnexpectedEOF; a data line that does not decode as its event's
// payload returns an error (the event is still returned, Value nil). After
// an error other than a decode error, Next keeps returning it.
func (s *Stream) Next() (*Event, error) {
	for len(s.queue) > 0 {
		ev := s.queue[0]
		s.queue = s.queue[1:]
		if s.skip == nil || !s.skip(ev) {
			return ev, nil
		}
	}
	for {
		ev, err := s.read()
		if ev != nil && err == nil && s.skip != nil && s.skip(ev) {
			continue
		}
		return ev, err
	}
}

// read returns the next event of the connection (Next without the queue
// and skip).
func (s *Stream) read() (*Event, error) {
	if s.err != nil {
		return nil, s.err
	}
	ev := &Event{}
	var data []string
	seen := false
	for s.sc.Scan() {
		line := strings.TrimSuffix(s.sc.Text(), "\r")
		if line == "" {
			if !seen {
				continue
			}
			ev.Data = json.RawMessage(strings.Join(data, "\n"))
			if ev.Name == "" {
				ev.Name = "message" // the SSE default event type
			}
			if ev.ID > 0 {
				s.lastID = ev.ID
			}
			return ev, ev.decodeValue()
		}
		if strings.HasPrefix(line, ":") {
			continue // heartbeat or comment
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "id":
			if n, err := strconv.ParseInt(value, 10, 64); err == nil {
				ev.ID = n
			}
		case "event":
			ev.Name = value
		case "data":
			data = append(data, value)
		}
	}
	switch err := s.sc.Err(); {
	case err != nil:
		s.err = err
	case seen:
		s.err = io.ErrUnexpectedEOF
	default:
		s.err = io.EOF
	}
	return nil, s.err
}

// All iterates over the remaining events; it stops after yielding the first
// error other than io.EOF (the end of a stream is not an error). Breaking
// out of the loop leaves the stream open: Close it.
func (s *Stream) All() iter.Seq2[*Event, error] {
	return func(yield func(*Event, error) bool) {
		for {
			ev, err := s.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(ev, err) || (err != nil && ev == nil) {
				return
			}
		}
	}
}

// LastEventID is the id of the last event read (or the id the stream was
// opened after): pass it to Client.Events to resume after a lost
// connection.
func (s *Stream) LastEventID() int64 { return s.lastID }

// Close closes the connection.
func (s *Stream) Close() error { return s.resp.Body.Close() }
