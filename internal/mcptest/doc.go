// Package mcptest tests luban's MCP server (POST /mcp, DESIGN §11) as MCP
// hosts meet it: real `luban serve` processes killed with SIGKILL between
// the question and the answer, driven by the official Go SDK client (both
// protocol generations) and by the official TypeScript SDK client
// (@modelcontextprotocol/sdk, package.json here; scripts/test.sh installs
// it with npm ci, and Install does on first use).
package mcptest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
)

// Dir is this package's directory: package.json, client.mjs and
// node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Install runs npm ci in Dir unless @modelcontextprotocol/sdk is installed
// already, under a file lock so that two test binaries do not install at
// once. It errors when the packages are missing and npm is not there.
func Install() error {
	dir := Dir()
	lock, err := os.OpenFile(filepath.Join(dir, ".install.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err == nil {
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
