// Package schemaerr turns a JSON Schema validation error into the field
// errors of a 422 answer (api.FieldError), the same way for every schema
// luban checks answers against: a tool's arguments (docs/design.md §10) and an MCP
// elicitation's requestedSchema (docs/design.md §11); and an encoding/json decoding
// error of a request body into the field error of a 400 (Decode).
package schemaerr

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/lubanhq/luban/api"
)

var printer = message.NewPrinter(language.English)

// Fields lists the leaf errors of ve, one FieldError each, sorted by field
// then message so the order is deterministic. A field is root followed by the
// instance location ("arguments.a.b[2]"); a missing required property is
// named below its object (code required, message "required but missing"),
// and a property the schema does not allow likewise (code unknown_field,
// message unknown). A oneOf/anyOf of consts none of which matched (a titled
// enum) is one enum detail listing them all (titledEnum). Every other
// keyword is coded by Code.
func Fields(ve *jsonschema.ValidationError, root, unknown string) []api.FieldError {
	var out []api.FieldError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if en, ok := titledEnum(e); ok {
			code, params := Code(en)
			out = append(out, api.FieldError{Field: Path(root, e.InstanceLocation), Code: code, Params: params, Message: en.LocalizedString(printer)})
			return
		}
		if len(e.Causes) == 0 {
			field := Path(root, e.InstanceLocation)
			switch k := e.ErrorKind.(type) {
			case *kind.Required:
				for _, m := range k.Missing {
					out = append(out, api.FieldError{Field: field + "." + m, Code: api.DetailRequired, Message: "required but missing"})
				}
			case *kind.AdditionalProperties:
				for _, m := range k.Properties {
					out = append(out, api.FieldError{Field: field + "." + m, Code: api.DetailUnknownField, Message: unknown})
				}
			default:
				code, params := Code(e.ErrorKind)
				out = append(out, api.FieldError{Field: field, Code: code, Params: params, Message: e.ErrorKind.LocalizedString(printer)})
			}
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Field != out[j].Field {
			return out[i].Field < out[j].Field
		}
		return out[i].Message < out[j].Message
	})
	return out
}

// titledEnum reports whether e is a oneOf or anyOf none of whose branches
// matched and every branch of which is a const at e's instance location
// (MCP's titled enum, {"oneOf": [{"const": "now", "title": "Now"}, …]}), and
// returns it as the one enum error it means, its allowed values in the
// schema's order: one detail {allowed: [all]}, not one per branch.
func titledEnum(e *jsonschema.ValidationError) (*kind.Enum, bool) {
	switch k := e.ErrorKind.(type) {
	case *kind.OneOf:
		if k.Subschemas != nil {
			return nil, false
		}
	case *kind.AnyOf:
	default:
		return nil, false
	}
	if len(e.Causes) == 0 {
		return nil, false
	}
	en := &kind.Enum{}
	for _, c := range e.Causes {
		for len(c.Causes) == 1 {
			c = c.Causes[0]
		}
		k, ok := c.ErrorKind.(*kind.Const)
		if !ok || len(c.Causes) != 0 || !slices.Equal(c.InstanceLocation, e.InstanceLocation) {
			return nil, false
		}
		en.Got = k.Got
		en.Want = append(en.Want, k.Want)
	}
	return en, true
}

// Code maps a JSON Schema keyword's error to its FieldCode and params:
//
//	type                     invalid_type {expected (first of the allowed types), got}
//	enum, const              enum {allowed}
//	format                   format {format}
//	minLength / maxLength    too_short {min, got, unit characters} / too_long {max, got, unit characters}
//	minItems / maxItems      too_few / too_many {min|max, got, unit items}
//	minProperties / max…     too_few / too_many {min|max, got, unit properties}
//	minimum / maximum        out_of_range {min} / {max}
//	exclusiveMinimum / max…  out_of_range {exclusiveMin} / {exclusiveMax}
//	multipleOf               not_multiple {multipleOf}
//	pattern                  pattern {pattern}
//	uniqueItems              duplicate {of: the index of the first copy}
//	required, dependentRequired  required
//	additionalProperties, false schema  unknown_field
//
// Any other keyword (not, oneOf without a failing branch, contains, ...) is
// invalid with no params. Numbers are float64; strings are clipped to 60
// characters.
func Code(k jsonschema.ErrorKind) (api.FieldCode, map[string]any) {
	switch k := k.(type) {
	case *kind.Type:
		p := map[string]any{"got": k.Got}
		if len(k.Want) > 0 {
			p["expected"] = k.Want[0]
		}
		return api.DetailInvalidType, p
	case *kind.Enum:
		return api.DetailEnum, map[string]any{"allowed": clipValues(k.Want)}
	case *kind.Const:
		return api.DetailEnum, map[string]any{"allowed": clipValues([]any{k.Want})}
	case *kind.Format:
		return api.DetailFormat, map[string]any{"format": k.Want}
	case *kind.MinLength:
		return api.DetailTooShort, map[string]any{"min": k.Want, "got": k.Got, "unit": "characters"}
	case *kind.MaxLength:
		return api.DetailTooLong, map[string]any{"max": k.Want, "got": k.Got, "unit": "characters"}
	case *kind.MinItems:
		return api.DetailTooFew, map[string]any{"min": k.Want, "got": k.Got, "unit": "items"}
	case *kind.MaxItems:
		return api.DetailTooMany, map[string]any{"max": k.Want, "got": k.Got, "unit": "items"}
	case *kind.MinProperties:
		return api.DetailTooFew, map[string]any{"min": k.Want, "got": k.Got, "unit": "properties"}
	case *kind.MaxProperties:
		return api.DetailTooMany, map[string]any{"max": k.Want, "got": k.Got, "unit": "properties"}
	case *kind.Minimum:
		return api.DetailOutOfRange, map[string]any{"min": num(k.Want)}
	case *kind.Maximum:
		return api.DetailOutOfRange, map[string]any{"max": num(k.Want)}
	case *kind.ExclusiveMinimum:
		return api.DetailOutOfRange, map[string]any{"exclusiveMin": num(k.Want)}
	case *kind.ExclusiveMaximum:
		return api.DetailOutOfRange, map[string]any{"exclusiveMax": num(k.Want)}
	case *kind.MultipleOf:
		return api.DetailNotMultiple, map[string]any{"multipleOf": num(k.Want)}
	case *kind.Pattern:
		return api.DetailPattern, map[string]any{"pattern": clip(k.Want)}
	case *kind.UniqueItems:
		return api.DetailDuplicate, map[string]any{"of": k.Duplicates[0]}
	case *kind.Required, *kind.DependentRequired, *kind.Dependency:
		return api.DetailRequired, nil
	case *kind.AdditionalProperties, *kind.FalseSchema:
		return api.DetailUnknownField, nil
	}
	return api.DetailInvalid, nil
}

func num(r *big.Rat) float64 {
	if r == nil {
		return 0
	}
	f, _ := r.Float64()
	return f
}

// clipValues clips the strings among vs for a detail's params.
func clipValues(vs []any) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		if s, ok := v.(string); ok {
			v = clip(s)
		}
		out[i] = v
	}
	return out
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= 60 {
		return s
	}
	return string([]rune(s)[:60]) + "…"
}

// Path renders a JSON Pointer's tokens below root: "root.a.b[2]" (a token of
// digits only is an array index).
func Path(root string, loc []string) string {
	var b strings.Builder
	b.WriteString(root)
	for _, t := range loc {
		if t != "" && strings.Trim(t, "0123456789") == "" {
			b.WriteString("[" + t + "]")
			continue
		}
		b.WriteString("." + t)
	}
	return b.String()
}

// Decode is the FieldError of an encoding/json decoding error of a body or
// value named root ("" for a request body): a field the target does not have
// (Decoder.DisallowUnknownFields) is unknown_field; a value of the wrong JSON
// type is invalid_type {expected, got} at its field path ("body must be a
// JSON object" for the whole body); anything else (syntax, truncation,
// trailing data) is invalid_json. Messages name JSON types, never Go types.
func Decode(err error, root string) api.FieldError {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te):
		field := join(root, te.Field)
		want := jsonKind(te.Type)
		got := te.Value
		if i := strings.IndexByte(got, ' '); i > 0 { // "number -1"
			got = got[:i]
		}
		if got == "bool" {
			got = "boolean"
		}
		subject := field
		if subject == "" {
			subject = "body"
		}
		return api.FieldError{Field: field, Code: api.DetailInvalidType, Params: map[string]any{"expected": want, "got": got},
			Message: fmt.Sprintf("%s must be a JSON %s, not %s", subject, want, got)}
	case errors.As(err, &se):
		return api.FieldError{Field: root, Code: api.DetailInvalidJSON, Params: map[string]any{"offset": se.Offset},
			Message: fmt.Sprintf("not valid JSON at byte %d: %s", se.Offset, se.Error())}
	case errors.Is(err, io.EOF):
		return api.FieldError{Field: root, Code: api.DetailInvalidJSON, Message: "empty: a JSON object is needed"}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return api.FieldError{Field: root, Code: api.DetailInvalidJSON, Message: "not valid JSON: it ends before the value does"}
	}
	if name, ok := unknownField(err); ok {
		return api.FieldError{Field: join(root, name), Code: api.DetailUnknownField, Message: "unknown field"}
	}
	return api.FieldError{Field: root, Code: api.DetailInvalidJSON, Message: "not valid JSON: " + strings.TrimPrefix(err.Error(), "json: ")}
}

// unknownField is the field name of encoding/json's error for a field the
// target does not have (Decoder.DisallowUnknownFields): `json: unknown
// field "x"`. encoding/json has no typed error for it.
func unknownField(err error) (string, bool) {
	const prefix = "json: unknown field "
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		return "", false
	}
	name, uerr := strconv.Unquote(msg[len(prefix):])
	if uerr != nil {
		return "", false
	}
	return name, true
}

func join(root, field string) string {
	switch {
	case root == "":
		return field
	case field == "":
		return root
	}
	return root + "." + field
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "value"
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "value"
}

// BodyTooLarge is the field error of a 413 payload_too_large for a request
// body over its bound of max bytes: field "" (the whole body), too_long,
// params {max, unit: "bytes"} and got when the client declared the body's
// size (contentLength > max; the body itself is not read past the bound).
func BodyTooLarge(max, contentLength int64) api.FieldError {
	params := map[string]any{"max": max, "unit": "bytes"}
	if contentLength > max {
		params["got"] = contentLength
	}
	return api.FieldError{Field: "", Code: api.DetailTooLong, Params: params, Message: fmt.Sprintf("the request body is larger than %d bytes", max)}
}
