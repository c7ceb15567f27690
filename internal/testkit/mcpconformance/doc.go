// Package mcpconformance runs the official MCP conformance suite's client
// scenarios (@modelcontextprotocol/conformance, pinned in package.json)
// against luban's MCP client: the suite starts each scenario's server
// (authorization servers included) and drives
// internal/testkit/cmd/mcpconformance-client, which connects with
// mcpclient.Manager as `luban serve` does (docs/design.md §11, docs/mcp.md
// "Conformance"). baseline.yml lists the scenarios that do not pass, with
// their reasons.
package mcpconformance
