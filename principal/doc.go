// Package principal says who is asking: the people of the configuration's
// `people:` (docs/design.md §16), looked up by bearer token, by a single
// sign-on login's email, or by id. It has no I/O and imports nothing of
// luban, so the HTTP side (server, agui, mcp) may use it while it reaches
// the store only through agent.Runner (docs/architecture.md).
package principal
