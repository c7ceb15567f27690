package server

import (
	"net/http"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/mcp"
)

// mcpHandler is /mcp (docs/design.md §11): luban as an MCP server for any MCP host,
// over the same Runner and principals as /api. Its requestState key is
// derived from the tokens, so a state survives a restart with the same
// tokens and is void once they change.
func (s *Server) mcpHandler() http.Handler {
	h, err := mcp.NewHandler(mcp.Options{Runner: s.opts.Runner, Verify: s.authenticate, Secret: secretKey("luban mcp requestState key", s.opts.allTokens()),
		Done: s.closing, Logger: s.log})
	if err != nil {
		// Unreachable: every required option is set above.
		panic(err)
	}
	// An authenticated body is read within BodyReadTimeout like any /api
	// body (boundBody); the body of a request the handler will refuse 401
	// is dropped at once, as requireAuth's refuse does.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.bearer(r.Header.Get("Authorization")) == "" {
			dropBody(w, r)
		}
		h.ServeHTTP(w, r)
	})
}

// handleInteraction is GET /api/interactions/{id}: one question of the
// caller by request id, as a transcript lists it (the request, its status,
// its receipt once resolved). It is what the page's /q/{requestId} view
// reads; another principal's or an unknown id is 404 interaction_not_found.
func (s *Server) handleInteraction(w http.ResponseWriter, r *http.Request) {
	a, err := s.opts.Runner.AskedState(r.Context(), Principal(r.Context()), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.InteractionView{Request: *a.Request, Status: a.Status, Receipt: a.Receipt})
}
