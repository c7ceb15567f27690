package server

import (
	"net/http"
	"strconv"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

func (s *Server) ownSession(w http.ResponseWriter, r *http.Request) (*api.SessionView, bool) {
	ss, err := s.opts.Runner.Session(r.Context(), Principal(r.Context()), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return nil, false
	}
	return ss, true
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	t, err := s.opts.Runner.Transcript(r.Context(), Principal(r.Context()), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
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
	s.stream(w, r, ss.ID, after, false, nil, nil)
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
	tv, err := s.opts.Runner.Trace(r.Context(), Principal(r.Context()), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, tv)
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, api.Info{Model: s.opts.Runner.DefaultAgent().Provider.Name(), AskTools: s.opts.AskTools})
}
