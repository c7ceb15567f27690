package askuser

// Size bounds of the two ask tools. Every length is counted in characters
// (runes). The original contract (docs/design.md §A) gives no numbers; these are luban's choice (issue 2 §2:
// "bounded string sizes"), large enough for any honest question and small
// enough that one card fits on a screen and one request fits in a log line.
// They also appear as maxLength/maxItems in the JSON Schema documents, so the
// model sees them before it calls.
const (
	// MaxArgsBytes bounds the raw arguments text of one call, in bytes
	// (256 KiB). Larger arguments are rejected before they are parsed.
	MaxArgsBytes = 256 << 10

	// MaxTitleLen bounds ask_user title (docs/design.md §A.1 "title").
	MaxTitleLen = 200
	// MaxDescriptionLen bounds ask_user description (docs/design.md §A.1 "description").
	MaxDescriptionLen = 2000
	// MaxOptionIDLen bounds an ask_user option id, the stable submitted value
	// (docs/design.md §A.1 options[].id).
	MaxOptionIDLen = 64
	// MaxLabelLen bounds an option label in both tools.
	MaxLabelLen = 200
	// MaxOptionDescriptionLen bounds an option description in both tools.
	MaxOptionDescriptionLen = 1000
	// MaxSubmitLabelLen bounds ask_user submitLabel, a button caption
	// (docs/design.md §A.1 "submitLabel").
	MaxSubmitLabelLen = 40
	// MaxOptions is the most options an ask_user request may carry.
	MaxOptions = 20
	// MinChoiceOptions is the fewest options of a single or multiple request:
	// a choice between fewer than two things is not a choice.
	MinChoiceOptions = 2
	// MinToggleOptions is the fewest options of a toggle request (one switch).
	MinToggleOptions = 1

	// MinQuestions and MaxQuestions bound an AskUser batch (AgentScope
	// AskUser: "You may batch 1–4 questions").
	MinQuestions = 1
	MaxQuestions = 4
	// MinQuestionOptions and MaxQuestionOptions bound the options of one
	// AskUser question (AgentScope AskUser: "2–4 options").
	MinQuestionOptions = 2
	MaxQuestionOptions = 4
	// MaxQuestionLen bounds the text of one AskUser question.
	MaxQuestionLen = 500
	// MaxHeaderLen bounds an AskUser header chip (AgentScope AskUser: at most
	// 12 characters).
	MaxHeaderLen = 12
	// MaxContextLen bounds AskUser context, the draft, diff or error the user
	// must look at to answer.
	MaxContextLen = 8000
	// MaxPreviewLen bounds an AskUser option preview (code, ASCII mockup).
	MaxPreviewLen = 8000

	// MaxCustomInput bounds what a person may type: ask_user customInput and
	// each AskUser "other" text (issue 2 §3: at most 8,000 characters).
	MaxCustomInput = 8000
)
