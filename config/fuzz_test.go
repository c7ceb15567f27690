package config_test

import (
	"os"
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
		if (file == nil) == (err == nil) {
			t.Fatalf("Parse returned file=%v err=%v", file, err)
		}
		if err == nil {
			return
		}
		es, ok := err.(config.Errors)
		if !ok || len(es) == 0 {
			t.Fatalf("error is %T, not Errors: %v", err, err)
		}
		lines := 1
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		for _, e := range es {
			if e.Line < 0 || e.Line > lines+1 {
				t.Fatalf("line %d outside the input of %d lines: %v", e.Line, lines, e)
			}
		}
	})
}
