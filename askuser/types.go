package askuser

import (
	"encoding/json"

	"github.com/lubanhq/luban/api"
)

// Tool names the model sees. ToolAskUser is the original contract's form (docs/design.md §A.1);
// ToolAskUserBatch is AgentScope's batched multiple-choice tool (docs/design.md §B).
const (
	ToolAskUser      = api.ToolAskUser
	ToolAskUserBatch = api.ToolAskUserBatch
)

// IsAskTool reports whether name is one of the two ask tools.
func IsAskTool(name string) bool { return name == ToolAskUser || name == ToolAskUserBatch }

// The wire types of the contract live in the leaf package api (docs/design.md §3),
// so the server, the Go client and the generated TypeScript share one
// definition; askuser names them too, because they are its vocabulary.
type (
	// Mode decides which control the front end renders (docs/design.md §A.1).
	Mode = api.Mode
	// Option is one choice of an ask_user form (docs/design.md §A.1 options[]).
	Option = api.Option
	// QuestionOption is one choice of an AskUser question.
	QuestionOption = api.QuestionOption
	// Question is one question of an AskUser batch.
	Question = api.Question
	// Prompt is a validated ask, produced by ParseArgs from what the model
	// sent: the form part of an InputRequest.
	Prompt = api.Prompt
	// InputRequest is the payload of user_input_required (docs/design.md §3).
	InputRequest = api.InputRequest
	// QuestionAnswer is the answer to one AskUser question.
	QuestionAnswer = api.QuestionAnswer
	// Answer is what a person sends to POST /api/chat/continue, less the
	// sessionId and requestId. ValidateAnswer checks it and returns the
	// normalized form that AnsweredResult and Receipt carry.
	Answer = api.Answer
	// Status is how a request was resolved (docs/design.md §3 Receipt.status).
	Status = api.Status
	// Receipt is the read-only record of a resolved request (docs/design.md §A.6.3).
	Receipt = api.Receipt
)

// The modes of ask_user (docs/design.md §A.1) plus ModeQuestions for AskUser (docs/design.md §3).
const (
	ModeSingle    = api.ModeSingle    // radio: exactly one option id
	ModeMultiple  = api.ModeMultiple  // checkboxes: zero or more option ids
	ModeText      = api.ModeText      // free text in customInput
	ModeNumber    = api.ModeNumber    // a decimal number in customInput
	ModeDate      = api.ModeDate      // YYYY-MM-DD in customInput
	ModeDirectory = api.ModeDirectory // a workspace-relative path in customInput
	ModeToggle    = api.ModeToggle    // switches: at least one option id
	ModeQuestions = api.ModeQuestions // AskUser: 1–4 questions answered in Answer.Answers
)

// Resolution statuses. StatusPending is the state before any of them.
const (
	StatusPending   = api.StatusPending
	StatusAnswered  = api.StatusAnswered
	StatusCancelled = api.StatusCancelled
	StatusExpired   = api.StatusExpired
)

// ToolResult is what goes back to the model for the original tool call
// (docs/design.md §3 "What the model gets back"). Content is the text the model
// reads: for ask_user the JSON {"selections", "customInput", "cancelled"};
// for AskUser a readable output. IsError marks a result the model must treat
// as a failure (invalid arguments, FallbackResult). Metadata (AskUser only)
// is the machine-readable answer object {"answers": [...]} (AgentScope
// AskUser AskUserMetadata).
type ToolResult struct {
	Content  string          `json:"content"`
	IsError  bool            `json:"isError"`
	Metadata json.RawMessage `json:"metadata,omitempty"`
}
