package wiregen_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/wiregen"
)

// The committed TypeScript and OpenAPI files are what the generators make
// of package api now; run "go generate ./api" when this fails.
func TestGeneratedFilesAreFresh(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	apiDir := filepath.Join(root, "api")
	ts, err := wiregen.TypeScript(apiDir)
	require.NoError(t, err)
	committed, err := os.ReadFile(filepath.Join(root, "web", "src", "types.gen.ts"))
	require.NoError(t, err)
	require.Equal(t, string(ts), string(committed), "web/src/types.gen.ts is stale: run go generate ./api")

	doc, err := wiregen.OpenAPI(apiDir)
	require.NoError(t, err)
	committed, err = os.ReadFile(filepath.Join(apiDir, "openapi.json"))
	require.NoError(t, err)
	require.Equal(t, string(doc), string(committed), "api/openapi.json is stale: run go generate ./api")
	require.Equal(t, string(doc), string(api.OpenAPI()), "the embedded document is the committed one")
}
