package layering

import (
	"go/build"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestShippedCodeNeverImportsTheTestKit: internal/testkit holds test support
// only (fake models and servers, process harnesses, the acceptance suites);
// the non-test files of every other package, in a plain build and in one with
// the lubantest tag, import nothing under it, so the picture of the shipped
// code is the shipped code (docs/architecture.md).
func TestShippedCodeNeverImportsTheTestKit(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err)
	root := strings.TrimSpace(string(out))
	kit := module + "/internal/testkit"
	checked := 0
	for _, tags := range [][]string{nil, {"lubantest"}} {
		ctx := build.Default
		ctx.BuildTags = tags
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			switch {
			case d.Name() == "testdata" || d.Name() == "node_modules" || (strings.HasPrefix(d.Name(), ".") && rel != "."):
				return filepath.SkipDir
			case rel == "internal/testkit":
				return filepath.SkipDir
			}
			p, err := ctx.ImportDir(path, 0)
			if err != nil {
				return nil // no Go files here (or none for these tags)
			}
			checked++
			for _, imp := range p.Imports {
				require.False(t, imp == kit || strings.HasPrefix(imp, kit+"/"), "%s (tags %v) imports %s: shipped code never imports the test kit", rel, tags, imp)
			}
			return nil
		})
		require.NoError(t, err)
	}
	require.Greater(t, checked, 20, "the walk found the packages")
}
