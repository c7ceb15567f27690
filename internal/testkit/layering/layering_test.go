package layering

import (
	"go/build"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/lubanhq/luban"

// rule says which luban packages a package's non-test files may import: only
// those in allow when allow is set, none in deny (a name ending in "/..."
// covers the package and everything under it).
type rule struct {
	allow, deny []string
}

// The layers of docs/architecture.md. The HTTP side (server, agui, mcp) reaches the
// database only through agent.Runner; client speaks the wire types only;
// people reads the principal feed and the webhook outbox the store writes in
// the same transactions as events, so it sits beside agent on top of store
// and below everything that serves HTTP. principal (who a token, a login's
// email or an id is) is a leaf the HTTP side may use. signing (the keys,
// receipts' signatures and action links' grants) stands on api alone, so
// that whatever sends links (notifications) may import it. An answer
// crosses from the HTTP side to agent as the one api.ContinueRequest and
// is validated by its interaction's kind inside agent (docs/design.md
// §15), so the HTTP side imports neither approval nor elicit. store stands
// on nothing of luban's but internal/jsonstr, a leaf (the standard library
// alone) its one-pass decoder shares with askuser's.
var rules = map[string]rule{
	"api":       {allow: []string{}},
	"client":    {allow: []string{"api"}},
	"server":    {deny: []string{"store/...", "people", "client", "internal/testkit/lubantest", "approval", "elicit"}},
	"agui":      {deny: []string{"store/...", "people", "server", "client", "approval", "elicit"}},
	"mcp":       {deny: []string{"store/...", "people", "server", "client", "approval", "elicit"}},
	"people":    {allow: []string{"api", "approval", "askuser", "elicit", "store"}},
	"principal": {allow: []string{}},
	"signing":   {allow: []string{"api"}},
	"store":     {allow: []string{"internal/jsonstr"}},
	"store/...": {allow: []string{"store"}},
	"agent":     {deny: []string{"store/sqlite", "store/postgres", "server", "agui", "mcp", "client", "telemetry"}},
}

func matches(pattern, pkg string) bool {
	if p, ok := strings.CutSuffix(pattern, "/..."); ok {
		return pkg == p || strings.HasPrefix(pkg, p+"/")
	}
	return pkg == pattern
}

// TestLayers checks the direct imports of every package a rule names, in a
// plain build and in one with the lubantest tag.
func TestLayers(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err)
	root := strings.TrimSpace(string(out))
	checked := map[string]bool{}
	for _, tags := range [][]string{nil, {"lubantest"}} {
		ctx := build.Default
		ctx.BuildTags = tags
		for pattern, r := range rules {
			dirs := []string{filepath.Join(root, filepath.FromSlash(strings.TrimSuffix(pattern, "/...")))}
			if strings.HasSuffix(pattern, "/...") {
				dirs = subdirs(t, dirs[0])
			}
			for _, dir := range dirs {
				rel, _ := filepath.Rel(root, dir)
				pkg := filepath.ToSlash(rel)
				p, err := ctx.ImportDir(dir, 0)
				if _, none := err.(*build.NoGoError); none {
					continue
				}
				require.NoError(t, err, pkg)
				checked[pkg] = true
				for _, imp := range p.Imports {
					dep, ok := strings.CutPrefix(imp, module+"/")
					if !ok {
						continue
					}
					if r.allow != nil {
						require.True(t, slices.ContainsFunc(r.allow, func(a string) bool { return matches(a, dep) }), "%s (tags %v) imports %s; it may import only %v", pkg, tags, dep, r.allow)
					}
					for _, d := range r.deny {
						require.False(t, matches(d, dep), "%s (tags %v) imports %s, which it must not (%s)", pkg, tags, dep, d)
					}
				}
			}
		}
	}
	// A rule that names nothing is a typo, not a pass.
	for _, pkg := range []string{"api", "client", "server", "agui", "mcp", "people", "store", "store/sqlite", "store/postgres", "agent"} {
		require.True(t, checked[pkg], "no Go files checked in %s", pkg)
	}
}

// subdirs returns the directories under dir (not dir itself), skipping
// testdata.
func subdirs(t *testing.T, dir string) []string {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != dir {
			if d.Name() == "testdata" {
				return filepath.SkipDir
			}
			out = append(out, path)
		}
		return nil
	})
	require.NoError(t, err)
	return out
}
