package openai

import (
	"bytes"
	"encoding/json"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/lubanhq/luban/model"
)

// buildParams maps a provider-neutral request to SDK parameters. Assistant
// tool calls keep id, name and arguments exactly as received; tool messages
// carry their tool_call_id; an assistant message with tool calls and no text
// omits "content" (OpenAI accepts that; some servers reject an empty string
// beside tool_calls). An assistant tool-call turn carries its reasoning back
// in the fields it came in (reasoningBack).
func buildParams(modelName string, req *model.Request) oai.ChatCompletionNewParams {
	// include_usage: the last chunk reports the call's token counts
	// (model.Response.Usage).
	p := oai.ChatCompletionNewParams{Model: shared.ChatModel(modelName),
		StreamOptions: oai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, messageParam(m))
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, oai.ChatCompletionFunctionTool(functionDefinition(t)))
	}
	return p
}

// functionDefinition is t's function definition as the JSON the request
// carries: name, description (left out when empty) and the tool's JSON
// Schema as the bytes the tool declared, not decoded and encoded again for
// every request; an empty or non-object schema becomes the empty object
// schema, which every server accepts.
func functionDefinition(t model.ToolSpec) shared.FunctionDefinitionParam {
	def := struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	}{t.Name, t.Description, t.Parameters}
	if !isObject(t.Parameters) {
		def.Parameters = emptySchema
	}
	b, err := json.Marshal(def)
	if err != nil { // not reached: the schema is a valid object
		def.Parameters = emptySchema
		b, _ = json.Marshal(def)
	}
	return param.Override[shared.FunctionDefinitionParam](json.RawMessage(b))
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// isObject reports whether raw is one valid JSON object.
func isObject(raw json.RawMessage) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{' && json.Valid(raw)
}

func messageParam(m model.Message) oai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case model.RoleSystem:
		return oai.SystemMessage(m.Content)
	case model.RoleTool:
		return oai.ToolMessage(m.Content, m.ToolCallID)
	case model.RoleAssistant:
		a := oai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, oai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &oai.ChatCompletionMessageFunctionToolCallParam{
					ID: tc.ID,
					Function: oai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      tc.Name,
						Arguments: tc.Arguments,
					},
				},
			})
		}
		if extra := reasoningBack(m); extra != nil {
			a.SetExtraFields(extra)
		}
		return oai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		return oai.UserMessage(m.Content)
	}
}
