package npmtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestInstalledPackageNeedsNoNpm(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "node_modules", "@scope", "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "node_modules", "@scope", "pkg", "package.json"), []byte(`{}`), 0o644))
	t.Setenv("PATH", t.TempDir()) // no npm to be found
	require.NoError(t, Install(dir, "@scope/pkg"))
}

func TestMissingPackageWithoutNpmNamesTheDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "node_modules", "@scope", "other"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "node_modules", "@scope", "other", "package.json"), []byte(`{}`), 0o644))
	t.Setenv("PATH", t.TempDir())
	err := Install(dir, "@scope/pkg")
	require.Error(t, err)
	require.Contains(t, err.Error(), "run npm ci in "+dir)
}
