package api_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/wiregen"
)

// The committed TypeScript and OpenAPI files are what internal/wiregen
// makes of this package now; run "go generate ./api" when this fails. The
// check lives here, beside the types, so a change to them cannot pass this
// package's tests with stale files.
func TestGeneratedFilesAreFresh(t *testing.T) {
	t.Parallel()
	ts, err := wiregen.TypeScript(".")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := wiregen.OpenAPI(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		want []byte
	}{
		{filepath.Join("..", "web", "packages", "luban-react", "src", "types.gen.ts"), ts},
		{"openapi.json", doc},
	} {
		committed, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if d := firstDiff(string(f.want), string(committed)); d != "" {
			t.Errorf("%s is stale (run go generate ./api): %s", f.path, d)
		}
	}
	if d := firstDiff(string(doc), string(api.OpenAPI())); d != "" {
		t.Errorf("the embedded OpenAPI document is not the generated one: %s", d)
	}
}

// firstDiff names the first line where got differs from want, or "".
func firstDiff(want, got string) string {
	if want == got {
		return ""
	}
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("line %d: generated %q, committed %q", i+1, wl, gl)
		}
	}
	return "they differ"
}
