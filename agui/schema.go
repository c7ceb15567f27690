package agui

import (
	"encoding/json"
	"time"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
)

// request is the part of a user_input_required payload an interrupt needs:
// an ask's InputRequest (docs/design.md §3) or an approval's (docs/design.md §10).
type request struct {
	ID              string          `json:"id"`
	ToolCallID      string          `json:"toolCallId"`
	Tool            string          `json:"tool"`
	Title           string          `json:"title"`
	Mode            api.Mode        `json:"mode"`
	Options         []api.Option    `json:"options"`
	AllowCustom     bool            `json:"allowCustom"`
	Questions       []api.Question  `json:"questions"`
	ArgumentsSchema json.RawMessage `json:"argumentsSchema"`
	ExpiresAt       time.Time       `json:"expiresAt"`
}

// interruptOf turns the JSON of a pending request (the payload of
// user_input_required) into the Interrupt of docs/design.md §13.
func interruptOf(raw json.RawMessage) (Interrupt, error) {
	var req request
	if err := json.Unmarshal(raw, &req); err != nil {
		return Interrupt{}, err
	}
	var full map[string]any
	if err := json.Unmarshal(raw, &full); err != nil {
		return Interrupt{}, err
	}
	in := Interrupt{ID: req.ID, Reason: ReasonInputRequired, Message: req.Title, ToolCallID: req.ToolCallID,
		ResponseSchema: responseSchema(&req), Metadata: map[string]any{"inputRequest": full}}
	switch req.Tool {
	case api.ToolApproval:
		in.Reason = ReasonConfirmation
	case api.ToolFrontend:
		in.Reason = ReasonFrontendTool
	}
	if !req.ExpiresAt.IsZero() {
		in.ExpiresAt = req.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return in, nil
}

// responseSchema is a JSON Schema (draft 2020-12) of the resume payload that
// answers req: the answer part of a POST /api/chat/continue body (docs/design.md
// §3, §10), shaped by the question's mode. It describes what the form
// allows; the server still validates every answer (askuser.ValidateAnswer).
func responseSchema(req *request) map[string]any {
	obj := func(props map[string]any, required ...string) map[string]any {
		s := map[string]any{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "properties": props}
		if len(required) > 0 {
			s["required"] = required
		}
		return s
	}
	customInput := map[string]any{"type": "string", "maxLength": askuser.MaxCustomInput}
	if req.Tool == api.ToolFrontend {
		// The tool's result, as the application's tool message has it.
		return obj(map[string]any{"customInput": map[string]any{"type": "string", "maxLength": agent.MaxFrontendResult}}, "customInput")
	}
	if req.Tool == api.ToolApproval {
		props := map[string]any{
			"decision": map[string]any{"enum": []string{"approve", "edit", "reject"}},
			"message":  map[string]any{"type": "string", "maxLength": askuser.MaxCustomInput},
			"remember": map[string]any{"enum": []string{"session"}},
		}
		var args any = map[string]any{"type": "object"}
		if len(req.ArgumentsSchema) > 0 {
			var v any
			if json.Unmarshal(req.ArgumentsSchema, &v) == nil && v != nil {
				args = v
			}
		}
		props["arguments"] = args
		return obj(props, "decision")
	}
	switch req.Mode {
	case api.ModeSingle, api.ModeMultiple, api.ModeToggle:
		ids := make([]string, 0, len(req.Options))
		for _, o := range req.Options {
			ids = append(ids, o.ID)
		}
		sel := map[string]any{"type": "array", "items": map[string]any{"enum": ids}, "uniqueItems": true}
		switch req.Mode {
		case api.ModeSingle:
			sel["minItems"], sel["maxItems"] = 1, 1
			if req.AllowCustom {
				// With allowCustom the free text may stand in for the choice.
				sel["minItems"] = 0
			}
		case api.ModeToggle:
			sel["minItems"] = 1
		}
		props := map[string]any{"selections": sel}
		if req.AllowCustom {
			props["customInput"] = customInput
		}
		return obj(props, "selections")
	case api.ModeQuestions:
		texts := make([]string, 0, len(req.Questions))
		for _, q := range req.Questions {
			texts = append(texts, q.Question)
		}
		item := obj(map[string]any{
			"question": map[string]any{"enum": texts},
			"selected": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"other":    map[string]any{"type": "string", "maxLength": askuser.MaxCustomInput},
		}, "question", "selected")
		delete(item, "$schema")
		return obj(map[string]any{"answers": map[string]any{"type": "array", "items": item,
			"minItems": len(req.Questions), "maxItems": len(req.Questions)}}, "answers")
	case api.ModeNumber:
		customInput["pattern"] = `^\s*[-+]?(\d+\.?\d*|\.\d+)\s*$`
	case api.ModeDate:
		customInput["format"] = "date"
		customInput["pattern"] = `^\d{4}-\d{2}-\d{2}$`
	}
	return obj(map[string]any{"customInput": customInput}, "customInput")
}
