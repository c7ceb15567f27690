package lubantest

import (
	"bytes"
	"strings"
	"testing"
)

// Attach returns a Server that talks to a luban already listening at url
// (for example a `luban serve` process a test started, internal/testkit/crashtest)
// with token, so the same helpers (Request, JSON, Chat, Continue, Events,
// Open) and the same SSE evidence on failure work against it. Runner and
// Store are nil and Stop does nothing: the caller owns the process.
func Attach(t testing.TB, url, token string) *Server {
	t.Helper()
	s := &Server{t: t, URL: strings.TrimSuffix(url, "/"), Token: token, raw: map[string]*bytes.Buffer{}}
	s.once.Do(func() {}) // Stop: nothing to stop here
	t.Cleanup(func() {
		if KeepEvidence(t) {
			s.saveArtifacts()
		}
	})
	return s
}
