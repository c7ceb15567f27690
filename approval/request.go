package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
)

// MaxArgumentsBytes bounds the arguments of a call put in front of a person,
// and of an edit (256 KiB, like askuser.MaxArgsBytes).
const MaxArgumentsBytes = 256 << 10

// ArgsError is returned by NewPrompt when the model's arguments cannot be
// put in front of a person: not a JSON object, too large, or not valid under
// the tool's schema. Its text is for the model (an error ToolResult, then
// the model's next turn, as for invalid ask arguments: docs/design.md §2).
type ArgsError struct {
	Tool string
	Msg  string
}

// Error is "invalid arguments for <tool>: <what>".
func (e *ArgsError) Error() string { return "invalid arguments for " + e.Tool + ": " + e.Msg }

// NewPrompt builds the Prompt for a call of the tool described by spec with
// the model's raw arguments (empty means {}). The arguments are validated
// against spec.Parameters first, so a person is never asked to approve a
// call the tool would refuse; the error is then an *ArgsError. A schema that
// does not compile is an error too (a tool defect, not the model's).
func NewPrompt(spec model.ToolSpec, arguments string) (*api.Prompt, error) {
	args, details, err := checkArguments(spec.Parameters, json.RawMessage(arguments), true)
	if err != nil {
		return nil, fmt.Errorf("approval: tool %s: %w", spec.Name, err)
	}
	if len(details) > 0 {
		parts := make([]string, len(details))
		for i, d := range details {
			parts[i] = strings.TrimPrefix(strings.TrimPrefix(d.Field, "arguments"), ".")
			if parts[i] == "" {
				parts[i] = d.Message
			} else {
				parts[i] += ": " + d.Message
			}
		}
		return nil, &ArgsError{Tool: spec.Name, Msg: strings.Join(parts, "; ")}
	}
	schema := spec.Parameters
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		return nil, fmt.Errorf("approval: tool %s: schema: %w", spec.Name, err)
	}
	return &api.Prompt{Tool: api.ToolApproval, Mode: api.ModeApproval, Title: "Run " + spec.Name + "?", ToolName: spec.Name,
		Description: spec.Description, Arguments: args, ArgumentsSchema: compact.Bytes()}, nil
}

// DecodeRequest decodes a stored approval InputRequest (the JSON that the
// run persisted) and checks that it is one.
func DecodeRequest(b []byte) (*api.InputRequest, error) {
	var r api.InputRequest
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.Tool != api.ToolApproval {
		return nil, errors.New("approval: the stored request is not an approval")
	}
	return &r, nil
}
