package config_test

import (
	"os"
	"strings"
	"testing"

	"github.com/lubanhq/luban/config"
)

// FuzzParse: no input makes Parse panic, and it returns either a File or
// Errors in which every problem names a line inside the input.
func FuzzParse(f *testing.F) {
	seed, err := os.ReadFile("testdata/two-agents.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte("agents:\n  - name: a\n    approval: {'*': always, ask_user: never}\n"))
	f.Add([]byte("server: {addr: &x 1, db: *x}\n"))
	f.Add([]byte("a: ${X:-${Y}}\n---\n"))
	lookup := func(k string) string {
		if k == "X" {
			return "x: [1"
		}
		return ""
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := config.Parse("f.yaml", data, lookup)
		if file == nil && err == nil {
			t.Fatalf("Parse returned neither a file nor an error")
		}
		if err == nil {
			return
		}
		es, ok := err.(config.Errors)
		if !ok || len(es) == 0 {
			t.Fatalf("error is %T, not Errors: %v", err, err)
		}
		// YAML's line breaks (YAML 1.1 §5.4, as go.yaml.in/yaml/v3 reads
		// them): CR LF, CR, LF, NEL, LS and PS.
		text := strings.ReplaceAll(string(data), "\r\n", "\n")
		lines := 1 + strings.Count(text, "\n") + strings.Count(text, "\r") +
			strings.Count(text, "\u0085") + strings.Count(text, "\u2028") + strings.Count(text, "\u2029")
		for _, e := range es {
			if e.Line < 0 || e.Line > lines+1 {
				t.Fatalf("line %d outside the input of %d lines: %v", e.Line, lines, e)
			}
		}
	})
}
