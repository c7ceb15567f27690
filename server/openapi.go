package server

import (
	"net/http"

	"github.com/lubanhq/luban/api"
)

// handleOpenAPI is GET /api/openapi.json: the OpenAPI 3.1 document of /api
// generated from package api.
func handleOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(api.OpenAPI())
}

// routeMux is the /api mux; it remembers the pattern of every route, so a
// test can hold them against the OpenAPI document (api.Endpoints).
type routeMux struct {
	*http.ServeMux
	patterns []string
}

// HandleFunc registers h for pattern, as http.ServeMux.HandleFunc does.
func (m *routeMux) HandleFunc(pattern string, h func(http.ResponseWriter, *http.Request)) {
	m.patterns = append(m.patterns, pattern)
	m.ServeMux.HandleFunc(pattern, h)
}
