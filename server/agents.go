package server

import (
	"net/http"

	"github.com/lubanhq/luban/api"
)

// handleAgents is GET /api/agents (docs/design.md §9).
func (s *Server) handleAgents(w http.ResponseWriter, r *http.Request) {
	infos := s.opts.Runner.Agents()
	out := api.AgentList{Agents: make([]api.AgentView, 0, len(infos))}
	for _, a := range infos {
		out.Agents = append(out.Agents, api.AgentView{Name: a.Name, Model: a.Model, Tools: a.Tools, AskTools: a.AskTools})
	}
	writeJSON(w, http.StatusOK, out)
}
