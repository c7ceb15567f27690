package approval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/internal/schemac"
	"github.com/lubanhq/luban/internal/schemaerr"
)

// MaxMessageLen bounds Answer.Message, in characters (like
// askuser.MaxCustomInput).
const MaxMessageLen = askuser.MaxCustomInput

// Answer is the body of POST /api/chat/continue for an approval, less
// sessionId and requestId (docs/design.md §10): {decision, arguments?, message?,
// remember?} or {cancelled: true}. AnswerOf takes it from the wire body.
type Answer struct {
	Decision  api.Decision    `json:"decision,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Message   string          `json:"message,omitempty"`
	Remember  string          `json:"remember,omitempty"`
	Cancelled bool            `json:"cancelled,omitempty"`
}

// AnswerOf returns the approval part of a continue body.
func AnswerOf(c api.ContinueRequest) Answer {
	return Answer{Decision: c.Decision, Arguments: c.Arguments, Message: c.Message, Remember: c.Remember, Cancelled: c.Cancelled}
}

// ValidateAnswer checks a person's answer against the prompt they were shown
// and returns it normalized. On failure the error is an *askuser.AnswerError
// (422 invalid_answer with details; nothing is consumed and the request
// stays pending), with fields named as in the body: "decision",
// "arguments", "arguments.path" (a field of the edited arguments),
// "message", "remember".
//
//   - Cancelled: nothing else is looked at; the result is {cancelled: true}.
//   - approve: no arguments; remember may be "session".
//   - edit: arguments is required, a JSON object valid under the prompt's
//     ArgumentsSchema (draft 2020-12), at most MaxArgumentsBytes; it is
//     returned compact. remember may be "session".
//   - reject: no arguments, no remember; message is optional.
//
// message is allowed with reject only, at most MaxMessageLen characters.
func ValidateAnswer(p *api.Prompt, a Answer) (Answer, error) {
	if a.Cancelled {
		return Answer{Cancelled: true}, nil
	}
	var details []api.FieldError
	add := func(field string, code api.FieldCode, params map[string]any, format string, args ...any) {
		details = append(details, api.FieldError{Field: field, Code: code, Params: params, Message: fmt.Sprintf(format, args...)})
	}
	hasArgs := len(bytes.TrimSpace(a.Arguments)) > 0 && string(bytes.TrimSpace(a.Arguments)) != "null"
	out := Answer{Decision: a.Decision, Remember: a.Remember}
	switch a.Decision {
	case api.DecisionApprove, api.DecisionReject:
		if hasArgs {
			add("arguments", api.DetailNotAllowed, nil, "arguments go with the decision edit; %s runs the call as the model sent it or not at all", a.Decision)
		}
	case api.DecisionEdit:
		if !hasArgs {
			add("arguments", api.DetailRequired, nil, "edit needs the new arguments, a JSON object")
			break
		}
		args, ds, err := checkArguments(p.ArgumentsSchema, a.Arguments, false)
		if err != nil {
			add("arguments", api.DetailInvalid, nil, "the tool's schema cannot be used: %v", err)
			break
		}
		details = append(details, ds...)
		out.Arguments = args
	case "":
		add("decision", api.DetailRequired, map[string]any{"allowed": decisions}, "choose approve, edit or reject (or send cancelled: true)")
	default:
		add("decision", api.DetailEnum, map[string]any{"allowed": decisions}, "%q is not a decision: choose approve, edit or reject", clip(string(a.Decision)))
	}
	switch a.Remember {
	case "":
	case api.RememberSession:
		if a.Decision == api.DecisionReject {
			add("remember", api.DetailNotAllowed, nil, `remember approves later calls; it does not go with reject`)
		}
	default:
		add("remember", api.DetailEnum, map[string]any{"allowed": []string{api.RememberSession}}, `%q: the only value is "session"`, clip(a.Remember))
	}
	if a.Message != "" {
		switch {
		case a.Decision != api.DecisionReject:
			add("message", api.DetailNotAllowed, nil, "a message goes with reject")
		case utf8.RuneCountInString(a.Message) > MaxMessageLen:
			n := utf8.RuneCountInString(a.Message)
			add("message", api.DetailTooLong, map[string]any{"max": MaxMessageLen, "got": n, "unit": "characters"}, "too long: %d characters, at most %d", n, MaxMessageLen)
		default:
			out.Message = a.Message
		}
	}
	if len(details) > 0 {
		return Answer{}, &askuser.AnswerError{Details: details}
	}
	return out, nil
}

// checkArguments parses raw (empty means {} when emptyIsObject) as a JSON
// object of at most MaxArgumentsBytes and validates it against schema
// (empty: any object). It returns the compact object, or details naming
// "arguments" and "arguments.<field path>" in field order. The error is
// for a schema that does not compile.
func checkArguments(schema, raw json.RawMessage, emptyIsObject bool) (json.RawMessage, []api.FieldError, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 && emptyIsObject {
		raw = json.RawMessage("{}")
	}
	if len(raw) > MaxArgumentsBytes {
		return nil, []api.FieldError{{Field: "arguments", Code: api.DetailTooLong, Params: map[string]any{"max": MaxArgumentsBytes, "got": len(raw), "unit": "bytes"},
			Message: fmt.Sprintf("too large: %d bytes, at most %d", len(raw), MaxArgumentsBytes)}}, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, []api.FieldError{{Field: "arguments", Code: api.DetailInvalidJSON, Message: "not valid JSON: " + err.Error()}}, nil
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, []api.FieldError{{Field: "arguments", Code: api.DetailInvalidType, Params: map[string]any{"expected": "object"}, Message: "must be a JSON object"}}, nil
	}
	sch, err := compile(schema)
	if err != nil {
		return nil, nil, err
	}
	if err := sch.Validate(doc); err != nil {
		ve, ok := err.(*jsonschema.ValidationError)
		if !ok {
			return nil, []api.FieldError{{Field: "arguments", Code: api.DetailInvalid, Message: err.Error()}}, nil
		}
		return nil, schemaerr.Fields(ve, "arguments", "unknown field: the tool's schema does not allow it"), nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil { // unreachable: raw parsed above
		return nil, nil, err
	}
	return compact.Bytes(), nil, nil
}

// compile compiles a tool's schema with nothing loaded (schemac): the
// schema of an MCP server's tool comes from outside luban.
func compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	return schemac.Compile(schema, schemac.Options{})
}

// decisions are the values of an approval's decision, as a detail's
// allowed param.
var decisions = []string{string(api.DecisionApprove), string(api.DecisionEdit), string(api.DecisionReject)}

func clip(s string) string {
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}
