//go:build linux

package opstest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
		cmd := exec.Command("make", "--no-print-directory", "-n", target)
		cmd.Dir = clone
		// Under `make test` (CI) the test inherits make's MAKEFLAGS and
		// MAKELEVEL; a nested make would print its directory.
		cmd.Env = withoutMake(os.Environ())
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, "make -n %s: %s", target, b)
		return string(b)
	}
	run := dryRun("run")
	require.Contains(t, run, "bash scripts/run.sh")
	script, err := os.ReadFile(filepath.Join(root, "scripts", "run.sh"))
	require.NoError(t, err)
	require.Contains(t, string(script), "go build -v -o bin/luban ./cmd/luban")
	require.Contains(t, string(script), "exec bin/luban serve")
	require.NotContains(t, string(script), "npm", "make run must use the committed web/dist")
	require.NotContains(t, dryRun("build"), "npm", "make build must use the committed web/dist")
	require.Contains(t, dryRun("web"), "npm run build", "make web rebuilds a stale page")
	require.Contains(t, dryRun("web-dist"), "npm run build")

	// The parts of make test have rules (not "Nothing to be done"), each
	// the phases of scripts/test.sh it names.
	require.Equal(t, "bash scripts/test.sh\n", dryRun("test"))
	require.Equal(t, "bash scripts/test.sh setup go\n", dryRun("test-go"))
	require.Equal(t, "bash scripts/test.sh web\n", dryRun("test-web"))
	require.Equal(t, "bash scripts/test.sh setup e2e\n", dryRun("e2e"))
	require.Contains(t, dryRun("release"), `-ldflags "-s -w`)
}

// TestTestScriptPhases: scripts/test.sh refuses an unknown phase naming
// the phases, and prints every phase it ran with its duration, also when
// one fails (here: the web phase in a clone without Node's packages and a
// PATH without npm, so it fails at once).
func TestTestScriptPhases(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "test.sh"), "nosuch")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 2, cmd.ProcessState.ExitCode(), "%s", out)
	require.Contains(t, string(out), "unknown phase nosuch (phases: setup web image go e2e)")

	// The web phase with no npm on PATH fails at once; the summary still
	// names it with its duration.
	bin := t.TempDir()
	for _, tool := range []string{"bash", "git", "date", "dirname", "printf"} {
		p, err := exec.LookPath(tool)
		require.NoError(t, err)
		require.NoError(t, os.Symlink(p, filepath.Join(bin, tool)))
	}
	cmd = exec.Command(filepath.Join(bin, "bash"), filepath.Join(root, "scripts", "test.sh"), "web")
	cmd.Env = []string{"PATH=" + bin, "HOME=" + t.TempDir()}
	out, err = cmd.CombinedOutput()
	require.Error(t, err, "%s", out)
	require.Regexp(t, `== \[web\] started \d\d:\d\d:\d\d`, string(out))
	require.Regexp(t, `== phases:\n   web \d+m\d\ds \(failed\)\n   total \d+m\d\ds\n$`, string(out))
}

// TestMakeRunSaysWhatItDoes: make run's script prints what it compiles
// before the server's first line (a first build is minutes of silence
// otherwise), then serves. The build cache of this test run makes the
// build short; its lines are the same.
func TestMakeRunSaysWhatItDoes(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	dir := t.TempDir()
	cmd := exec.Command("bash", filepath.Join(root, "scripts", "run.sh"), "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "luban.db"), "--workspace", dir)
	cmd.Env = append(os.Environ(), "LUBAN_SCRIPTED_DELAY=0")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	lines := make(chan string, 256)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var seen []string
	deadline := time.After(10 * time.Minute)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "make run ended before serving: %q", seen)
			seen = append(seen, l)
			if strings.HasPrefix(l, "luban serving on http://") {
				require.True(t, strings.HasPrefix(seen[0], "== make run: compiling ./cmd/luban into bin/luban ("), "first line %q", seen[0])
				var compiled bool
				for _, s := range seen {
					compiled = compiled || strings.HasPrefix(s, "== compiled in ")
				}
				require.True(t, compiled, "the build's end is printed: %q", seen)
				return
			}
		case <-deadline:
			t.Fatalf("make run did not serve within 10 minutes: %q", seen)
		}
	}
}

// withoutMake is env without the variables a parent make passes down.
func withoutMake(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if k == "MAKEFLAGS" || k == "MAKELEVEL" || k == "MFLAGS" || k == "MAKEOVERRIDES" {
			continue
		}
		out = append(out, kv)
	}
	return out
}
