// Package schemaerr turns a JSON Schema validation error into the field
// errors of a 422 answer (askuser.FieldError), the same way for every schema
// luban checks answers against: a tool's arguments (DESIGN §10) and an MCP
// elicitation's requestedSchema (DESIGN §11).
package schemaerr

import (
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/lubanhq/luban/askuser"
)

var printer = message.NewPrinter(language.English)

// Fields lists the leaf errors of ve, one FieldError each, sorted by field
// then message so the order is deterministic. A field is root followed by the
// instance location ("arguments.a.b[2]"); a missing required property is
// named below its object with "required but missing", and a property the
// schema does not allow with the message unknown.
func Fields(ve *jsonschema.ValidationError, root, unknown string) []askuser.FieldError {
	var out []askuser.FieldError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			field := Path(root, e.InstanceLocation)
			switch k := e.ErrorKind.(type) {
			case *kind.Required:
				for _, m := range k.Missing {
					out = append(out, askuser.FieldError{Field: field + "." + m, Message: "required but missing"})
				}
			case *kind.AdditionalProperties:
				for _, m := range k.Properties {
					out = append(out, askuser.FieldError{Field: field + "." + m, Message: unknown})
				}
			default:
				out = append(out, askuser.FieldError{Field: field, Message: e.ErrorKind.LocalizedString(printer)})
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
