package server

import (
	"crypto/sha256"
	"net/http"
	"strings"

	"github.com/lubanhq/luban/mcp"
)

// mcpHandler is /mcp (DESIGN §11): luban as an MCP server for any MCP host,
// over the same Runner and principals as /api. Its requestState key is
// derived from the tokens, so a state survives a restart with the same
// tokens and is void once they change.
func (s *Server) mcpHandler() http.Handler {
	sum := sha256.Sum256([]byte("luban mcp requestState key\x00" + strings.Join(s.opts.Tokens, "\x00")))
	h, err := mcp.NewHandler(mcp.Options{Runner: s.opts.Runner, Verify: s.authenticate, Secret: sum[:],
		Done: s.closing, Logger: s.log})
	if err != nil {
		// Unreachable: every required option is set above.
		panic(err)
	}
	return h
}
