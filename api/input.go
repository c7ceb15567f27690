package api

import (
	"encoding/json"
	"time"
)

// The names of the two ask tools a model can call (docs/design.md §2), the values of
// Prompt.Tool. ToolAskUser is the original contract's form (docs/design.md §A.1);
// ToolAskUserBatch is AgentScope's batched multiple-choice tool (docs/design.md §B).
const (
	ToolAskUser      = "ask_user"
	ToolAskUserBatch = "AskUser"
)

// Mode decides which control the front end renders (docs/design.md §A.1 "mode",
// §3 UserInputCard table). ModeQuestions is luban's mode for an AskUser batch.
type Mode string

// The modes of ask_user (docs/design.md §A.1) plus ModeQuestions for AskUser (docs/design.md §3).
const (
	ModeSingle    Mode = "single"    // radio: exactly one option id
	ModeMultiple  Mode = "multiple"  // checkboxes: zero or more option ids
	ModeText      Mode = "text"      // free text in customInput
	ModeNumber    Mode = "number"    // a decimal number in customInput
	ModeDate      Mode = "date"      // YYYY-MM-DD in customInput
	ModeDirectory Mode = "directory" // a workspace-relative path in customInput
	ModeToggle    Mode = "toggle"    // switches: at least one option id
	ModeQuestions Mode = "questions" // AskUser: 1–4 questions answered in answers
)

// Option is one choice of an ask_user form (docs/design.md §A.1 options[]). ID is the
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
// a chip of at most 12 characters; Context is what the user must look at;
// Options holds 2–4 choices (the UI adds "Other" itself).
type Question struct {
	Question    string           `json:"question"`
	Header      string           `json:"header"`
	Context     string           `json:"context,omitempty"`
	Options     []QuestionOption `json:"options"`
	MultiSelect bool             `json:"multi_select"`
}

// Prompt is a validated ask: the form part of an InputRequest (docs/design.md §A.1
// arguments, or AgentScope AskUser's questions). Tool is ToolAskUser or
// ToolAskUserBatch. For ask_user the fields are the tool's arguments;
// free-input modes carry no options. For AskUser, Mode is ModeQuestions,
// Questions holds the batch and Title is the first question's text (so every
// card has a title to show).
type Prompt struct {
	Tool        string   `json:"tool"`
	Title       string   `json:"title"`
	Description string   `json:"description,omitempty"`
	Mode        Mode     `json:"mode"`
	Options     []Option `json:"options,omitempty"`
	AllowCustom bool     `json:"allowCustom,omitempty"`
	SubmitLabel string   `json:"submitLabel,omitempty"`
	// Minimum, Maximum and Integer bound an ask_user number answer (mode
	// number only): customInput must be at least Minimum, at most Maximum,
	// and a whole number when Integer; an answer beyond them is refused
	// (FieldError out_of_range, or format "integer") and the question stays
	// pending.
	Minimum   *float64   `json:"minimum,omitempty"`
	Maximum   *float64   `json:"maximum,omitempty"`
	Integer   bool       `json:"integer,omitempty"`
	Questions []Question `json:"questions,omitempty"`
	// ToolName, Arguments and ArgumentsSchema are set for an approval (Tool
	// ToolApproval, Mode ModeApproval, docs/design.md §10): the tool the model
	// called, its arguments (a JSON object) and the tool's JSON Schema;
	// Description is then the tool's description.
	ToolName        string          `json:"toolName,omitempty"`
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	ArgumentsSchema json.RawMessage `json:"argumentsSchema,omitempty"`
	// Server, RequestedSchema, Fields and URL are set for an MCP server's
	// elicitation (Tool ToolElicitation, docs/design.md §11): the MCP server's
	// name in the config; for ModeForm the schema as the server sent it and
	// the fields derived from it; for ModeURL the URL the person may open
	// (Title is then the server's message).
	Server          string          `json:"server,omitempty"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	Fields          []FormField     `json:"fields,omitempty"`
	URL             string          `json:"url,omitempty"`
}

// InputRequest is the payload of the SSE event user_input_required and of
// GET /api/interactions/pending (docs/design.md §3): the tool's arguments (the
// embedded Prompt, flattened into the same JSON object) plus the runtime
// fields of docs/design.md §A.2. ID is the requestId the answer must name;
// ToolCallID ties it to the model's original call; CreatedAt and ExpiresAt
// are RFC 3339. The page's minimal check (docs/design.md §A.3) needs id, toolCallId,
// title and mode, which are therefore always present.
type InputRequest struct {
	ID         string `json:"id"`
	ToolCallID string `json:"toolCallId"`
	SessionID  string `json:"sessionId"`
	RunID      string `json:"runId"`
	Prompt
	CreatedAt time.Time `json:"createdAt"`
	ExpiresAt time.Time `json:"expiresAt"`
	// Resumable is true when the paused run can be loaded and its agent
	// still exists (docs/design.md §A.2, §4); the page shows
	// "服务已重启，请重新发起任务" instead of the form when it is false.
	Resumable bool `json:"resumable"`
	// Source names who asked when it was not the session's own model: an
	// MCP host calling luban's ask_user (docs/design.md §11). Absent for a model's
	// question.
	Source *InputSource `json:"source,omitempty"`
	// Assignees are the people who may answer, in the order the route
	// names them (docs/design.md §16); absent when no route assigned the
	// request: the session's owner answers it.
	Assignees []Actor `json:"assignees,omitempty"`
	// WaitingFor says whom a pending request still waits for; absent when
	// no route assigned it.
	WaitingFor *WaitingFor `json:"waitingFor,omitempty"`
}

// Actor is a person who decides, or may decide, a request (docs/design.md
// §16): ID is their principal (a person's id of people:, a token's
// principal without people:, or "timeout" for a deadline), Name the name
// people read (the id when there is none).
type Actor struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// WaitingFor is whom a pending request waits for (docs/design.md §16),
// the data of "waiting for finance (1 of 2 approved)": Names are the
// route's assignees as people read them (a group's id, a person's name, in
// the route's order); Awaiting are the assignees who have not decided yet;
// Quorum is the number of approvals an approval needs (1 without a quorum,
// and for other kinds) and Approvals those given so far, oldest first.
type WaitingFor struct {
	Names     []string `json:"names"`
	Awaiting  []Actor  `json:"awaiting"`
	Quorum    int      `json:"quorum"`
	Approvals []Actor  `json:"approvals"`
}

// ActorDecision is one person's decision on an approval that needed a
// quorum (docs/design.md §16): Decision approve or reject, At when.
type ActorDecision struct {
	By       Actor     `json:"by"`
	Decision Decision  `json:"decision"`
	At       time.Time `json:"at"`
}

// InputSource is where a question came from (docs/design.md §11): Kind is
// SourceMCP for a call to luban's MCP server, Client and ClientVersion are
// the calling host's clientInfo.name and clientInfo.version as it sent
// them (display text, possibly empty; a host could claim any name).
type InputSource struct {
	Kind          string `json:"kind"`
	Client        string `json:"client"`
	ClientVersion string `json:"clientVersion,omitempty"`
}

// SourceMCP is InputSource.Kind for a question an MCP host asked through
// POST /mcp (docs/design.md §11).
const SourceMCP = "mcp"

// QuestionAnswer is the answer to one AskUser question (AgentScope
// AskUserMetadata): the chosen option labels and the free "Other" text.
type QuestionAnswer struct {
	Question string   `json:"question"`
	Selected []string `json:"selected"`
	Other    string   `json:"other"`
}

// Answer is what a person sends to POST /api/chat/continue (docs/design.md §A.2),
// less the sessionId and requestId. Selections are ask_user option ids;
// CustomInput is the free text (the value itself for text, number, date and
// directory; the "其他说明" note for choice modes with allowCustom);
// Cancelled true means the person declined and nothing else counts. Answers
// is used by AskUser only, one per question.
type Answer struct {
	Selections  []string         `json:"selections"`
	CustomInput string           `json:"customInput"`
	Cancelled   bool             `json:"cancelled"`
	Answers     []QuestionAnswer `json:"answers,omitempty"`
}

// Status is how a request stands (docs/design.md §3 Receipt.status): pending until
// it is answered, cancelled or expired, each exactly once.
type Status string

// Request statuses. A Receipt never carries StatusPending.
const (
	StatusPending   Status = "pending"
	StatusAnswered  Status = "answered"
	StatusCancelled Status = "cancelled"
	StatusExpired   Status = "expired"
)

// Receipt is the read-only record of a resolved request that the UI turns a
// card into (docs/design.md §A.6.3, §3): the answer as accepted, or empty
// selections and customInput for cancelled and expired. It is the payload of
// the SSE event user_input_resolved, the body of a 202 continue and the
// receipt of a 409 already_resolved or 410 interaction_expired.
type Receipt struct {
	RequestID   string           `json:"requestId"`
	ToolCallID  string           `json:"toolCallId"`
	Status      Status           `json:"status"`
	Selections  []string         `json:"selections"`
	CustomInput string           `json:"customInput"`
	Answers     []QuestionAnswer `json:"answers,omitempty"`
	// Decision, Arguments, Message and Remember are an approval's answer
	// (docs/design.md §10): the decision; the edited arguments (edit only); the
	// reject's message; "session" when later calls of the tool in this
	// session run without asking. Empty for ask tools and for cancelled
	// and expired approvals.
	Decision  Decision        `json:"decision,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Message   string          `json:"message,omitempty"`
	Remember  string          `json:"remember,omitempty"`
	// Content is an accepted form elicitation's values (docs/design.md §11), a
	// JSON object keyed by field name; absent otherwise.
	Content    json.RawMessage `json:"content,omitempty"`
	ResolvedAt time.Time       `json:"resolvedAt"`
	// Signature is the signed form of this decision (docs/design.md §17):
	// a compact JWS (alg EdDSA, typ "luban-receipt+jws") whose payload is
	// a ReceiptClaims, verifiable against GET /.well-known/luban/keys or
	// offline with `luban verify`. Absent when the server signs nothing or
	// the request was resolved before signing existed.
	Signature string `json:"signature,omitempty"`
	// By is who resolved the request (docs/design.md §16): the person who
	// answered, decided or cancelled it, {"id":"timeout","name":"timeout"}
	// for a deadline; absent when nobody is named (a run that ended).
	By *Actor `json:"by,omitempty"`
	// Decisions are every decision of an approval that needed a quorum,
	// in the order they were made; absent otherwise.
	Decisions []ActorDecision `json:"decisions,omitempty"`
}

// FieldError is one problem of a rejected answer (422 invalid_answer
// details, docs/design.md §3) or of a malformed body (400 invalid_request details).
// Field is a JSON path into the body at fault: "selections",
// "selections[1]", "customInput", "answers", "answers[0].selected",
// "answers[1].other", "arguments.path", "content.email"; "" is the body as a
// whole. Code names the problem (a FieldCode, stable) and Params holds the
// numbers and strings a client needs to word it in its own language (each
// FieldCode lists its keys); Message says the same in an English sentence a
// person can act on, the fallback for a client that does not know Code.
type FieldError struct {
	Field   string         `json:"field"`
	Code    FieldCode      `json:"code,omitempty"`
	Params  map[string]any `json:"params,omitempty"`
	Message string         `json:"message"`
}
