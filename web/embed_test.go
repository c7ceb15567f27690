package web

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
)

type testBundle struct {
	url string
}

func setup(t *testing.T, h http.Handler) *testBundle {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testBundle{url: srv.URL}
}

func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, string(body)
}

const builtIndex = `<!doctype html><html><body><div id="root"></div><script src="/assets/index-abc.js"></script></body></html>`

func builtFS() fs.FS {
	return fstest.MapFS{
		".keep":               {Data: nil},
		"index.html":          {Data: []byte(builtIndex)},
		"assets/index-abc.js": {Data: []byte("console.log('page')")},
	}
}

func TestHandlerBuiltServesFilesAndFallsBack(t *testing.T) {
	t.Parallel()
	b := setup(t, newHandler(builtFS()))

	code, _, body := get(t, b.url+"/")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, builtIndex, body)

	code, hdr, body := get(t, b.url+"/assets/index-abc.js")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "console.log('page')", body)
	require.Contains(t, hdr.Get("Cache-Control"), "immutable")

	code, _, body = get(t, b.url+"/index.html")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, builtIndex, body)

	// A client-side route survives a refresh (SPA fallback).
	code, hdr, body = get(t, b.url+"/s/sess-123")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, builtIndex, body)
	require.Equal(t, "no-cache", hdr.Get("Cache-Control"))
	require.True(t, strings.HasPrefix(hdr.Get("Content-Type"), "text/html"))

	// Missing assets are 404, not the page shell.
	code, _, _ = get(t, b.url+"/assets/missing.js")
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = get(t, b.url+"/favicon.ico")
	require.Equal(t, http.StatusNotFound, code)
	code, _, _ = get(t, b.url+"/.keep")
	require.Equal(t, http.StatusNotFound, code)

	res, err := http.Post(b.url+"/", "text/plain", strings.NewReader("x"))
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
}

func TestHandlerUnbuiltServesPlaceholder(t *testing.T) {
	t.Parallel()
	b := setup(t, newHandler(fstest.MapFS{".keep": {Data: nil}}))

	for _, p := range []string{"/", "/s/sess-1", "/index.html"} {
		code, hdr, body := get(t, b.url+p)
		require.Equal(t, http.StatusOK, code, p)
		require.True(t, strings.HasPrefix(hdr.Get("Content-Type"), "text/html"), p)
		require.Contains(t, body, "built without the web page", p)
		require.Contains(t, body, "make web", p)
		require.Contains(t, body, "npm ci &amp;&amp; npm run build", p)
	}
	code, _, _ := get(t, b.url+"/assets/index.js")
	require.Equal(t, http.StatusNotFound, code)
}

// TestHandlerEmbedded checks the real embedded dist/, whether or not the page
// was built: the root is either the built shell or the placeholder.
func TestHandlerEmbedded(t *testing.T) {
	t.Parallel()
	b := setup(t, Handler())

	code, _, body := get(t, b.url+"/")
	require.Equal(t, http.StatusOK, code)
	if Built() {
		index, err := fs.ReadFile(dist, "dist/index.html")
		require.NoError(t, err)
		require.Equal(t, string(index), body)
		require.Contains(t, body, `id="root"`)
		_, _, route := get(t, b.url+"/s/any-session")
		require.Equal(t, string(index), route)
	} else {
		require.Contains(t, body, "make web")
	}
}
