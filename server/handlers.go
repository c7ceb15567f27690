package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

type storeSessionList = store.SessionListParams

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
	t := api.Transcript{Session: api.SessionView{ID: ss.ID, Title: ss.Title, Status: ss.Status, CreatedAt: ss.CreatedAt, UpdatedAt: ss.UpdatedAt}, LastEventID: ss.LastSeq,
		Messages: make([]api.MessageView, 0, len(msgs)), Interactions: its}
	for _, m := range msgs {
		v := api.MessageView{ID: m.ID, RunID: m.RunID, Role: api.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name, IsError: m.IsError, Metadata: m.Metadata, CreatedAt: m.CreatedAt}
		if len(m.ToolCalls) > 0 {
			_ = json.Unmarshal(m.ToolCalls, &v.ToolCalls)
		}
		if m.Role == "assistant" {
			v.Metadata = nil
			if r := agent.MessageReasoning(m); r != nil {
				v.Reasoning = r.Text
			}
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
			writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "Last-Event-ID / after must be a non-negative integer"})
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
	writeJSON(w, http.StatusOK, api.CancelResponse{Status: status})
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
	out := api.TraceView{Trace: make([]api.TraceItem, 0, len(tr)), Audit: make([]api.AuditItem, 0, len(au))}
	for _, t := range tr {
		out.Trace = append(out.Trace, api.TraceItem{Kind: t.Kind, RunID: t.RunID, At: t.At, Data: t.Data})
	}
	for _, a := range au {
		out.Audit = append(out.Audit, api.AuditItem{RequestID: a.RequestID, ToolCallID: a.ToolCallID, RunID: a.RunID, Action: a.Action, Reason: a.Reason, Summary: a.Summary, At: a.At})
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, api.Info{Model: s.opts.Runner.DefaultAgent().Provider.Name(), AskTools: s.opts.AskTools})
}
