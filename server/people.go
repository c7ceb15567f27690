package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strconv"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/ssepump"
)

// pageLimit parses limit= (1..api.MaxPageLimit; absent means the default).
func pageLimit(w http.ResponseWriter, r *http.Request) (int, bool) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > api.MaxPageLimit {
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: fmt.Sprintf("limit must be an integer from 1 to %d", api.MaxPageLimit)})
		return 0, false
	}
	return n, true
}

func (s *Server) failCursor(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, agent.ErrBadCursor) {
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "the cursor is not one of your " + cursorNoun(r)})
		return
	}
	s.fail(w, r, err)
}

func cursorNoun(r *http.Request) string {
	if r.URL.Path == "/api/sessions" {
		return "sessions"
	}
	return "interactions of that status"
}

// handleSessions is GET /api/sessions: the caller's sessions, paged.
func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request) {
	limit, ok := pageLimit(w, r)
	if !ok {
		return
	}
	out, err := s.opts.Runner.SessionPage(r.Context(), Principal(r.Context()), r.URL.Query().Get("before"), limit)
	if err != nil {
		s.failCursor(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handleInbox is GET /api/interactions (docs/design.md §12).
func (s *Server) handleInbox(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	status := api.InboxStatus(q.Get("status"))
	if status == "" {
		status = api.InboxPending
	}
	var cursor string
	switch status {
	case api.InboxPending:
		if q.Get("before") != "" {
			writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "status=pending pages with after=, not before="})
			return
		}
		cursor = q.Get("after")
	case api.InboxResolved:
		if q.Get("after") != "" {
			writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "status=resolved pages with before=, not after="})
			return
		}
		cursor = q.Get("before")
	default:
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "status must be pending or resolved"})
		return
	}
	limit, ok := pageLimit(w, r)
	if !ok {
		return
	}
	out, err := s.opts.Runner.Inbox(r.Context(), Principal(r.Context()), status, cursor, limit)
	if err != nil {
		s.failCursor(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

// handlePrincipalEvents is GET /api/events: the caller's feed as SSE
// (docs/design.md §12). Each frame's id is the caller's feed sequence number; a
// reconnect with Last-Event-ID (or ?after=) gets every entry after it, one
// without starts at the present. Like stream, the feed is the source of
// truth and a wake-up only says "look again".
func (s *Server) handlePrincipalEvents(w http.ResponseWriter, r *http.Request) {
	owner := Principal(r.Context())
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	var after int64
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "Last-Event-ID / after must be a non-negative integer"})
			return
		}
		after = n
	} else {
		n, err := s.opts.Runner.FeedPosition(r.Context(), owner)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		after = n
	}

	rc := ssepump.Start(w)
	if err := rc.Flush(); err != nil {
		return
	}
	var out frames
	ssepump.Run(r.Context(), func(ctx context.Context) iter.Seq2[agent.FeedEvent, error] {
		return s.opts.Runner.Feed(ctx, owner, after)
	}, s.opts.Heartbeat, s.closing, ssepump.Writer[agent.FeedEvent]{
		Item: func(f agent.FeedEvent) (bool, bool) {
			return false, out.write(w, f.Seq, f.Name, withSessionID(f.Data, f.SessionID)) == nil
		},
		Flush: func() bool { return rc.Flush() == nil },
		Ping:  func() bool { return ping(w, rc) },
		Fail: func(err error) {
			s.log.Error("sse: feed list", "err", err)
			fmt.Fprintf(w, "event: %s\ndata: {\"code\":%q,\"message\":\"event feed unavailable\"}\n\n", api.EventError, api.CodeInternal)
			_ = rc.Flush()
		},
	})
}

// withSessionID returns the JSON object data with "sessionId" first when it
// has none (receipts and done events name no session of their own).
func withSessionID(data json.RawMessage, sessionID string) json.RawMessage {
	var probe struct {
		SessionID *string `json:"sessionId"`
	}
	d := bytes.TrimSpace(data)
	if len(d) < 2 || d[0] != '{' || json.Unmarshal(d, &probe) != nil || probe.SessionID != nil {
		return data
	}
	id, _ := json.Marshal(sessionID)
	out := make([]byte, 0, len(d)+len(id)+16)
	out = append(out, `{"sessionId":`...)
	out = append(out, id...)
	rest := bytes.TrimSpace(d[1:])
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}
