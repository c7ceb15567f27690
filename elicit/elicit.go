// Package elicit turns an MCP server's elicitation (docs/design.md §11) into the
// prompt of an InputRequest (tool "elicitation", mode form or url) and
// checks a person's answer to it. It is pure: no I/O, no state.
//
// A form's fields are derived from its requestedSchema, the restricted
// JSON Schema of MCP elicitation (a flat object of primitive properties):
// string (minLength, maxLength, format email|uri|date|date-time; "date"
// becomes field type date), number and integer (minimum, maximum), boolean,
// single-select enums (enum, enum + enumNames, oneOf of const/title) and
// multi-select enums (an array whose items hold enum or anyOf of
// const/title; minItems, maxItems). The answer's content is validated
// against the requestedSchema itself (JSON Schema draft 2020-12), not
// against the derived fields.
package elicit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/internal/schemac"
	"github.com/lubanhq/luban/internal/schemaerr"
	"github.com/lubanhq/luban/tool"
)

// MaxSchemaBytes bounds a requestedSchema; MaxContentBytes an answer's
// content; MaxMessageBytes the server's message and MaxURLBytes a url
// elicitation's URL (docs/design.md §13): a larger one is refused with an
// error back to the server, and nothing is asked.
const (
	MaxSchemaBytes  = 64 << 10
	MaxContentBytes = 64 << 10
	MaxMessageBytes = 16 << 10
	MaxURLBytes     = 8 << 10
	// MaxTitleRunes bounds the title shown (the server's message is kept
	// whole in Description when longer).
	MaxTitleRunes = 200
)

// CheckSize refuses an elicitation whose message, url or requestedSchema
// is larger than MaxMessageBytes, MaxURLBytes or MaxSchemaBytes, whatever
// its mode: nothing of it is kept or asked.
func CheckSize(e tool.Elicitation) error {
	switch {
	case len(e.Message) > MaxMessageBytes:
		return fmt.Errorf("the message is larger than %d bytes (%d)", MaxMessageBytes, len(e.Message))
	case len(e.URL) > MaxURLBytes:
		return fmt.Errorf("the url is larger than %d bytes (%d)", MaxURLBytes, len(e.URL))
	case len(e.RequestedSchema) > MaxSchemaBytes:
		return fmt.Errorf("requestedSchema is larger than %d bytes", MaxSchemaBytes)
	}
	return nil
}

// Prompt is the prompt of e's InputRequest. A form whose requestedSchema is
// not a flat object MCP allows is an error (the server gets it back as the
// elicitation's error; nothing is asked).
func Prompt(e tool.Elicitation) (*api.Prompt, error) {
	p := &api.Prompt{Tool: api.ToolElicitation, Server: e.Server}
	if err := CheckSize(e); err != nil {
		return nil, err
	}
	msg := strings.TrimSpace(e.Message)
	if msg == "" {
		msg = "The MCP server " + e.Server + " asks for input"
	}
	p.Title = msg
	if utf8.RuneCountInString(msg) > MaxTitleRunes {
		p.Title = string([]rune(msg)[:MaxTitleRunes]) + "…"
		p.Description = msg
	}
	switch e.Mode {
	case "url":
		if e.URL == "" {
			return nil, errors.New("a url elicitation without a url")
		}
		if !strings.HasPrefix(e.URL, "https://") && !strings.HasPrefix(e.URL, "http://") {
			return nil, fmt.Errorf("url %q is not an http or https URL", clip(e.URL))
		}
		p.Mode, p.URL = api.ModeURL, e.URL
		return p, nil
	case "form", "":
		p.Mode = api.ModeForm
		schema := e.RequestedSchema
		if len(bytes.TrimSpace(schema)) == 0 || string(schema) == "null" {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		if len(schema) > MaxSchemaBytes {
			return nil, fmt.Errorf("requestedSchema is larger than %d bytes", MaxSchemaBytes)
		}
		fields, err := Fields(schema)
		if err != nil {
			return nil, err
		}
		if _, err := compile(schema); err != nil {
			return nil, fmt.Errorf("requestedSchema: %w", err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, schema); err != nil {
			return nil, err
		}
		p.RequestedSchema, p.Fields = compact.Bytes(), fields
		return p, nil
	}
	return nil, fmt.Errorf("unsupported elicitation mode %q", e.Mode)
}

type prop struct {
	Type        any             `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
	Enum        []any           `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []constTitle    `json:"oneOf"`
	AnyOf       []constTitle    `json:"anyOf"`
	Items       *prop           `json:"items"`
	Default     json.RawMessage `json:"default"`
}

type constTitle struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// Fields derives the form fields of a requestedSchema in the order its
// properties are written, except that required fields come first. (The Go
// SDK hands a server's requestedSchema to the client as a map, which loses
// the written order: such a schema arrives sorted by name, so its form
// shows the required fields, then the others by name.)
func Fields(schema json.RawMessage) ([]api.FormField, error) {
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("requestedSchema is not a JSON object: %v", err)
	}
	if top.Type != "object" {
		return nil, errors.New(`requestedSchema must have "type": "object"`)
	}
	names, raws, err := orderedObject(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("requestedSchema.properties: %v", err)
	}
	req := map[string]bool{}
	for _, n := range top.Required {
		req[n] = true
	}
	out := make([]api.FormField, 0, len(names))
	for i, name := range names {
		var p prop
		if err := json.Unmarshal(raws[i], &p); err != nil {
			return nil, fmt.Errorf("requestedSchema.properties.%s: %v", name, err)
		}
		f, err := field(name, p)
		if err != nil {
			return nil, fmt.Errorf("requestedSchema.properties.%s: %v", name, err)
		}
		f.Required = req[name]
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Required && !out[j].Required })
	return out, nil
}

func field(name string, p prop) (api.FormField, error) {
	f := api.FormField{Name: name, Title: p.Title, Description: p.Description}
	if f.Title == "" {
		f.Title = name
	}
	if len(p.Default) > 0 && string(p.Default) != "null" {
		f.Default = p.Default
	}
	typ, _ := p.Type.(string)
	switch typ {
	case "string":
		switch {
		case len(p.OneOf) > 0:
			f.Type = api.FieldEnum
			for _, o := range p.OneOf {
				v := fmt.Sprint(o.Const)
				f.Options = append(f.Options, api.FieldOption{Value: v, Label: or(o.Title, v)})
			}
		case len(p.Enum) > 0:
			f.Type = api.FieldEnum
			for i, e := range p.Enum {
				v := fmt.Sprint(e)
				label := v
				if i < len(p.EnumNames) && p.EnumNames[i] != "" {
					label = p.EnumNames[i]
				}
				f.Options = append(f.Options, api.FieldOption{Value: v, Label: label})
			}
		case p.Format == "date":
			f.Type = api.FieldDate
		default:
			f.Type = api.FieldString
			f.Format = p.Format
			f.MinLength, f.MaxLength = p.MinLength, p.MaxLength
		}
	case "number", "integer":
		f.Type = api.FieldNumber
		if typ == "integer" {
			f.Type = api.FieldInteger
		}
		f.Minimum, f.Maximum = p.Minimum, p.Maximum
	case "boolean":
		f.Type = api.FieldBoolean
	case "array":
		if p.Items == nil {
			return f, errors.New("an array needs items with enum or anyOf (a multi-select)")
		}
		f.Type = api.FieldMulti
		f.MinItems, f.MaxItems = p.MinItems, p.MaxItems
		opts := p.Items.AnyOf
		if len(opts) == 0 {
			opts = p.Items.OneOf
		}
		for _, o := range opts {
			v := fmt.Sprint(o.Const)
			f.Options = append(f.Options, api.FieldOption{Value: v, Label: or(o.Title, v)})
		}
		for _, e := range p.Items.Enum {
			v := fmt.Sprint(e)
			f.Options = append(f.Options, api.FieldOption{Value: v, Label: v})
		}
		if len(f.Options) == 0 {
			return f, errors.New("a multi-select needs items with enum or anyOf")
		}
	default:
		return f, fmt.Errorf("type %v is not one MCP elicitation allows (string, number, integer, boolean, array of enum)", p.Type)
	}
	return f, nil
}

// orderedObject returns the keys and raw values of a JSON object in the
// order written (an absent or null object is empty).
func orderedObject(raw json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	t, err := dec.Token()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not an object")
	}
	var names []string
	var vals []json.RawMessage
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		if seen[k] {
			return nil, nil, fmt.Errorf("property %q appears twice", k)
		}
		seen[k] = true
		names, vals = append(names, k), append(vals, v)
	}
	return names, vals, nil
}

// Answer is a person's answer to an elicitation (docs/design.md §11): Decision
// accept (Content: a form's values) or decline; Cancelled is MCP's cancel
// and nothing else counts.
type Answer struct {
	Decision  api.Decision    `json:"decision,omitempty"`
	Content   json.RawMessage `json:"content,omitempty"`
	Cancelled bool            `json:"cancelled,omitempty"`
}

// Action is MCP's action for a: "accept", "decline" or "cancel".
func (a Answer) Action() string {
	switch {
	case a.Cancelled:
		return "cancel"
	case a.Decision == api.DecisionAccept:
		return "accept"
	}
	return "decline"
}

// ValidateAnswer checks a against the prompt p it answers and returns it
// normalized (content compact, in the order written, a negative zero
// written as 0). On failure the error is an
// *askuser.AnswerError (422 invalid_answer, nothing consumed) whose fields
// are "decision", "content" or "content.<name>":
//   - cancelled: nothing else is looked at;
//   - decline: no content;
//   - accept of a form: content is required, a JSON object valid under
//     requestedSchema, at most MaxContentBytes;
//   - accept of a url: no content.
func ValidateAnswer(p *api.Prompt, a Answer) (Answer, error) {
	if a.Cancelled {
		return Answer{Cancelled: true}, nil
	}
	bad := func(field string, code api.FieldCode, params map[string]any, msg string) error {
		return &askuser.AnswerError{Details: []api.FieldError{{Field: field, Code: code, Params: params, Message: msg}}}
	}
	decisions := map[string]any{"allowed": []string{string(api.DecisionAccept), string(api.DecisionDecline)}}
	hasContent := len(bytes.TrimSpace(a.Content)) > 0 && string(bytes.TrimSpace(a.Content)) != "null"
	switch a.Decision {
	case api.DecisionDecline:
		if hasContent {
			return Answer{}, bad("content", api.DetailNotAllowed, nil, "a decline carries no content")
		}
		return Answer{Decision: api.DecisionDecline}, nil
	case api.DecisionAccept:
	case "":
		return Answer{}, bad("decision", api.DetailRequired, decisions, `required: "accept" or "decline" (or cancelled: true)`)
	default:
		return Answer{}, bad("decision", api.DetailEnum, decisions, fmt.Sprintf("%q is neither \"accept\" nor \"decline\"", clip(string(a.Decision))))
	}
	if p.Mode == api.ModeURL {
		if hasContent {
			return Answer{}, bad("content", api.DetailNotAllowed, nil, "a url elicitation's accept carries no content")
		}
		return Answer{Decision: api.DecisionAccept}, nil
	}
	if !hasContent {
		return Answer{}, bad("content", api.DetailRequired, nil, "required: the form's values as a JSON object")
	}
	if len(a.Content) > MaxContentBytes {
		return Answer{}, bad("content", api.DetailTooLong, map[string]any{"max": MaxContentBytes, "got": len(a.Content), "unit": "bytes"}, fmt.Sprintf("too large: %d bytes, at most %d", len(a.Content), MaxContentBytes))
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(a.Content))
	if err != nil {
		return Answer{}, bad("content", api.DetailInvalidJSON, nil, "not valid JSON: "+err.Error())
	}
	if _, ok := doc.(map[string]any); !ok {
		return Answer{}, bad("content", api.DetailInvalidType, map[string]any{"expected": "object"}, "must be a JSON object")
	}
	sch, err := compile(p.RequestedSchema)
	if err != nil {
		return Answer{}, bad("content", api.DetailInvalid, nil, "the request's schema cannot be used: "+err.Error())
	}
	if err := sch.Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return Answer{}, bad("content", api.DetailInvalid, nil, err.Error())
		}
		return Answer{}, &askuser.AnswerError{Details: schemaerr.Fields(ve, "content", "unknown field: the form has no such field")}
	}
	names, vals, err := orderedObject(a.Content)
	if err != nil {
		// The one way a JSON object that validated fails here: a name
		// written twice (JSON Schema sees only one of the values).
		return Answer{}, bad("content", api.DetailDuplicate, nil, err.Error())
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(name)
		out.Write(k)
		out.WriteByte(':')
		if err := json.Compact(&out, positiveZero(vals[i])); err != nil {
			return Answer{}, bad("content", api.DetailInvalidJSON, nil, err.Error())
		}
	}
	out.WriteByte('}')
	return Answer{Decision: api.DecisionAccept, Content: out.Bytes()}, nil
}

// positiveZero writes a negative zero (-0, -0.0, -0e3) as the same number
// without its sign: JSON Schema counts -0 as the integer 0, so it passes
// "integer" and "minimum: 0", and the server it goes to must not see a
// sign the person never meant. Every other value is returned as it is.
func positiveZero(v json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(v)
	if len(t) < 2 || t[0] != '-' {
		return v
	}
	if f, err := strconv.ParseFloat(string(t), 64); err == nil && f == 0 {
		return t[1:]
	}
	return v
}

// Result is the MCP ElicitResult of a validated answer.
func Result(a Answer) tool.ElicitAnswer {
	out := tool.ElicitAnswer{Action: a.Action()}
	if out.Action == "accept" && len(a.Content) > 0 {
		_ = json.Unmarshal(a.Content, &out.Content)
	}
	return out
}

// compile compiles a requestedSchema with nothing loaded (schemac): the
// formats MCP names (email, uri, date, date-time) are checked, as a form's
// control would.
func compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	return schemac.Compile(schema, schemac.Options{AssertFormat: true})
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// CallSuffix joins the model's call id and an elicitation's number in the
// tool_call_id of the interaction row of an elicitation (docs/design.md §11):
// a call may elicit more than once, while receipts and events name the
// model's call.
const CallSuffix = "#elicit-"

// ModelCallID is the model's call id of an elicitation row's tool_call_id
// (the part before CallSuffix; the whole id when there is none).
func ModelCallID(rowCall string) string {
	id, _, _ := strings.Cut(rowCall, CallSuffix)
	return id
}
