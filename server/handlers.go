package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

type storeSessionList = store.SessionListParams

// MessageView is a message in a transcript.
type MessageView struct {
	ID         string           `json:"id"`
	RunID      string           `json:"runId"`
	Role       string           `json:"role"`
	Content    string           `json:"content"`
	ToolCalls  []model.ToolCall `json:"toolCalls,omitempty"`
	ToolCallID string           `json:"toolCallId,omitempty"`
	Name       string           `json:"name,omitempty"`
	IsError    bool             `json:"isError,omitempty"`
	Metadata   json.RawMessage  `json:"metadata,omitempty"`
	CreatedAt  time.Time        `json:"createdAt"`
}

// Transcript is GET /api/sessions/{id}: messages, tool calls, results,
// interactions and receipts.
type Transcript struct {
	Session SessionView `json:"session"`
	// LastEventID is the session's last event id when the transcript was
	// read: a client resumes the event stream after it (duplicates between
	// the two are the same message ids, so a client can drop them).
	LastEventID  int64                   `json:"lastEventId"`
	Messages     []MessageView           `json:"messages"`
	Interactions []agent.InteractionView `json:"interactions"`
}

func (s *Server) ownSession(w http.ResponseWriter, r *http.Request) (*store.Session, bool) {
	ss, err := s.opts.Runner.Session(r.Context(), Principal(r.Context()), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return ss, true
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.ownSession(w, r)
	if !ok {
		return
	}
	ctx := r.Context()
	msgs, err := s.opts.Runner.Store().MessageList(ctx, ss.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	its, err := s.opts.Runner.Interactions(ctx, ss.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	t := Transcript{Session: SessionView{ID: ss.ID, Title: ss.Title, Status: ss.Status, CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt}, LastEventID: ss.LastSeq,
		Messages: make([]MessageView, 0, len(msgs)), Interactions: its}
	for _, m := range msgs {
		v := MessageView{ID: m.ID, RunID: m.RunID, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name, IsError: m.IsError, Metadata: m.Metadata, CreatedAt: m.CreatedAt}
		if len(m.ToolCalls) > 0 {
			_ = json.Unmarshal(m.ToolCalls, &v.ToolCalls)
		}
		t.Messages = append(t.Messages, v)
	}
	writeJSON(w, http.StatusOK, t)
}

// handleEvents is GET /api/sessions/{id}/events: replay after Last-Event-ID
// (or ?after=), then live events and heartbeats until the client leaves.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.ownSession(w, r)
	if !ok {
		return
	}
	after := int64(0)
	v := r.Header.Get("Last-Event-ID")
	if v == "" {
		v = r.URL.Query().Get("after")
	}
	if v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, ErrorDetail{Code: CodeInvalidRequest, Message: "Last-Event-ID / after must be a non-negative integer"})
			return
		}
		after = n
	}
	s.stream(w, r, ss.ID, after, nil)
}

func (s *Server) handleCancel(w http.ResponseWriter, r *http.Request) {
	status, err := s.opts.Runner.Cancel(r.Context(), agent.CancelParams{Owner: Principal(r.Context()), SessionID: r.PathValue("id")})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": status})
}

// TraceView is GET /api/sessions/{id}/trace: model calls (provider, tool
// names sent, message count, latency, retries, finish reason), tool calls,
// ToolResults and the interaction lifecycle, plus the audit entries.
type TraceView struct {
	Trace []TraceItem `json:"trace"`
	Audit []AuditItem `json:"audit"`
}

// TraceItem is one trace entry.
type TraceItem struct {
	Kind  string          `json:"kind"`
	RunID string          `json:"runId"`
	At    time.Time       `json:"at"`
	Data  json.RawMessage `json:"data"`
}

// AuditItem is one audit entry (DESIGN §5); free text appears only as its
// length and hash inside Summary.
type AuditItem struct {
	RequestID  string          `json:"requestId"`
	ToolCallID string          `json:"toolCallId"`
	RunID      string          `json:"runId"`
	Action     string          `json:"action"`
	Reason     string          `json:"reason,omitempty"`
	Summary    json.RawMessage `json:"summary,omitempty"`
	At         time.Time       `json:"at"`
}

func (s *Server) handleTrace(w http.ResponseWriter, r *http.Request) {
	ss, ok := s.ownSession(w, r)
	if !ok {
		return
	}
	st := s.opts.Runner.Store()
	tr, err := st.TraceList(r.Context(), ss.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	au, err := st.AuditList(r.Context(), ss.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := TraceView{Trace: make([]TraceItem, 0, len(tr)), Audit: make([]AuditItem, 0, len(au))}
	for _, t := range tr {
		out.Trace = append(out.Trace, TraceItem{Kind: t.Kind, RunID: t.RunID, At: t.At, Data: t.Data})
	}
	for _, a := range au {
		out.Audit = append(out.Audit, AuditItem{RequestID: a.RequestID, ToolCallID: a.ToolCallID, RunID: a.RunID, Action: a.Action, Reason: a.Reason, Summary: a.Summary, At: a.At})
	}
	writeJSON(w, http.StatusOK, out)
}

// Info is GET /api/info: the model name as people should see it (scripted
// models say so) and the ask tools offered.
type Info struct {
	Model    string   `json:"model"`
	AskTools []string `json:"askTools"`
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, Info{Model: s.opts.Runner.DefaultAgent().Provider.Name(), AskTools: s.opts.AskTools})
}
