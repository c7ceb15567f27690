//go:build linux

package opstest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNoLargeTrackedFiles runs scripts/check-large-files.sh on the
// repository: no tracked file is over 1 MiB unless scripts/large-files.allow
// lists it as an expected asset (a committed 94.8 MB binary once made every
// clone that much heavier).
func TestNoLargeTrackedFiles(t *testing.T) {
	root := repoRoot(t)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "check-large-files.sh"))
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// TestLargeFileCheckRefusesAndAllows checks the check itself on a scratch
// repository: a staged file over the limit fails it naming the file, the same
// file listed in scripts/large-files.allow passes, and a file at the limit
// passes.
func TestLargeFileCheckRefusesAndAllows(t *testing.T) {
	root := repoRoot(t)
	script, err := os.ReadFile(filepath.Join(root, "scripts", "check-large-files.sh"))
	require.NoError(t, err)

	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = dir
		b, err := c.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, b)
	}
	git("init", "-q")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scripts", "check-large-files.sh"), script, 0o755))
	const limit = "100000"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "at limit"), bytes.Repeat([]byte("a"), 100000), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.bin"), bytes.Repeat([]byte("b"), 100001), 0o644))
	git("add", ".")

	check := func() (string, error) {
		c := exec.Command("bash", "scripts/check-large-files.sh", limit)
		c.Dir = dir
		b, err := c.CombinedOutput()
		return string(b), err
	}
	out, err := check()
	require.Error(t, err, "a 100001-byte file over a 100000-byte limit must fail the check: %s", out)
	require.Contains(t, out, "big.bin: 100001 bytes")
	require.NotContains(t, out, "at limit")

	allow := "# expected assets\n  big.bin  # a fixture\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scripts", "large-files.allow"), []byte(allow), 0o644))
	out, err = check()
	require.NoError(t, err, "big.bin is listed in scripts/large-files.allow: %s", out)

	// Removed from the index, the file no longer counts even if it is still on disk.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "scripts", "large-files.allow"), nil, 0o644))
	git("rm", "-q", "--cached", "big.bin")
	out, err = check()
	require.NoError(t, err, "an untracked file is not checked: %s", out)
}
