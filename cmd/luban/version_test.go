package main

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionAsDocumented: what `luban --version` prints for each way of
// building luban, from the build information the Go toolchain embeds, is
// what docs/operations.md shows for it, word for word.
func TestVersionAsDocumented(t *testing.T) {
	t.Parallel()
	vcs := func(rev, modified, when string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: when}, {Key: "vcs.modified", Value: modified}}
	}
	const rev, when = "87e54fc87743a3d706373524c454b1fc5e4b7eef", "2026-12-04T18:40:12Z"
	for _, c := range []struct {
		name, version string
		bi            *debug.BuildInfo
		want          string
	}{
		{"go install …@v1.2.3 (a module zip has no VCS information)", "dev",
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, "luban v1.2.3"},
		{"a release build (goreleaser: -X main.version= the tag) in a checkout of the tag", "v1.2.3",
			&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}, Settings: vcs(rev, "false", when)}, "luban v1.2.3 commit " + rev + " " + when},
		{"go build in a clone (Go 1.24+ stamps a pseudo-version)", "dev",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204184012-87e54fc87743"}, Settings: vcs(rev, "false", when)},
			"luban v0.0.0-20261204184012-87e54fc87743 commit " + rev + " " + when},
		{"go build in a clone with uncommitted changes", "dev",
			&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261204184012-87e54fc87743+dirty"}, Settings: vcs(rev, "true", when)},
			"luban v0.0.0-20261204184012-87e54fc87743+dirty commit " + rev + " (modified) " + when},
		{"no VCS information (-buildvcs=false, a build outside a git checkout)", "dev",
			&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "luban (devel)"},
	} {
		got := formatVersion(c.version, c.bi, true)
		require.Equal(t, c.want, got, c.name)
		doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "operations.md"))
		require.NoError(t, err)
		require.True(t, strings.Contains(strings.Join(strings.Fields(string(doc)), " "), "`"+got+"`"),
			"docs/operations.md does not show `%s` (%s)", got, c.name)
	}
}
