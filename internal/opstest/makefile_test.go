//go:build linux

package opstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMakeRunNeedsOnlyGo checks that `make run` (and `make build`) in a
// fresh clone serve the committed web/dist and run no npm, even when the
// clone's mtimes make a page source newer than web/dist (git sets mtimes at
// checkout, in no particular order), while `make web` still rebuilds the page
// then. The work tree's Makefile is copied into the clone, so an uncommitted
// edit of it is what is checked.
func TestMakeRunNeedsOnlyGo(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on this machine")
	}
	root := repoRoot(t)
	clone := filepath.Join(t.TempDir(), "luban")
	out, err := exec.Command("git", "clone", "--quiet", "--no-hardlinks", root, clone).CombinedOutput()
	require.NoError(t, err, "%s", out)
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(clone, "Makefile"), mk, 0o644))

	// A page source newer than the built page, as a fresh clone may have it.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(clone, "web", "dist", "index.html"), old, old))
	require.NoError(t, os.Chtimes(filepath.Join(clone, "web", "package.json"), time.Now(), time.Now()))

	dryRun := func(target string) string {
		cmd := exec.Command("make", "-n", target)
		cmd.Dir = clone
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "make -n %s: %s", target, b)
		return string(b)
	}
	run := dryRun("run")
	require.Contains(t, run, "go run ./cmd/luban serve")
	require.NotContains(t, run, "npm", "make run must use the committed web/dist")
	require.NotContains(t, dryRun("build"), "npm", "make build must use the committed web/dist")
	require.Contains(t, dryRun("web"), "npm run build", "make web rebuilds a stale page")
	require.Contains(t, dryRun("web-dist"), "npm run build")
}
