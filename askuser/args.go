package askuser

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// ArgsError says what is wrong with the arguments a model sent, in one
// sentence the model can act on (docs/design.md §2 "Validating what the model sent").
// Path names the field in the arguments, e.g. "options[1].id" or
// "questions[0].header", and is empty when the whole arguments text is at
// fault; Rule is the broken rule, e.g. "duplicate of options[0].id".
// The run turns it into an error ToolResult and gives the model another turn.
type ArgsError struct {
	Path string
	Rule string
}

// Error returns Path + ": " + Rule, or just Rule when Path is empty.
func (e *ArgsError) Error() string {
	if e.Path == "" {
		return e.Rule
	}
	return e.Path + ": " + e.Rule
}

// ParseArgs validates what the model sent for tool (ToolAskUser or
// ToolAskUserBatch). raw is the tool call's arguments text exactly as the
// model produced it; it may be empty or invalid JSON.
//
// The arguments are first checked against the tool's JSON Schema (the
// documents of Definitions, validated by santhosh-tekuri/jsonschema), then
// against the rules a schema cannot express (issue 2 §2):
//   - ask_user (docs/design.md §A.1): title not blank; option ids non-blank, without
//     surrounding spaces and unique; labels non-blank and unique; single and
//     multiple need at least MinChoiceOptions options, toggle at least
//     MinToggleOptions, none more than MaxOptions; text, number, date and
//     directory take no options.
//   - AskUser (AgentScope AskUser): question texts non-blank and unique;
//     headers non-blank and at most MaxHeaderLen characters; 2–4 options with
//     non-blank labels unique within their question; no "Other" option (the UI
//     always offers one); no preview on a multi_select question.
//
// Every length is counted in characters (runes). One quirk of models in the
// wild is tolerated: a nested array sent as a JSON-encoded string
// ("options": "[{…}]", "questions": "[…]", and a question's "options") is
// decoded once; any other type mismatch, null included, is an error.
//
// On success ParseArgs returns the normalized Prompt: Tool is set, free-input
// modes carry nil Options, and for AskUser Mode is ModeQuestions and Title is
// the first question's text. On failure it returns a *ArgsError naming the
// first problem found (problems the schema finds are ordered by field path).
func ParseArgs(tool string, raw string) (*api.Prompt, error) {
	return parseArgs(tool, raw, true)
}

// parseArgs is ParseArgs; fast lets ask_user arguments of the common shape
// skip the schema path (decodeAskUser), which gives the same Prompt.
func parseArgs(tool string, raw string, fast bool) (*api.Prompt, error) {
	validator := validatorFor(tool)
	if validator == nil {
		return nil, &ArgsError{Rule: fmt.Sprintf("unknown tool %q: want %q or %q", tool, api.ToolAskUser, api.ToolAskUserBatch)}
	}
	if len(raw) > MaxArgsBytes {
		return nil, &ArgsError{Rule: fmt.Sprintf("arguments are too large: %d bytes, at most %d", len(raw), MaxArgsBytes)}
	}
	if strings.TrimSpace(raw) == "" {
		return nil, &ArgsError{Rule: "arguments are empty: send a JSON object matching the tool's schema"}
	}
	if fast && tool == api.ToolAskUser {
		if p, ok := decodeAskUser(raw); ok {
			return checkAskUser(p)
		}
	}
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		return nil, &ArgsError{Rule: "arguments are not valid JSON: " + err.Error()}
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, &ArgsError{Rule: "arguments must be a JSON object, got " + jsonType(doc)}
	}

	// The one tolerated quirk: nested arrays sent as JSON-encoded strings.
	switch tool {
	case api.ToolAskUser:
		if err := decodeEncodedArray(obj, "options", "options"); err != nil {
			return nil, err
		}
	case api.ToolAskUserBatch:
		if err := decodeEncodedArray(obj, "questions", "questions"); err != nil {
			return nil, err
		}
		if qs, ok := obj["questions"].([]any); ok {
			for i, q := range qs {
				if qm, ok := q.(map[string]any); ok {
					if err := decodeEncodedArray(qm, "options", fmt.Sprintf("questions[%d].options", i)); err != nil {
						return nil, err
					}
				}
			}
		}
	}

	if err := validator.Validate(obj); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, schemaArgsError(tool, ve)
		}
		return nil, &ArgsError{Rule: "arguments do not match the schema: " + err.Error()}
	}

	// What the schema accepted, encoded again: decoding the arguments as
	// sent would let a key given twice merge fields the schema never saw
	// (encoding/json decodes a repeated array or object into the first).
	normalized, err := json.Marshal(obj)
	if err != nil { // unreachable: obj came from JSON
		return nil, &ArgsError{Rule: "arguments cannot be re-encoded: " + err.Error()}
	}
	if tool == api.ToolAskUser {
		return parseAskUser(normalized)
	}
	return parseAskUserBatch(normalized)
}

// decodeEncodedArray replaces obj[key] by the array it encodes when it is a
// string holding a JSON array. A string that is not valid JSON is an error
// naming path; a string holding valid JSON that is not an array is left alone
// for the schema to reject as a type mismatch.
func decodeEncodedArray(obj map[string]any, key, path string) error {
	s, ok := obj[key].(string)
	if !ok {
		return nil
	}
	inner, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		return &ArgsError{Path: path, Rule: "not valid JSON inside the string: " + err.Error()}
	}
	if arr, ok := inner.([]any); ok {
		obj[key] = arr
	}
	return nil
}

// optionPath is options[i]'s path in an error (formatted only then).
func optionPath(i int) string { return fmt.Sprintf("options[%d]", i) }

func parseAskUser(normalized []byte) (*api.Prompt, error) {
	var p api.Prompt
	if err := json.Unmarshal(normalized, &p); err != nil { // unreachable after the schema
		return nil, &ArgsError{Rule: "arguments do not match the schema: " + err.Error()}
	}
	return checkAskUser(&p)
}

// checkAskUser applies the ask_user rules a schema cannot express to p,
// which the schema accepted, and normalizes it.
func checkAskUser(p *api.Prompt) (*api.Prompt, error) {
	p.Tool = api.ToolAskUser
	p.Questions = nil
	if isBlank(p.Title) {
		return nil, &ArgsError{Path: "title", Rule: "must not be blank"}
	}
	if p.Mode != api.ModeNumber {
		for _, b := range []struct {
			name string
			set  bool
		}{{"minimum", p.Minimum != nil}, {"maximum", p.Maximum != nil}, {"integer", p.Integer}} {
			if b.set {
				return nil, &ArgsError{Path: b.name, Rule: fmt.Sprintf("only mode number takes %s (mode is %s)", b.name, p.Mode)}
			}
		}
	}
	if p.Minimum != nil && p.Maximum != nil && *p.Minimum > *p.Maximum {
		return nil, &ArgsError{Path: "maximum", Rule: fmt.Sprintf("must not be less than minimum (%v < %v)", *p.Maximum, *p.Minimum)}
	}
	if p.Integer && p.Minimum != nil && p.Maximum != nil && math.Ceil(*p.Minimum) > math.Floor(*p.Maximum) {
		return nil, &ArgsError{Path: "maximum", Rule: fmt.Sprintf("no whole number lies between minimum %v and maximum %v", *p.Minimum, *p.Maximum)}
	}
	n := len(p.Options)
	switch p.Mode {
	case api.ModeText, api.ModeNumber, api.ModeDate, api.ModeDirectory:
		if n > 0 {
			return nil, &ArgsError{Path: "options", Rule: fmt.Sprintf("mode %s takes no options (got %d); use single, multiple or toggle to offer choices", p.Mode, n)}
		}
		p.Options = nil
	case api.ModeSingle, api.ModeMultiple:
		if n < MinChoiceOptions {
			return nil, &ArgsError{Path: "options", Rule: fmt.Sprintf("mode %s needs at least %d options, got %d", p.Mode, MinChoiceOptions, n)}
		}
	case api.ModeToggle:
		if n < MinToggleOptions {
			return nil, &ArgsError{Path: "options", Rule: fmt.Sprintf("mode %s needs at least %d option, got %d", p.Mode, MinToggleOptions, n)}
		}
	}
	ids := map[string]int{}
	labels := map[string]int{}
	for i, o := range p.Options {
		switch {
		case isBlank(o.ID):
			return nil, &ArgsError{Path: optionPath(i) + ".id", Rule: "must not be blank"}
		case strings.TrimSpace(o.ID) != o.ID:
			return nil, &ArgsError{Path: optionPath(i) + ".id", Rule: "must not start or end with spaces"}
		}
		if j, dup := ids[o.ID]; dup {
			return nil, &ArgsError{Path: optionPath(i) + ".id", Rule: fmt.Sprintf("duplicate of options[%d].id", j)}
		}
		ids[o.ID] = i
		label := strings.TrimSpace(o.Label)
		if isBlank(label) {
			return nil, &ArgsError{Path: optionPath(i) + ".label", Rule: "must not be blank"}
		}
		if j, dup := labels[label]; dup {
			return nil, &ArgsError{Path: optionPath(i) + ".label", Rule: fmt.Sprintf("duplicate of options[%d].label", j)}
		}
		labels[label] = i
	}
	return p, nil
}

func parseAskUserBatch(normalized []byte) (*api.Prompt, error) {
	var args struct {
		Questions []api.Question `json:"questions"`
	}
	if err := json.Unmarshal(normalized, &args); err != nil { // unreachable after the schema
		return nil, &ArgsError{Rule: "arguments do not match the schema: " + err.Error()}
	}
	texts := map[string]int{}
	for i, q := range args.Questions {
		qpath := fmt.Sprintf("questions[%d]", i)
		text := strings.TrimSpace(q.Question)
		if isBlank(text) {
			return nil, &ArgsError{Path: qpath + ".question", Rule: "must not be blank"}
		}
		if j, dup := texts[text]; dup {
			return nil, &ArgsError{Path: qpath + ".question", Rule: fmt.Sprintf("duplicate of questions[%d].question", j)}
		}
		texts[text] = i
		if isBlank(q.Header) {
			return nil, &ArgsError{Path: qpath + ".header", Rule: "must not be blank"}
		}
		labels := map[string]int{}
		for k, o := range q.Options {
			opath := fmt.Sprintf("%s.options[%d]", qpath, k)
			label := strings.TrimSpace(o.Label)
			if isBlank(label) {
				return nil, &ArgsError{Path: opath + ".label", Rule: "must not be blank"}
			}
			if isOtherLabel(label) {
				return nil, &ArgsError{Path: opath + ".label", Rule: "do not add an \"Other\" option: the user can always answer in their own words"}
			}
			if j, dup := labels[label]; dup {
				return nil, &ArgsError{Path: opath + ".label", Rule: fmt.Sprintf("duplicate of %s.options[%d].label", qpath, j)}
			}
			labels[label] = k
			if q.MultiSelect && o.Preview != "" {
				return nil, &ArgsError{Path: opath + ".preview", Rule: "preview is only supported on single-select questions (this one has multi_select: true)"}
			}
		}
	}
	return &api.Prompt{
		Tool:      api.ToolAskUserBatch,
		Title:     args.Questions[0].Question,
		Mode:      api.ModeQuestions,
		Questions: args.Questions,
	}, nil
}

// isOtherLabel reports whether label is a hand-made "Other" option, which
// AgentScope AskUser forbids because the UI always offers one.
func isOtherLabel(label string) bool {
	l := strings.ToLower(strings.TrimSpace(label))
	l = strings.TrimRight(l, " .:：…")
	switch l {
	case "other", "others", "something else", "其他", "其它", "其他选项", "其他情况":
		return true
	}
	return strings.HasPrefix(l, "other (") || strings.HasPrefix(l, "other:") || strings.HasPrefix(l, "其他（")
}

// schemaArgsError turns the validator's error tree into one ArgsError: the
// leaf errors are translated into model-readable rules and the first by field
// path is returned, so the message is deterministic.
func schemaArgsError(tool string, ve *jsonschema.ValidationError) *ArgsError {
	var found []*ArgsError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			found = append(found, translateSchemaError(tool, e)...)
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(found) == 0 {
		return &ArgsError{Rule: "arguments do not match the schema"}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].Path != found[j].Path {
			return found[i].Path < found[j].Path
		}
		return found[i].Rule < found[j].Rule
	})
	return found[0]
}

func translateSchemaError(tool string, e *jsonschema.ValidationError) []*ArgsError {
	loc := e.InstanceLocation
	path := fieldPath(loc)
	switch k := e.ErrorKind.(type) {
	case *kind.Type:
		if path == "" {
			return []*ArgsError{{Rule: "arguments must be a JSON object, got " + k.Got}}
		}
		rule := fmt.Sprintf("must be %s, got %s", withArticle(k.Want), k.Got)
		if k.Got == "null" && !isRequired(tool, loc) {
			rule += "; omit the field instead"
		}
		return []*ArgsError{{Path: path, Rule: rule}}
	case *kind.Required:
		var out []*ArgsError
		for _, m := range k.Missing {
			out = append(out, &ArgsError{Path: joinPath(path, m), Rule: "required but missing"})
		}
		return out
	case *kind.AdditionalProperties:
		allowed := allowedFields(tool, loc)
		var out []*ArgsError
		for _, p := range k.Properties {
			out = append(out, &ArgsError{Path: joinPath(path, p), Rule: "unknown field; allowed: " + strings.Join(allowed, ", ")})
		}
		return out
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = fmt.Sprint(w)
		}
		got, _ := json.Marshal(k.Got)
		return []*ArgsError{{Path: path, Rule: fmt.Sprintf("must be one of %s; got %s", strings.Join(want, ", "), got)}}
	case *kind.MinLength:
		if k.Want == 1 {
			return []*ArgsError{{Path: path, Rule: "must not be empty"}}
		}
		return []*ArgsError{{Path: path, Rule: fmt.Sprintf("too short: %d characters, at least %d", k.Got, k.Want)}}
	case *kind.MaxLength:
		return []*ArgsError{{Path: path, Rule: fmt.Sprintf("too long: %d characters, at most %d", k.Got, k.Want)}}
	case *kind.MinItems:
		return []*ArgsError{{Path: path, Rule: fmt.Sprintf("too few %s: got %d, at least %d", itemNoun(loc), k.Got, k.Want)}}
	case *kind.MaxItems:
		return []*ArgsError{{Path: path, Rule: fmt.Sprintf("too many %s: got %d, at most %d", itemNoun(loc), k.Got, k.Want)}}
	}
	return []*ArgsError{{Path: path, Rule: "does not match the schema (" + strings.Join(e.ErrorKind.KeywordPath(), "/") + ")"}}
}

// fieldPath renders JSON Pointer tokens as a field path: options[1].id.
// Every schema property name is a word, so an all-digit token is an index.
func fieldPath(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil && t != "" && t[0] != '-' && t[0] != '+' {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

// joinPath appends a property name to a field path, quoting names that are
// not plain words so an unknown field is always readable.
func joinPath(path, name string) string {
	if !isPlainName(name) {
		name = strconv.Quote(name)
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

func isPlainName(s string) bool {
	if s == "" || utf8.RuneCountInString(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	_, err := strconv.Atoi(s)
	return err != nil
}

// itemNoun names the items of the array at loc ("options", "questions").
func itemNoun(loc []string) string {
	if len(loc) == 0 {
		return "items"
	}
	return loc[len(loc)-1]
}

// isRequired reports whether the field at loc is required by its object.
func isRequired(tool string, loc []string) bool {
	if len(loc) == 0 {
		return true
	}
	parent := schemaAt(tool, loc[:len(loc)-1])
	if parent == nil {
		return false
	}
	for _, r := range parent.Required {
		if r == loc[len(loc)-1] {
			return true
		}
	}
	return false
}

// allowedFields lists the property names of the object schema at loc.
func allowedFields(tool string, loc []string) []string {
	s := schemaAt(tool, loc)
	if s == nil {
		return nil
	}
	names := make([]string, len(s.Properties))
	for i, p := range s.Properties {
		names[i] = p.Name
	}
	return names
}

// schemaAt returns the schema that applies at loc, or nil.
func schemaAt(tool string, loc []string) *jsonSchema {
	s := askUserSchema()
	if tool == api.ToolAskUserBatch {
		s = askUserBatchSchema()
	}
	for _, t := range loc {
		if s == nil {
			break
		}
		if s.Type == "array" {
			s = s.Items
			continue
		}
		var next *jsonSchema
		for _, p := range s.Properties {
			if p.Name == t {
				next = p.Schema
			}
		}
		s = next
	}
	return s
}

func withArticle(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "array", "object", "integer":
			words[i] = "an " + t
		default:
			words[i] = "a " + t
		}
	}
	return strings.Join(words, " or ")
}

// jsonType names the JSON type of a value decoded by jsonschema.UnmarshalJSON.
func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
