package api

// ToolFrontend is the Prompt.Tool of a front-end tool call (docs/design.md
// §21 "Front-end tools"): the model called a tool that the AG-UI client
// offered for the run (RunAgentInput.tools), and the application answers it.
// The request's ToolName, Arguments and ArgumentsSchema are the call's tool,
// its arguments and the tool's JSON Schema; Mode is ModeText, and the answer's
// customInput is the tool's result, the call's ToolResult as it is.
const ToolFrontend = "frontend_tool"
