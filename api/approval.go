package api

// ToolApproval is the Prompt.Tool of an approval: a person decides whether
// a tool call runs (docs/design.md §10).
const ToolApproval = "approval"

// ModeApproval is the Mode of an approval's InputRequest (docs/design.md §10).
const ModeApproval Mode = "approval"

// Decision is what a person decided about a tool call awaiting approval
// (docs/design.md §10).
type Decision string

// The three decisions. A cancel is ContinueRequest.Cancelled, not a
// decision.
const (
	DecisionApprove Decision = "approve" // the tool runs once with the model's arguments
	DecisionEdit    Decision = "edit"    // the tool runs once with the edited arguments
	DecisionReject  Decision = "reject"  // the tool does not run; the run continues
)

// RememberSession is the one value of Remember: later calls of the same
// tool in the same session run without asking (docs/design.md §10).
const RememberSession = "session"
