package layering

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWireTypesLiveInAPIOnly checks that no package outside api names a
// wire type or constant of api again (docs/design.md §19): no `type X =
// api.Y`, no `const X = api.Y` or `var X = api.Y`, in the non-test files of
// every package. One name per thing: the api type is the one a reader finds.
func TestWireTypesLiveInAPIOnly(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err)
	root := strings.TrimSpace(string(out))
	var found []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", "web":
				return filepath.SkipDir
			}
			if rel, _ := filepath.Rel(root, path); rel == "api" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		apiName := ""
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == module+"/api" {
				apiName = "api"
				if imp.Name != nil {
					apiName = imp.Name.Name
				}
			}
		}
		if apiName == "" {
			return nil
		}
		isAPI := func(e ast.Expr) bool {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return false
			}
			x, ok := sel.X.(*ast.Ident)
			return ok && x.Name == apiName
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok {
				continue
			}
			for _, spec := range gd.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Assign.IsValid() && isAPI(s.Type) {
						found = append(found, fset.Position(s.Pos()).String()+": type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for i, v := range s.Values {
						if isAPI(v) && i < len(s.Names) {
							found = append(found, fset.Position(s.Pos()).String()+": "+s.Names[i].Name)
						}
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "a second name for an api type or constant: use the api one")
}
