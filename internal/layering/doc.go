// Package layering holds the test of which luban packages may import which
// (docs/design.md, "Layers"); it has no code of its own.
package layering
