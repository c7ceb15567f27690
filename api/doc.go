// Package api holds luban's wire types: every request and response body of
// the HTTP API, the InputRequest and Receipt of the human-in-the-loop
// contract, and the payload of every SSE event, with the event names and
// error codes (docs/design.md §3, §A.2–§A.3, AgentScope AskUser). It imports
// only the standard library, so any program (the server, the Go client, a
// test, another service) can use it without pulling in luban's engine.
//
// The JSON of these types is the contract: field names, event names and
// codes are never renamed. The page's TypeScript types (web/packages/luban-react/src/types.gen.ts)
// and the OpenAPI 3.1 document of /api (openapi.json, served at
// GET /api/openapi.json) are generated from this package by
// internal/cmd/wiregen; a test fails when either is stale, so run
// "go generate ./api" after changing anything here.
//
// Conventions: a field with omitempty may be absent; every other field is
// always present; a pointer field is null when it has no value; a slice
// field is always an array (never null) in what the server sends; time.Time
// is an RFC 3339 string; json.RawMessage is any JSON value.
package api

//go:generate go run ../internal/cmd/wiregen -api . -ts ../web/packages/luban-react/src/types.gen.ts -openapi openapi.json
