package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// Front-end tools (docs/design.md §21 "Front-end tools"): the tools an AG-UI
// client offers for one run (RunAgentInput.tools; CopilotKit's
// useFrontendTool and useHumanInTheLoop). They are stored with the user
// message that starts the run, so every model call of the run offers them,
// also after a restart. The model's call to one is an interaction of kind
// "frontend-tool": persisted before it is announced, answered once by the
// application (AG-UI: a tool message in the next RunAgentInput, or a
// resume; anywhere else: customInput), and its answer is the call's
// ToolResult.
const (
	// MaxFrontendTools bounds the front-end tools of one run.
	MaxFrontendTools = 64
	// MaxFrontendToolsBytes bounds their names, descriptions and
	// parameter schemas together, in bytes.
	MaxFrontendToolsBytes = 256 << 10
	// MaxFrontendResult bounds a front-end tool's result, in characters.
	MaxFrontendResult = 64 << 10
)

// frontendToolName is what a front-end tool's name must match (the tool
// names every model provider accepts).
var frontendToolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// userMetadata is the metadata of a stored user message: the front-end
// tools of the run it started.
type userMetadata struct {
	FrontendTools []model.ToolSpec `json:"frontendTools,omitempty"`
}

// frontendMetadata checks tools and returns the user message's metadata that
// stores them (nil when there are none). A tool named like one of the
// registry (the agent's own tools, the ask tools) is left out: the agent's
// tool wins. A tool without parameters takes none. Errors:
// *RequestFieldError naming "tools[i]…" (400), *PayloadTooLargeError (413).
func (r *Runner) frontendMetadata(tools []model.ToolSpec) (json.RawMessage, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	if len(tools) > MaxFrontendTools {
		return nil, fieldRequest("tools", api.DetailTooMany, map[string]any{"max": MaxFrontendTools, "got": len(tools)},
			fmt.Sprintf("at most %d front-end tools", MaxFrontendTools))
	}
	size := 0
	seen := map[string]bool{}
	var keep []model.ToolSpec
	for i, t := range tools {
		if !frontendToolName.MatchString(t.Name) {
			return nil, fieldRequest(fmt.Sprintf("tools[%d].name", i), api.DetailPattern, map[string]any{"pattern": frontendToolName.String()},
				"a tool name is 1 to 64 characters of A-Z, a-z, 0-9, _ and -")
		}
		params := bytes.TrimSpace(t.Parameters)
		if len(params) == 0 || string(params) == "null" {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		} else if params[0] != '{' || !json.Valid(params) {
			return nil, fieldRequest(fmt.Sprintf("tools[%d].parameters", i), api.DetailInvalidType, map[string]any{"expected": "object"},
				"parameters must be a JSON Schema object")
		}
		size += len(t.Name) + len(t.Description) + len(params)
		if seen[t.Name] || r.registered(t.Name) {
			continue
		}
		seen[t.Name] = true
		keep = append(keep, model.ToolSpec{Name: t.Name, Description: t.Description, Parameters: params})
	}
	if size > MaxFrontendToolsBytes {
		return nil, textTooLong("tools", size, MaxFrontendToolsBytes)
	}
	if len(keep) == 0 {
		return nil, nil
	}
	return mustJSON(userMetadata{FrontendTools: keep}), nil
}

// runFrontendTools is the front-end tools of run runID: those stored with
// the user message that started it.
func runFrontendTools(msgs []*store.Message, runID string) []model.ToolSpec {
	for _, m := range msgs {
		if m.RunID != runID || m.Role != "user" {
			continue
		}
		if len(m.Metadata) == 0 {
			return nil
		}
		var md userMetadata
		if json.Unmarshal(m.Metadata, &md) != nil {
			return nil
		}
		return md.FrontendTools
	}
	return nil
}

// frontendSpec is the front-end tool of tools named name, nil when none is.
func frontendSpec(tools []model.ToolSpec, name string) *model.ToolSpec {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	return nil
}

// withFrontend is the model's tools for a call: the agent's, then the run's
// front-end tools.
func withFrontend(specs, frontend []model.ToolSpec) []model.ToolSpec {
	if len(frontend) == 0 {
		return specs
	}
	return append(specs[:len(specs):len(specs)], frontend...)
}

// frontendPrompt is the question that call c of front-end tool spec puts to
// the application.
func frontendPrompt(spec *model.ToolSpec, c model.ToolCall) *api.Prompt {
	return &api.Prompt{Tool: api.ToolFrontend, Title: spec.Name, Description: spec.Description, Mode: api.ModeText,
		ToolName: spec.Name, Arguments: json.RawMessage(c.Arguments), ArgumentsSchema: spec.Parameters}
}

// frontendKind is a front-end tool call (docs/design.md §21): the answer's
// customInput is the call's ToolResult, verbatim, and the run resumes;
// everything else (a cancel, an expiry, a timeout) is applied as an ask's.
type frontendKind struct{ askKind }

func (frontendKind) name() string { return "frontend-tool" }

func (frontendKind) validate(_ context.Context, _ *Runner, _ *answering, b api.ContinueRequest, by string) (resolution, error) {
	if b.Cancelled {
		return resolution{status: api.StatusCancelled, answer: api.Answer{Selections: []string{}, Cancelled: true}, by: by}, nil
	}
	if err := approvalFieldsOnAsk(approval.AnswerOf(b)); err != nil {
		return resolution{}, err
	}
	if len(b.Selections) > 0 || len(b.Answers) > 0 {
		field := "selections"
		if len(b.Selections) == 0 {
			field = "answers"
		}
		return resolution{}, &askuser.AnswerError{Details: []api.FieldError{{Field: field, Code: api.DetailConflictWithKind,
			Message: "a front-end tool is answered with customInput, the tool's result"}}}
	}
	if n := utf8.RuneCountInString(b.CustomInput); n > MaxFrontendResult {
		return resolution{}, textTooLong("customInput", n, MaxFrontendResult)
	}
	return resolution{status: api.StatusAnswered, answer: api.Answer{Selections: []string{}, CustomInput: b.CustomInput}, by: by}, nil
}

func (k frontendKind) apply(in *answering, res resolution) outcome {
	out := k.askKind.apply(in, res)
	if in.req.ToolName != "" {
		out.resultName = in.req.ToolName
	}
	if ans, ok := res.answer.(api.Answer); ok && res.status == api.StatusAnswered {
		out.result = &api.ToolResult{Content: ans.CustomInput}
	}
	return out
}
