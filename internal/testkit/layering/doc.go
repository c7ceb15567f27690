// Package layering holds the test of which luban packages may import which
// (docs/architecture.md); it has no code of its own.
package layering
