package client

import (
	"context"
	"errors"
	"io"

	"github.com/lubanhq/luban/api"
)

// Resume is what a client needs to show a session it did not follow from
// the start: the transcript (GET /api/sessions/{id}) and a stream of what
// comes after it, which together hold everything once:
//
//   - While the session's run is going, the stream first yields the text
//     it streamed before the transcript was read: the message_delta and
//     reasoning_delta events (with their own ids) of the run's messages
//     the transcript does not hold yet, since a message joins the
//     transcript only when it commits. Deltas of an earlier run (an attempt
//     that died before a takeover) are left out. To find them the log is
//     read from its start once.
//   - Then every event after the transcript's lastEventId, except those the
//     transcript already holds: a message (and its deltas), a tool call, a
//     tool result, a request or a receipt committed between the read of
//     lastEventId and the read of the messages shows once, in the
//     transcript.
//
// The stream's LastEventID is the id to resume after with Events. Errors:
// those of Session and Events (404 session_not_found).
func (c *Client) Resume(ctx context.Context, sessionID string) (*api.Transcript, *Stream, error) {
	tr, err := c.Session(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	known := knownOf(tr)
	after := tr.LastEventID
	catchUp := tr.Session.Status == string(api.RunRunning) && after > 0
	from := after
	if catchUp {
		from = 0
	}
	st, err := c.Events(ctx, sessionID, from)
	if err != nil {
		return nil, nil, err
	}
	if catchUp {
		if err := st.catchUp(after, known); err != nil {
			st.Close()
			return nil, nil, err
		}
	}
	st.skip = known.holds
	return tr, st, nil
}

// known is what a transcript holds, by the ids its events carry.
type known struct {
	messages, calls, results, requests, receipts map[string]bool
}

func knownOf(tr *api.Transcript) *known {
	k := &known{messages: map[string]bool{}, calls: map[string]bool{}, results: map[string]bool{}, requests: map[string]bool{}, receipts: map[string]bool{}}
	for _, m := range tr.Messages {
		k.messages[m.ID] = true
		for _, c := range m.ToolCalls {
			k.calls[c.ID] = true
		}
		if m.Role == api.RoleTool {
			k.results[m.ToolCallID] = true
		}
	}
	for _, it := range tr.Interactions {
		k.requests[it.Request.ID] = true
		if it.Receipt != nil {
			k.receipts[it.Request.ID] = true
		}
	}
	return k
}

// holds reports whether the transcript already shows ev.
func (k *known) holds(ev *Event) bool {
	switch v := ev.Value.(type) {
	case *api.MessageDeltaEvent:
		return k.messages[v.MessageID]
	case *api.ReasoningDeltaEvent:
		return k.messages[v.MessageID]
	case *api.MessageEvent:
		return k.messages[v.MessageID]
	case *api.ToolCallEvent:
		return k.calls[v.ToolCallID]
	case *api.ToolResultEvent:
		return k.results[v.ToolCallID]
	case *api.InputRequest:
		return k.requests[v.ID]
	case *api.Receipt:
		return k.receipts[v.RequestID]
	}
	return false
}

// catchUp reads the stream (opened at the log's start) up to the event
// after, keeping for Next the deltas of the messages the transcript does
// not hold that came after the last run boundary (session, done, error),
// and the first event past after, if the log had no event after itself.
func (s *Stream) catchUp(after int64, k *known) error {
	var deltas []*Event
	for {
		ev, err := s.read()
		if ev == nil && err != nil {
			s.queue = deltas
			if errors.Is(err, io.EOF) {
				return nil // the session is gone or the server stops: Next says so
			}
			return err
		}
		if err != nil {
			continue // a payload this client cannot decode
		}
		if ev.ID > after {
			s.queue = append(deltas, ev)
			return nil
		}
		switch v := ev.Value.(type) {
		case *api.SessionEvent, *api.DoneEvent, *api.ErrorEvent:
			deltas = nil
		case *api.MessageDeltaEvent:
			if !k.messages[v.MessageID] {
				deltas = append(deltas, ev)
			}
		case *api.ReasoningDeltaEvent:
			if !k.messages[v.MessageID] {
				deltas = append(deltas, ev)
			}
		}
		if ev.ID == after {
			s.queue = deltas
			return nil
		}
	}
}
