package anthropic

import (
	"encoding/json"
	"strings"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/lubanhq/luban/model"
)

// buildParams maps a provider-neutral request to Messages API parameters:
//   - system messages become the top-level "system" text blocks;
//   - an assistant message becomes its thinking blocks as received (with
//     their signatures, redacted ones unchanged), a text block (when it has
//     text) and one tool_use block per call, id, name and input as received;
//   - the tool messages that answer one assistant turn become tool_result
//     blocks of ONE user message, in call order (the Messages API requires
//     every result of a turn in the user message right after it); a user
//     message that follows them joins that same message after the results,
//     so roles keep alternating.
//
// thinkingBudget > 0 turns extended thinking on with that budget_tokens.
func buildParams(modelName string, maxTokens, thinkingBudget int64, req *model.Request) sdk.MessageNewParams {
	p := sdk.MessageNewParams{Model: sdk.Model(modelName), MaxTokens: maxTokens}
	if thinkingBudget > 0 {
		p.Thinking = sdk.ThinkingConfigParamOfEnabled(thinkingBudget)
	}
	appendUser := func(b sdk.ContentBlockParamUnion) {
		if n := len(p.Messages); n > 0 && p.Messages[n-1].OfUser != nil {
			u := p.Messages[n-1].OfUser
			u.Content = append(u.Content, b)
			return
		}
		p.Messages = append(p.Messages, sdk.NewUserMessage(b))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case model.RoleSystem:
			if m.Content != "" {
				p.System = append(p.System, sdk.TextBlockParam{Text: m.Content})
			}
		case model.RoleAssistant:
			blocks := assistantBlocks(m)
			if len(blocks) > 0 { // the API rejects an assistant message without content
				p.Messages = append(p.Messages, sdk.NewAssistantMessage(blocks...))
			}
		case model.RoleTool:
			tr := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID}
			if m.Content != "" { // an empty text block is rejected; no content is fine
				tr.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: m.Content}}}
			}
			if m.IsError {
				tr.IsError = param.NewOpt(true)
			}
			appendUser(sdk.ContentBlockParamUnion{OfToolResult: &tr})
		default:
			text := m.Content
			if strings.TrimSpace(text) == "" {
				text = "(empty message)" // the API rejects empty text blocks
			}
			appendUser(sdk.NewTextBlock(text))
		}
	}
	for _, t := range req.Tools {
		tp := sdk.ToolParam{Name: t.Name, InputSchema: inputSchema(t.Parameters)}
		if t.Description != "" {
			tp.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, sdk.ToolUnionParam{OfTool: &tp})
	}
	return p
}

// toolInput is a tool_use block's input: the call's arguments when they are
// a JSON object, sent byte for byte; otherwise (invalid JSON, which luban
// already answered with an error tool_result) the empty object, since the
// API accepts nothing else there.
func toolInput(args string) any {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(args), &obj) == nil && obj != nil {
		return json.RawMessage(args)
	}
	return map[string]any{}
}

// inputSchema maps a tool's JSON Schema to input_schema: "properties" and
// "required" to their fields, every other key but "type" kept as is. An
// empty or non-object schema becomes the empty object schema.
func inputSchema(raw json.RawMessage) sdk.ToolInputSchemaParam {
	var m map[string]any
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return sdk.ToolInputSchemaParam{Properties: map[string]any{}}
	}
	// properties is always sent: a schema without it would marshal to nothing
	// and the API requires input_schema.
	s := sdk.ToolInputSchemaParam{Properties: m["properties"]}
	if s.Properties == nil {
		s.Properties = map[string]any{}
	}
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				s.Required = append(s.Required, name)
			}
		}
	}
	for k, v := range m {
		switch k {
		case "type", "properties", "required":
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}
