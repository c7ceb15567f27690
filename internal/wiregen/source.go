// Package wiregen generates the page's TypeScript types and the OpenAPI 3.1
// document of /api from package api: the types, their doc comments and
// their enum constants come from api's source (go/ast), the routes and
// events from api.Endpoints and api.Events. internal/cmd/wiregen writes the
// files ("go generate ./api"); a test regenerates them and fails when the
// committed ones are stale.
package wiregen

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// pkg is what the generators know about package api's source.
type pkg struct {
	types  []*typeDef // exported structs and string enums, in source order
	byName map[string]*typeDef
}

// typeDef is one exported type of package api.
type typeDef struct {
	Name   string
	Doc    string
	Fields []field   // for a struct
	Enum   []enumVal // for a named string type with constants
	IsEnum bool
}

// field is one struct field. Embedded names an embedded struct whose fields
// are flattened into the JSON object (as encoding/json does).
type field struct {
	JSON      string
	Doc       string
	Type      ast.Expr
	OmitEmpty bool
	Embedded  string
}

// enumVal is one constant of an enum type.
type enumVal struct {
	Value, Doc string
}

// parse reads the non-test Go files of dir (package api).
func parse(dir string) (*pkg, error) {
	fset := token.NewFileSet()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	p := &pkg{byName: map[string]*typeDef{}}
	var consts []*ast.GenDecl
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, err
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok {
				continue
			}
			switch gd.Tok {
			case token.CONST:
				consts = append(consts, gd)
			case token.TYPE:
				for _, s := range gd.Specs {
					ts := s.(*ast.TypeSpec)
					if !ts.Name.IsExported() || ts.Assign != 0 || isMeta(ts.Name.Name) {
						continue
					}
					doc := ts.Doc
					if doc == nil && len(gd.Specs) == 1 {
						doc = gd.Doc
					}
					td := &typeDef{Name: ts.Name.Name, Doc: text(doc)}
					switch t := ts.Type.(type) {
					case *ast.StructType:
						fs, err := fields(t)
						if err != nil {
							return nil, fmt.Errorf("%s: %w", td.Name, err)
						}
						td.Fields = fs
					case *ast.Ident:
						if t.Name != "string" {
							continue
						}
						td.IsEnum = true
					default:
						continue
					}
					p.types = append(p.types, td)
					p.byName[td.Name] = td
				}
			}
		}
	}
	for _, gd := range consts {
		var typ string
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			if vs.Type != nil {
				typ = ""
				if id, ok := vs.Type.(*ast.Ident); ok {
					typ = id.Name
				}
			}
			td := p.byName[typ]
			if td == nil || !td.IsEnum || len(vs.Values) != 1 {
				continue
			}
			lit, ok := vs.Values[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return nil, fmt.Errorf("constant %s of %s: want a string literal", vs.Names[0].Name, typ)
			}
			v, _ := strconv.Unquote(lit.Value)
			td.Enum = append(td.Enum, enumVal{Value: v, Doc: text(vs.Comment)})
		}
	}
	for _, td := range p.types {
		if td.IsEnum && len(td.Enum) == 0 {
			return nil, fmt.Errorf("string type %s has no constants", td.Name)
		}
	}
	return p, nil
}

func fields(st *ast.StructType) ([]field, error) {
	var out []field
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			t, _ := strconv.Unquote(f.Tag.Value)
			tag = reflect.StructTag(t).Get("json")
		}
		name, opts, _ := strings.Cut(tag, ",")
		doc := text(f.Doc)
		if doc == "" {
			doc = text(f.Comment)
		}
		if len(f.Names) == 0 {
			id, ok := f.Type.(*ast.Ident)
			if !ok || tag != "" {
				return nil, fmt.Errorf("embedded field %v: only untagged embedded api structs are supported", f.Type)
			}
			out = append(out, field{Embedded: id.Name})
			continue
		}
		for _, n := range f.Names {
			if !n.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				return nil, fmt.Errorf("field %s has no json tag", n.Name)
			}
			out = append(out, field{JSON: name, Doc: doc, Type: f.Type, OmitEmpty: strings.Contains(","+opts+",", ",omitempty,")})
		}
	}
	return out, nil
}

// flat returns td's fields with embedded structs expanded in place.
func (p *pkg) flat(td *typeDef) ([]field, error) {
	var out []field
	for _, f := range td.Fields {
		if f.Embedded == "" {
			out = append(out, f)
			continue
		}
		e := p.byName[f.Embedded]
		if e == nil || e.IsEnum {
			return nil, fmt.Errorf("%s embeds %s, which is not an api struct", td.Name, f.Embedded)
		}
		fs, err := p.flat(e)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// text is a comment group's text, trimmed.
func text(g *ast.CommentGroup) string {
	if g == nil {
		return ""
	}
	return strings.TrimSpace(g.Text())
}

// typeName returns the name of the api type of a zero value (ChatRequest{}).
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
