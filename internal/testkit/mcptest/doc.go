// Package mcptest tests luban's MCP server (POST /mcp, docs/design.md §11) as MCP
// hosts meet it: real `luban serve` processes killed with SIGKILL between
// the question and the answer, driven by the official Go SDK client (both
// protocol generations) and by the official TypeScript SDK client
// (@modelcontextprotocol/sdk, package.json here; scripts/test.sh installs
// it with npm ci, and the tests do on first use).
package mcptest

import (
	"path/filepath"
	"runtime"
)

// Dir is this package's directory: package.json, client.mjs and
// node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}
