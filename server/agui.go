package server

import (
	"net/http"

	"github.com/lubanhq/luban/agui"
	"github.com/lubanhq/luban/api"
)

// aguiHandler is POST /api/agui (docs/design.md §13): package agui over the same
// Runner, principal, error mapping, heartbeat and shutdown as the rest of
// the API.
func (s *Server) aguiHandler() http.Handler {
	h, err := agui.New(agui.Options{Runner: s.opts.Runner, Principal: Principal, Heartbeat: s.opts.Heartbeat, Done: s.closing, Logger: s.log,
		MaxBodyBytes: s.aguiBodyBytes(),
		ErrorDetail:  func(err error) api.ErrorDetail { _, d := errorFor(err); return d }})
	if err != nil {
		// Unreachable: every required option is set above.
		panic(err)
	}
	return h
}
