// Package mcp is luban's side of the Model Context Protocol (docs/design.md §11),
// built on the official SDK (github.com/modelcontextprotocol/go-sdk).
//
// NewHandler is luban as an MCP server, mounted at POST /mcp: a human for
// any MCP host. It offers ask_user and AskUser with the §2 schemas; a call
// becomes a question on luban's page exactly like a model's (the same
// interaction row, events, receipt and audit, through agent.Runner.Ask),
// marked with source {kind: "mcp", client: <clientInfo.name>}.
//
//   - A client of protocol 2026-07-28 or later gets an input_required
//     result at once: a URL-mode elicitation for /q/{requestId} and an
//     HMAC-signed requestState bound to the principal and the request,
//     valid until the question's expiresAt. Its retry returns the
//     ToolResult once answered (cancelled/expired results likewise); while
//     the question is pending, a retry whose inputResponses say accept is
//     held until it is resolved, decline or cancel cancels it, and one
//     without a response gets input_required again.
//   - An older client's call is held open until the answer, with progress
//     notifications as keep-alive when the call carried a progressToken.
//     After a restart it calls again with _meta.requestId (or
//     _meta.sessionId and the same arguments; both are sent in every
//     progress notification and result) and waits on the same question, or
//     gets its one result once resolved.
//
// The question itself is rows in the store, so it survives a luban
// restart either way; see docs/mcp.md.
package mcp
