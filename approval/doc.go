// Package approval is the contract of human approval before a tool runs
// (docs/design.md §10), with no I/O, like askuser: which calls need approval (Policy),
// the InputRequest a person sees, how their decision is validated (approve,
// edit with arguments checked against the tool's JSON Schema, reject), the
// ToolResult each decision gives the model, the Receipt and the audit
// summary. The run (agent/) persists and resumes; this package decides.
package approval
