package server

import (
	"net/http"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

// handleDelegate is POST /api/interactions/{id}/delegate (docs/design.md
// §16): the caller, an assignee, hands the pending question to another
// person of people:.
func (s *Server) handleDelegate(w http.ResponseWriter, r *http.Request) {
	var body api.DelegateRequest
	if !s.decode(w, r, &body) {
		return
	}
	res, err := s.opts.Runner.Delegate(r.Context(), agent.DelegateParams{By: Principal(r.Context()), RequestID: r.PathValue("id"), To: body.To, Message: body.Message})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}
