package askuser

import (
	"encoding/json"
	"time"
)

// Tool names the model sees. ToolAskUser is the seed's form (seed 000 §1);
// ToolAskUserBatch is AgentScope's batched multiple-choice tool (seed 003).
const (
	ToolAskUser      = "ask_user"
	ToolAskUserBatch = "AskUser"
)

// IsAskTool reports whether name is one of the two ask tools.
func IsAskTool(name string) bool { return name == ToolAskUser || name == ToolAskUserBatch }

// Mode decides which control the front end renders (seed 000 §1 "mode",
// §3 UserInputCard table). ModeQuestions is luban's mode for an AskUser batch.
type Mode string

// The modes of ask_user (seed 000 §1) plus ModeQuestions for AskUser (DESIGN §3).
const (
	ModeSingle    Mode = "single"    // radio: exactly one option id
	ModeMultiple  Mode = "multiple"  // checkboxes: zero or more option ids
	ModeText      Mode = "text"      // free text in customInput
	ModeNumber    Mode = "number"    // a decimal number in customInput
	ModeDate      Mode = "date"      // YYYY-MM-DD in customInput
	ModeDirectory Mode = "directory" // a workspace-relative path in customInput
	ModeToggle    Mode = "toggle"    // switches: at least one option id
	ModeQuestions Mode = "questions" // AskUser: 1–4 questions answered in Answer.Answers
)

// Option is one choice of an ask_user form (seed 000 §1 options[]). ID is the
// stable value programs branch on; Label and Description are display text.
type Option struct {
	ID          string `json:"id"`
	Label       string `json:"label"`
	Description string `json:"description,omitempty"`
	Recommended bool   `json:"recommended,omitempty"`
}

// QuestionOption is one choice of an AskUser question (AgentScope AskUser).
// Preview is shown beside the options of single-select questions only.
type QuestionOption struct {
	Label       string `json:"label"`
	Description string `json:"description"`
	Preview     string `json:"preview,omitempty"`
}

// Question is one question of an AskUser batch (AgentScope AskUser). Header is
// a chip of at most 12 characters; Context is what the user must look at.
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header"`
	Context     string           `json:"context,omitempty"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multi_select"`
}

// Prompt is a validated ask: the form part of an InputRequest, produced by
// ParseArgs from what the model sent (seed 000 §1 arguments, or AgentScope
// AskUser's questions). Tool is ToolAskUser or ToolAskUserBatch. For ask_user
// the fields are the tool's arguments; free-input modes carry nil Options.
// For AskUser, Mode is ModeQuestions, Questions holds the batch and Title is
// the first question's text (so every card has a title to show).
type Prompt struct {
	Tool        string     `json:"tool"`
	Title       string     `json:"title"`
	Description string     `json:"description,omitempty"`
	Mode        Mode       `json:"mode"`
	Options     []Option   `json:"options,omitempty"`
	AllowCustom bool       `json:"allowCustom,omitempty"`
	SubmitLabel string     `json:"submitLabel,omitempty"`
	Questions   []Question `json:"questions,omitempty"`
}

// InputRequest is the payload of the SSE event user_input_required and of
// GET /api/interactions/pending (DESIGN §3): the tool's arguments (the
// embedded Prompt, flattened into the same JSON object) plus the runtime
// fields of seed 000 §2. ID is the requestId the answer must name;
// ToolCallID ties it to the model's original call; CreatedAt and ExpiresAt
// are RFC 3339 in JSON. The page's minimal check (seed 000 §3) needs id,
// toolCallId, title and mode, which are therefore always present.
type InputRequest struct {
	ID         string `json:"id"`
	ToolCallID string `json:"toolCallId"`
	SessionID  string `json:"sessionId"`
	RunID      string `json:"runId"`
	Prompt
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	// Resumable is true when the paused run can be loaded and its agent
	// still exists (seed 000 §2, DESIGN §4).
	Resumable bool `json:"resumable"`
}

// QuestionAnswer is the answer to one AskUser question (AgentScope
// AskUserMetadata): the chosen option labels and the free "Other" text.
type QuestionAnswer struct {
	Question string   `json:"question"`
	Selected []string `json:"selected"`
	Other    string   `json:"other"`
}

// Answer is what a person sends to POST /api/chat/continue (seed 000 §2),
// less the sessionId and requestId. Selections are ask_user option ids;
// CustomInput is the free text (the value itself for text, number, date and
// directory; the "其他说明" note for choice modes with allowCustom);
// Cancelled true means the person declined and nothing else counts. Answers
// is used by AskUser only, one per question. ValidateAnswer checks it and
// returns the normalized form that AnsweredResult and Receipt carry.
type Answer struct {
	Selections  []string         `json:"selections"`
	CustomInput string           `json:"customInput"`
	Cancelled   bool             `json:"cancelled"`
	Answers     []QuestionAnswer `json:"answers,omitempty"`
}

// Status is how a request was resolved (DESIGN §3 Receipt.status).
type Status string

// Resolution statuses. StatusPending is the state before any of them.
const (
	StatusPending   Status = "pending"
	StatusAnswered  Status = "answered"
	StatusCancelled Status = "cancelled"
	StatusExpired   Status = "expired"
)

// Receipt is the read-only record of a resolved request that the UI turns a
// card into (seed 000 §6.3, DESIGN §3): the answer as accepted, or empty
// selections and customInput for cancelled and expired. It is also the body
// of the SSE event user_input_resolved and of a 409 already_resolved.
type Receipt struct {
	RequestID   string           `json:"requestId"`
	ToolCallID  string           `json:"toolCallId"`
	Status      Status           `json:"status"`
	Selections  []string         `json:"selections"`
	CustomInput string           `json:"customInput"`
	Answers     []QuestionAnswer `json:"answers,omitempty"`
	ResolvedAt  time.Time        `json:"resolvedAt"`
}

// ToolResult is what goes back to the model for the original tool call
// (DESIGN §3 "What the model gets back"). Content is the text the model
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
