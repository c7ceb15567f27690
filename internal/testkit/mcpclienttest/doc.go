// Package mcpclienttest checks luban as an MCP client end to end (docs/design.md
// §11) against real `luban serve` processes; it has only tests.
package mcpclienttest
