package api

import _ "embed"

// openAPI is the OpenAPI 3.1 document of /api generated from this package
// (go generate ./api).
//
//go:embed openapi.json
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of /api (JSON), generated from
// Endpoints, Events and this package's types; the server answers it at
// GET /api/openapi.json. The caller may not modify the returned bytes.
func OpenAPI() []byte { return openAPI }
