// Package web embeds the built React page (issue 4) and serves it. The page
// is built by `make web` (`cd web && npm ci && npm run build`) into dist/;
// a clone where it was not built still compiles, and Handler then answers
// with a small placeholder page that says how to build it (so `go build`
// never needs Node).
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// dist holds the output of `npm run build`; dist/.keep is committed so the
// pattern always matches, even before the page is built.
//
//go:embed all:dist
var dist embed.FS

// placeholder is served for every path when dist/index.html is missing.
const placeholder = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>luban</title></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto; padding: 0 1rem">
<h1>luban</h1>
<p>This binary was built without the web page.</p>
<p>Build the page, then rebuild the binary: <code>make web</code>
(that is, <code>cd web &amp;&amp; npm ci &amp;&amp; npm run build</code>), then <code>go build ./cmd/luban</code>.</p>
<p>The HTTP API under <code>/api/</code> works without the page.</p>
</body>
</html>
`

// Built reports whether the embedded dist/ holds a built page (index.html).
func Built() bool {
	_, err := fs.Stat(dist, "dist/index.html")
	return err == nil
}

// Handler serves the embedded page for GET and HEAD requests. Existing files
// are served as they are (files under /assets/ carry content hashes and are
// cached as immutable); an unknown path without a file extension gets
// index.html so client-side routes such as /s/{id} survive a refresh (SPA
// fallback); an unknown asset path is 404. Without a built page every
// non-asset path gets a placeholder that says to run `make web`. Other
// methods get 405. Mount it after the /api/ routes.
func Handler() http.Handler {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		// fs.Sub fails only for an invalid path; "dist" is valid.
		panic(err)
	}
	return newHandler(sub)
}

// newHandler serves the page from fsys, the content of dist/.
func newHandler(fsys fs.FS) http.Handler {
	files := http.FileServerFS(fsys)
	_, err := fs.Stat(fsys, "index.html")
	built := err == nil
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		hidden := name != "" && strings.HasPrefix(path.Base(name), ".")
		if name != "" && name != "index.html" && !hidden {
			if st, err := fs.Stat(fsys, name); err == nil && !st.IsDir() {
				if strings.HasPrefix(name, "assets/") {
					w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
				}
				files.ServeHTTP(w, r)
				return
			}
		}
		if hidden || (isAsset(name) && name != "index.html") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		if !built {
			_, _ = w.Write([]byte(placeholder))
			return
		}
		index, err := fs.ReadFile(fsys, "index.html")
		if err != nil {
			http.Error(w, "page unavailable", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(index)
	})
}

// isAsset reports whether a missing path names a file rather than a page
// route: anything under assets/ or with an extension in its last element.
func isAsset(name string) bool {
	if name == "" {
		return false
	}
	return strings.HasPrefix(name, "assets/") || strings.Contains(path.Base(name), ".")
}
