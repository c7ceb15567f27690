package askuser_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// update rewrites the golden files under testdata/golden and the schema
// documents under ../schemas from the code: go test ./askuser -update
var update = flag.Bool("update", false, "rewrite golden files and schemas/*.json")

// requireGolden compares got with the file at path, or writes it with -update.
func requireGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file; run go test ./askuser -update")
	require.Equal(t, string(want), string(got), "%s drifted; run go test ./askuser -update and review the diff", path)
}
