package api

import "encoding/json"

// ToolElicitation is the Prompt.Tool of an MCP server's elicitation that
// luban, as an MCP client, puts in front of a person (docs/design.md §11).
const ToolElicitation = "elicitation"

// The modes of an elicitation (docs/design.md §11): a form derived from the
// server's requestedSchema, or a URL the person opens themselves.
const (
	ModeForm Mode = "form" // fields answered in ContinueRequest.Content
	ModeURL  Mode = "url"  // the person visits Prompt.URL, then accepts or declines
)

// The decisions of an elicitation (docs/design.md §11), MCP's accept and decline
// actions. MCP's cancel is ContinueRequest.Cancelled.
const (
	DecisionAccept  Decision = "accept"  // form: Content holds the values; url: the person is done
	DecisionDecline Decision = "decline" // the person refuses; nothing else counts
)

// FieldType is the control of one form field (docs/design.md §11), derived from its
// property in requestedSchema: string, number, integer, boolean, date (a
// string of format date, YYYY-MM-DD), enum (one of Options) and multi (an
// array of Options).
type FieldType string

// The field types of a form elicitation (docs/design.md §11).
const (
	FieldString  FieldType = "string"
	FieldNumber  FieldType = "number"
	FieldInteger FieldType = "integer"
	FieldBoolean FieldType = "boolean"
	FieldDate    FieldType = "date"
	FieldEnum    FieldType = "enum"
	FieldMulti   FieldType = "multi"
)

// FieldOption is one choice of an enum or multi field: Value is what the
// answer carries (the schema's enum value or oneOf const), Label the
// display text (its title, else the value).
type FieldOption struct {
	Value string `json:"value"`
	Label string `json:"label"`
}

// FormField is one property of a form elicitation's requestedSchema, as the
// card renders it (docs/design.md §11). Name is the property name (the key in
// ContinueRequest.Content); Title and Description are display text.
// Bounds: Minimum/Maximum for number and integer; MinLength/MaxLength (in
// characters) and Format ("email", "uri", "date-time") for string;
// MinItems/MaxItems for multi. Default is the schema's default value, any
// JSON, absent when it has none.
type FormField struct {
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	Type        FieldType       `json:"type"`
	Required    bool            `json:"required"`
	Options     []FieldOption   `json:"options,omitempty"`
	Minimum     *float64        `json:"minimum,omitempty"`
	Maximum     *float64        `json:"maximum,omitempty"`
	MinLength   *int            `json:"minLength,omitempty"`
	MaxLength   *int            `json:"maxLength,omitempty"`
	Format      string          `json:"format,omitempty"`
	MinItems    *int            `json:"minItems,omitempty"`
	MaxItems    *int            `json:"maxItems,omitempty"`
	Default     json.RawMessage `json:"default,omitempty"`
}

// StatusNotResumable is the Receipt.Status of an elicitation an MCP server
// asked inside its session (not as a 2026-07-28 input_required result)
// when luban restarted before the answer: nobody can take the answer any
// more, so the request is closed and the tool call gets an error result
// saying so (docs/design.md §11). A continue for it is 410 not_resumable.
const StatusNotResumable Status = "not_resumable"
