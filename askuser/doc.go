// Package askuser is luban's human-in-the-loop contract: the two ask tools a
// model sees, the validation of what the model sent and of what a person
// answered, the ToolResult each outcome produces, and the audit summary of an
// answer. It performs no I/O except one: a directory answer is checked
// against the workspace on disk (ValidateAnswer with ModeDirectory), because
// only the file system knows where a symbolic link points.
//
// Two dialects share the package:
//
//   - ask_user (ToolAskUser) is the form of the user's own system, docs/design.md §A.1:
//     a title, a mode (single, multiple, text, number, date, directory,
//     toggle), options with stable ids, allowCustom and submitLabel. The model
//     gets back {"selections": [...ids], "customInput": "...", "cancelled": false}.
//   - AskUser (ToolAskUserBatch) is AgentScope's batched multiple-choice tool,
//     docs/design.md §B: one to four questions with two to four labelled options each,
//     an automatic "Other" answer, multi_select, preview and context. The model
//     gets back a readable output plus metadata {"answers": [...]}.
//
// The flow, as docs/design.md §2–3 describe it:
//
//	ParseArgs(tool, rawArguments)      → *Prompt, or *ArgsError for an error ToolResult
//	ValidateAnswer(prompt, answer, …)  → normalized Answer, or *AnswerError for a 422
//	AnsweredResult / CancelledResult / ExpiredResult → the ToolResult of the original call
//	Summarize(prompt, answer)          → what the audit log may keep (never free text)
//
// FallbackResult is docs/design.md §A.1's ask_user_fallback for runtimes with no
// interactive front end. The JSON Schema documents of both tools are also
// kept in the repository's schemas/ directory for programs in other languages;
// a test fails when those files drift from Definitions.
//
// Every length in this package is counted in characters (Unicode code points,
// i.e. runes), never in bytes, exactly as JSON Schema's maxLength counts them.
package askuser
