// Package aguitest runs the official AG-UI packages (@ag-ui/core's zod
// schemas, @ag-ui/client's HttpAgent) with Node against luban in tests
// (docs/design.md §13). Node is the one thing a test may lack: without a node
// command the tests that need it skip; the npm packages of package.json are
// installed on first use (npm ci), as scripts/test.sh does for CI.
package aguitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/lubanhq/luban/internal/testkit/npmtest"
)

// Dir is this package's directory: package.json, the .mjs scripts and
// node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Node returns the node command, after making sure the npm packages are
// installed; it skips the test when there is no node command and fails it
// when the packages cannot be installed.
func Node(t testing.TB) string {
	t.Helper()
	return npmtest.Node(t, Dir(), "@ag-ui/client", "the AG-UI client tests")
}

// ExampleDir is examples/agui, the AG-UI client example of the repository.
func ExampleDir() string { return filepath.Join(Dir(), "..", "..", "..", "examples", "agui") }

// Validate checks raw POST /api/agui response bodies with validate.mjs:
// every event against @ag-ui/core's EventSchema, every stream against
// @ag-ui/client's verifyEvents. It skips without node.
func Validate(t testing.TB, bodies map[string][]byte) {
	t.Helper()
	node := Node(t)
	dir := t.TempDir()
	args := []string{filepath.Join(Dir(), "validate.mjs")}
	for name, b := range bodies {
		f := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+".sse")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = Dir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("AG-UI schema validation failed: %v\n%s", err, out)
	}
	t.Logf("validated with @ag-ui/core and @ag-ui/client:\n%s", out)
}
