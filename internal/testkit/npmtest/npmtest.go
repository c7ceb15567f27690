// Package npmtest installs the npm packages a Go test drives with Node (the
// official TypeScript clients and schemas) on first use, as scripts/test.sh
// does for CI with npm ci.
package npmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Install runs `npm ci --no-audit --no-fund` in dir (a directory with
// package.json and package-lock.json) unless dir/node_modules/pkg/package.json
// exists already (pkg is an npm package name such as "@ag-ui/client"). It
// holds an exclusive lock on dir/.install.lock meanwhile, so that test
// binaries running at once install once. It returns an error naming dir
// when the packages are missing and there is no npm command, or npm ci
// fails (with its output).
func Install(dir, pkg string) error {
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(pkg), "package.json")); err == nil {
		return nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("node_modules missing and no npm to install it: run npm ci in %s", dir)
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return nil
}

// Node returns the node command after Install(dir, pkg): it skips t when
// there is no node command (who names the tests that need it, for the skip
// message) and fails t when the packages cannot be installed.
func Node(t testing.TB, dir, pkg, who string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("no node command: %s need Node (CI has it)", who)
	}
	if err := Install(dir, pkg); err != nil {
		t.Fatalf("%s: %v", filepath.Base(dir), err)
	}
	return node
}
