package api_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/lubanhq/luban/api"
)

// readmeBody is one JSON request body of a curl command in README.md.
type readmeBody struct {
	method, path, body string
	typ                string // the api type of the route's body
}

var (
	fence    = regexp.MustCompile("(?s)```[a-z]*\n(.*?)```")
	curlData = regexp.MustCompile(`(?:-d|--data|--data-raw|--data-binary)\s+'([^']*)'`)
	curlURL  = regexp.MustCompile(`https?://[^/\s'"]+(/[^\s'"?]*)`)
	curlX    = regexp.MustCompile(`(?:-X|--request)\s+([A-Z]+)`)
	// quotedParam is a {name} path segment after regexp.QuoteMeta.
	quotedParam = regexp.MustCompile(`\\\{[^\\]+\\\}`)
)

// readmeBodies finds every curl command with a JSON body in the code blocks
// of the markdown file md (lines ending in a backslash joined) and names the
// body type of its route by api.Endpoints.
func readmeBodies(t *testing.T, md string) []readmeBody {
	t.Helper()
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var out []readmeBody
	for _, block := range fence.FindAllStringSubmatch(string(b), -1) {
		for _, cmd := range strings.Split(strings.ReplaceAll(block[1], "\\\n", " "), "\n") {
			if !strings.Contains(cmd, "curl") {
				continue
			}
			d := curlData.FindStringSubmatch(cmd)
			if d == nil {
				continue
			}
			u := curlURL.FindStringSubmatch(cmd)
			if u == nil {
				t.Fatalf("%s: a curl command with a body and no URL: %s", md, cmd)
			}
			rb := readmeBody{method: "POST", path: u[1], body: d[1]}
			if x := curlX.FindStringSubmatch(cmd); x != nil {
				rb.method = x[1]
			}
			if !json.Valid([]byte(rb.body)) {
				t.Fatalf("%s: the body of %s %s is not JSON: %s", md, rb.method, rb.path, rb.body)
			}
			for _, ep := range api.Endpoints {
				// The pattern's {name} segments match any one segment.
				re := "^" + quotedParam.ReplaceAllString(regexp.QuoteMeta(ep.Path), `[^/]+`) + "$"
				if ep.Method == rb.method && ep.Request != nil && regexp.MustCompile(re).MatchString(rb.path) {
					rb.typ = reflect.TypeOf(ep.Request).Name()
				}
			}
			if rb.typ == "" {
				t.Fatalf("%s: %s %s is not a route of api.Endpoints with a body", md, rb.method, rb.path)
			}
			out = append(out, rb)
		}
	}
	return out
}

// tsc compiles the TypeScript source src under --strict against the
// generated types (web/packages/luban-react/src/types.gen.ts) with the
// page's TypeScript compiler, and returns its output and error.
func tsc(t *testing.T, src string) (string, error) {
	t.Helper()
	web, err := filepath.Abs(filepath.Join("..", "web"))
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(web, "node_modules", ".bin", "tsc")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("TypeScript is not installed in %s (scripts/test.sh runs npm ci there)", web)
		}
		t.Skipf("TypeScript not installed: run (cd %s && npm ci)", web)
	}
	dir := t.TempDir()
	src = strings.ReplaceAll(src, "@types.gen", filepath.Join(web, "packages", "luban-react", "src", "types.gen"))
	f := filepath.Join(dir, "bodies.ts")
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--strict", "--noEmit", "--target", "ES2022", "--module", "ESNext", "--moduleResolution", "bundler",
		"--skipLibCheck", "--types", "", f)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestReadmeBodiesCompileUnderStrictTypeScript: every request body the
// README sends with curl is assignable, as written, to the generated
// TypeScript type of its route's body under tsc --strict (a strict client
// generated from the same types can send what the README shows). The same
// harness refuses a body with a misspelt field and one missing a required
// field, so it can fail.
func TestReadmeBodiesCompileUnderStrictTypeScript(t *testing.T) {
	t.Parallel()
	bodies := readmeBodies(t, filepath.Join("..", "README.md"))
	seen := map[string]bool{}
	for _, b := range bodies {
		seen[b.typ] = true
	}
	if !seen["ChatRequest"] || !seen["ContinueRequest"] {
		t.Fatalf("README.md's curl bodies (%v) no longer include POST /api/chat and POST /api/chat/continue: update this test", bodies)
	}
	var src strings.Builder
	var names []string
	for typ := range seen {
		names = append(names, typ)
	}
	sort.Strings(names)
	fmt.Fprintf(&src, "import type { %s } from \"@types.gen\"\n", strings.Join(names, ", "))
	for i, b := range bodies {
		fmt.Fprintf(&src, "// README.md: %s %s\nexport const body%d: %s = %s\n", b.method, b.path, i, b.typ, b.body)
	}
	if out, err := tsc(t, src.String()); err != nil {
		t.Fatalf("README.md's request bodies do not compile against the generated types under tsc --strict: %v\n%s\n%s", err, out, src.String())
	}

	for _, bad := range []string{`{"mesage":"hi"}`, `{"sessionId":"sess_1"}`} {
		out, err := tsc(t, "import type { ChatRequest } from \"@types.gen\"\nexport const bad: ChatRequest = "+bad+"\n")
		if err == nil {
			t.Errorf("tsc --strict accepted %s as a ChatRequest: %s", bad, out)
		}
	}
}

// TestOpenAPIForStrictClients: the document declares where the API is
// served (servers, with luban's default address) and marks required only
// the request fields the server cannot do without: a new chat needs no
// sessionId, an answer no answers.
func TestOpenAPIForStrictClients(t *testing.T) {
	t.Parallel()
	var doc struct {
		Servers []struct {
			URL       string `json:"url"`
			Variables map[string]struct {
				Default string   `json:"default"`
				Enum    []string `json:"enum"`
			} `json:"variables"`
		} `json:"servers"`
		Components struct {
			Schemas map[string]struct {
				Required []string `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(api.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Servers) == 0 {
		t.Fatal("openapi.json declares no servers")
	}
	url := doc.Servers[0].URL
	for name, v := range doc.Servers[0].Variables {
		url = strings.ReplaceAll(url, "{"+name+"}", v.Default)
	}
	if url != "http://127.0.0.1:8080" {
		t.Errorf("the first server with its defaults is %q, not luban serve's default address", url)
	}
	for typ, want := range map[string][]string{
		"ChatRequest":     {"message"},
		"ContinueRequest": {"requestId", "sessionId"},
		"RenameRequest":   {"title"},
	} {
		got := append([]string(nil), doc.Components.Schemas[typ].Required...)
		sort.Strings(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: required %v, want %v", typ, got, want)
		}
	}
}
