package askuser

import (
	"bytes"
	"encoding/json"

	"github.com/lubanhq/luban/api"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Definition is a tool as registered: the model-facing name, description and
// JSON Schema, plus the flags AgentScope gives its AskUser tool (docs/design.md §B:
// is_read_only, is_concurrency_safe, is_external_tool). Both ask tools set
// all three flags: asking changes nothing, two asks do not interfere, and only
// whatever drives the agent (the server and its page) can put a question in
// front of a person, so the runtime pauses instead of executing anything.
type Definition struct {
	// Name is ToolAskUser or ToolAskUserBatch.
	Name string
	// Description is the text the model reads to decide when and how to call.
	Description string
	// Parameters is the JSON Schema document of the arguments; the same bytes
	// as schemas/<Name>.json in the repository.
	Parameters json.RawMessage
	// ReadOnly: the tool changes nothing outside the conversation.
	ReadOnly bool
	// ConcurrencySafe: calls may be issued together in one assistant message.
	ConcurrencySafe bool
	// External: the call is answered by the caller's front end, not executed.
	External bool
}

// NeedsPermission always reports false: the call is answered by the user in
// the first place, so a confirmation in front of it would be a prompt about a
// prompt (AgentScope AskUser.check_permissions: "never asks to ask"). args is
// ignored.
func (d Definition) NeedsPermission(args json.RawMessage) bool { return false }

// The model-facing descriptions. ask_user keeps docs/design.md §A.1's Chinese text and
// adds English; AskUser carries AgentScope's usage rules in luban's own words.
const (
	askUserDescription = "当任务缺少必要信息时发起结构化追问。" +
		"支持 single、multiple、text、number、date、directory、toggle；" +
		"收到用户结果后继续任务。\n\n" +
		"Ask the user a structured question when the task lacks information you need. " +
		"The run pauses until the user answers in a form. Pick the mode that fits: " +
		"single (exactly one option), multiple (any number of options, possibly none), " +
		"toggle (at least one option switched on), or the free-input modes text, number, " +
		"date (YYYY-MM-DD) and directory (a path relative to the workspace), which take no options. " +
		"Option ids are stable values you branch on; labels are display text. " +
		"Set allowCustom to let the user also write an answer of their own.\n\n" +
		"You get back JSON: {\"selections\": [option ids], \"customInput\": \"text the user wrote\", " +
		"\"cancelled\": false}, with the chosen labels beside the ids. " +
		"If the user cancels, the task stops; do not ask the same question again."

	askUserBatchDescription = "Ask the user one to four multiple-choice questions at once, to gather " +
		"requirements, resolve an ambiguity, learn a preference or settle a decision before you go on. " +
		"The run pauses until the user answers.\n\n" +
		"Rules:\n" +
		"- Put related questions in one call (1–4 questions) instead of asking one after another.\n" +
		"- Every question has 2–4 options. Question texts are unique in the call; option labels are unique in their question.\n" +
		"- The user can always answer \"Other\" in their own words, so never add an \"Other\" option yourself.\n" +
		"- Set multi_select to true only when the options are not mutually exclusive.\n" +
		"- To recommend an option, put it first and end its label with \"(Recommended)\".\n" +
		"- preview shows a concrete artifact (code, an ASCII mockup, a config) beside the options; use it only when seeing it helps the choice, and only on single-select questions.\n" +
		"- Whatever the user must look at to answer (a draft, a diff, an error) goes in context, not in the question text.\n" +
		"- header is a short chip of at most 12 characters, e.g. \"Database\".\n\n" +
		"What comes back: a short text listing each question with the chosen labels and any \"Other\" text, " +
		"written for you to read, and the same answers as metadata {\"answers\": [{\"question\", \"selected\": [labels], \"other\"}]} for programs. " +
		"If the user cancels, the task stops; do not ask again."
)

var (
	askUserDoc      = schemaDocument(askUserSchema())
	askUserBatchDoc = schemaDocument(askUserBatchSchema())

	askUserValidator      = compileSchema(api.ToolAskUser, askUserDoc)
	askUserBatchValidator = compileSchema(api.ToolAskUserBatch, askUserBatchDoc)
)

// AskUserDefinition returns the ask_user tool: docs/design.md §A.1's schema
// (title, description, mode, options[{id, label, description, recommended}],
// allowCustom, submitLabel; title and mode required) with §A.1's Chinese
// descriptions plus English, and the size bounds of limits.go.
func AskUserDefinition() Definition {
	return Definition{
		Name:            api.ToolAskUser,
		Description:     askUserDescription,
		Parameters:      bytes.Clone(askUserDoc),
		ReadOnly:        true,
		ConcurrencySafe: true,
		External:        true,
	}
}

// AskUserBatchDefinition returns the AskUser tool: AgentScope's batched form
// (docs/design.md §B) with questions[1..4] of {question, header (≤12 characters),
// context?, options[2..4] of {label, description, preview?}, multi_select?}
// and a model-facing description in luban's words carrying the same rules.
func AskUserBatchDefinition() Definition {
	return Definition{
		Name:            api.ToolAskUserBatch,
		Description:     askUserBatchDescription,
		Parameters:      bytes.Clone(askUserBatchDoc),
		ReadOnly:        true,
		ConcurrencySafe: true,
		External:        true,
	}
}

// Definitions returns both ask tools, ask_user first. Each call returns fresh
// copies; callers may modify them.
func Definitions() []Definition {
	return []Definition{AskUserDefinition(), AskUserBatchDefinition()}
}

// DefinitionFor returns the definition of tool (ToolAskUser or
// ToolAskUserBatch); ok is false for any other name.
func DefinitionFor(tool string) (Definition, bool) {
	switch tool {
	case api.ToolAskUser:
		return AskUserDefinition(), true
	case api.ToolAskUserBatch:
		return AskUserBatchDefinition(), true
	}
	return Definition{}, false
}

// validatorFor returns the compiled schema of tool, or nil.
func validatorFor(tool string) *jsonschema.Schema {
	switch tool {
	case api.ToolAskUser:
		return askUserValidator
	case api.ToolAskUserBatch:
		return askUserBatchValidator
	}
	return nil
}
