package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

// ReadyCheck is one dependency GET /readyz asks (beside the store), such as
// an MCP server: Check returns nil when it can serve. Name labels it in the
// JSON details. An Optional check that fails is reported ("unavailable")
// without making the whole status unavailable (an MCP server that is down
// is retried, never fatal: docs/design.md §11). Detail, when set, is added to the
// check's entry as "detail" (JSON; no error texts, /readyz needs no token).
type ReadyCheck struct {
	Name     string
	Check    func(ctx context.Context) error
	Optional bool
	Detail   func() any
}

// ReadyStatus is the body of GET /readyz: Status "ok" (200) when every check
// passed, "unavailable" (503) otherwise, and each check's outcome. Error
// texts stay in the server log: /readyz needs no token.
type ReadyStatus struct {
	Status string              `json:"status"`
	Checks map[string]CheckRes `json:"checks"`
}

// CheckRes is one check of ReadyStatus: "ok" or "unavailable", how long it
// took in milliseconds, and the check's Detail when it has one.
type CheckRes struct {
	Status     string  `json:"status"`
	DurationMS float64 `json:"durationMs"`
	Detail     any     `json:"detail,omitempty"`
}

func (s *Server) storeCheck(ctx context.Context) error { return s.opts.Runner.Ready(ctx) }

// handleReadyz is GET /readyz: the store and every Options.ReadyChecks, each
// bounded by 2 s.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	checks := append([]ReadyCheck{{Name: "store", Check: s.storeCheck}}, s.opts.ReadyChecks...)
	out := ReadyStatus{Status: "ok", Checks: map[string]CheckRes{}}
	for _, c := range checks {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		start := time.Now()
		err := c.Check(ctx)
		cancel()
		res := CheckRes{Status: "ok", DurationMS: float64(time.Since(start).Microseconds()) / 1000}
		if err != nil {
			res.Status = "unavailable"
			if !c.Optional {
				out.Status = "unavailable"
			}
			s.log.WarnContext(r.Context(), "readyz: check failed", "check", c.Name, "err", err)
		}
		if c.Detail != nil {
			res.Detail = c.Detail()
		}
		out.Checks[c.Name] = res
	}
	code := http.StatusOK
	if out.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, out)
}

// handleLivez is GET /livez: the process is up and serves HTTP.
func handleLivez(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleRenameSession is PATCH /api/sessions/{id} {title}: the owner renames
// a session. 200 the api.SessionView; 400 invalid_request for a malformed
// body or a title the Runner refuses; 404 session_not_found for a session
// of another principal or none.
func (s *Server) handleRenameSession(w http.ResponseWriter, r *http.Request) {
	var req api.RenameRequest
	if !s.decode(w, r, &req) {
		return
	}
	v, err := s.opts.Runner.RenameSession(r.Context(), Principal(r.Context()), r.PathValue("id"), req.Title)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// handleDeleteSession is DELETE /api/sessions/{id} (docs/design.md §14): the owner
// deletes a session and everything of it but its audit entries. 200
// api.DeleteResponse when deleted; 404 session_not_found for a session of another principal or none;
// 409 run_in_progress while a run is active, unless ?force=true, which
// cancels the run first (a pending question is cancelled as by the user).
func (s *Server) handleDeleteSession(w http.ResponseWriter, r *http.Request) {
	force := false
	if v := r.URL.Query().Get("force"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "force must be true or false"})
			return
		}
		force = b
	}
	ss, ok := s.ownSession(w, r)
	if !ok {
		return
	}
	err := s.opts.Runner.DeleteSession(r.Context(), Principal(r.Context()), ss.ID, force)
	switch {
	case errors.Is(err, agent.ErrRunInProgress):
		writeError(w, http.StatusConflict, api.ErrorDetail{Code: api.CodeRunInProgress, Message: "the session has an active run: cancel it first, or DELETE with ?force=true"})
	case errors.Is(err, agent.ErrSessionNotFound):
		writeError(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeSessionNotFound, Message: "session not found"})
	case err != nil:
		s.fail(w, r, err)
	default:
		writeJSON(w, http.StatusOK, api.DeleteResponse{SessionID: ss.ID, Deleted: true})
	}
}
