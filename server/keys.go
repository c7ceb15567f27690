package server

import (
	"encoding/json"
	"net/http"
)

// handleKeys is GET /.well-known/luban/keys (docs/design.md §17): the
// public keys that verify receipts, as a JWKS, without a token. Clients
// may cache it for five minutes; a key that signed a receipt stays in it
// until an operator removes it.
func (s *Server) handleKeys(w http.ResponseWriter, r *http.Request) {
	b, err := json.Marshal(s.opts.Keys.JWKS())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/jwk-set+json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Header().Set("Access-Control-Allow-Origin", "*")
	_, _ = w.Write(append(b, '\n'))
}
