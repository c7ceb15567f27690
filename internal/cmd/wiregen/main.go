// Command wiregen writes the generated views of package api: the page's
// TypeScript types and the OpenAPI 3.1 document of /api. "go generate ./api"
// runs it; api/generated_test.go fails when the committed files are stale.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/lubanhq/luban/internal/wiregen"
)

func main() {
	apiDir := flag.String("api", ".", "directory of package api's source")
	tsOut := flag.String("ts", "", "TypeScript file to write")
	openapiOut := flag.String("openapi", "", "OpenAPI JSON file to write")
	flag.Parse()
	if err := run(*apiDir, *tsOut, *openapiOut); err != nil {
		fmt.Fprintln(os.Stderr, "wiregen:", err)
		os.Exit(1)
	}
}

func run(apiDir, tsOut, openapiOut string) error {
	if tsOut != "" {
		b, err := wiregen.TypeScript(apiDir)
		if err != nil {
			return err
		}
		if err := os.WriteFile(tsOut, b, 0o644); err != nil {
			return err
		}
	}
	if openapiOut != "" {
		b, err := wiregen.OpenAPI(apiDir)
		if err != nil {
			return err
		}
		if err := os.WriteFile(openapiOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
