package askuser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/schemac"
)

// jsonSchema is the subset of JSON Schema the two tools use. Field order is
// the order of the keys in the written document.
type jsonSchema struct {
	Type                 string      `json:"type"`
	Description          string      `json:"description,omitempty"`
	Enum                 []string    `json:"enum,omitempty"`
	MinLength            *int        `json:"minLength,omitempty"`
	MaxLength            *int        `json:"maxLength,omitempty"`
	MinItems             *int        `json:"minItems,omitempty"`
	MaxItems             *int        `json:"maxItems,omitempty"`
	Items                *jsonSchema `json:"items,omitempty"`
	Properties           properties  `json:"properties,omitempty"`
	Required             []string    `json:"required,omitempty"`
	AdditionalProperties *bool       `json:"additionalProperties,omitempty"`
}

// property is one named entry of an object schema's properties.
type property struct {
	Name   string
	Schema *jsonSchema
}

// properties keeps the declaration order when marshalled, so the written
// schema reads like docs/design.md §A.1's.
type properties []property

// MarshalJSON writes the properties as one object in declaration order.
func (ps properties) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(p.Name)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshalNoEscape(p.Schema)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func intp(n int) *int    { return &n }
func boolp(v bool) *bool { return &v }

func str(desc string, minLen, maxLen int) *jsonSchema {
	s := &jsonSchema{Type: "string", Description: desc, MaxLength: intp(maxLen)}
	if minLen > 0 {
		s.MinLength = intp(minLen)
	}
	return s
}

// marshalNoEscape marshals v without HTML escaping (so "<" stays "<").
func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// schemaDocument renders s as the indented document kept in schemas/<tool>.json
// (two-space indent, trailing newline).
func schemaDocument(s *jsonSchema) []byte {
	compact, err := marshalNoEscape(s)
	if err != nil {
		panic(fmt.Sprintf("askuser: marshal schema: %v", err))
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		panic(fmt.Sprintf("askuser: indent schema: %v", err))
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// modeEnum lists the ask_user modes in §A.1's order (docs/design.md §A.1).
var modeEnum = []string{
	string(api.ModeSingle), string(api.ModeMultiple), string(api.ModeText), string(api.ModeNumber),
	string(api.ModeDate), string(api.ModeDirectory), string(api.ModeToggle),
}

// askUserSchema is docs/design.md §A.1's ASK_USER_SCHEMA with its Chinese descriptions
// kept, English added, and luban's size bounds (limits.go) written in.
func askUserSchema() *jsonSchema {
	return &jsonSchema{
		Type: "object",
		Properties: properties{
			{"title", str(fmt.Sprintf("问题标题 / The question, shown as the card title (at most %d characters).", MaxTitleLen), 1, MaxTitleLen)},
			{"description", str(fmt.Sprintf("用户需要知道的补充说明 / What the user needs to know to answer (at most %d characters).", MaxDescriptionLen), 0, MaxDescriptionLen)},
			{"mode", &jsonSchema{
				Type:        "string",
				Enum:        modeEnum,
				Description: "决定前端渲染何种控件 / Which control the user gets: single (pick one option), multiple (pick any number), toggle (switch at least one on), text, number, date (YYYY-MM-DD), directory (a path relative to the workspace). text, number, date and directory take no options.",
			}},
			{"options", &jsonSchema{
				Type:        "array",
				Description: fmt.Sprintf("single、multiple、toggle 模式的选项 / The options of single, multiple and toggle (single and multiple need at least %d, toggle at least %d, at most %d).", MinChoiceOptions, MinToggleOptions, MaxOptions),
				MaxItems:    intp(MaxOptions),
				Items: &jsonSchema{
					Type: "object",
					Properties: properties{
						{"id", str(fmt.Sprintf("稳定提交值 / The stable value you get back; unique within the request (at most %d characters).", MaxOptionIDLen), 1, MaxOptionIDLen)},
						{"label", str(fmt.Sprintf("展示名称 / The text shown to the user; unique within the request (at most %d characters).", MaxLabelLen), 1, MaxLabelLen)},
						{"description", str(fmt.Sprintf("展示说明 / A line shown under the label (at most %d characters).", MaxOptionDescriptionLen), 0, MaxOptionDescriptionLen)},
						{"recommended", &jsonSchema{Type: "boolean", Description: "推荐项 / Marks the option you recommend."}},
					},
					Required:             []string{"id", "label"},
					AdditionalProperties: boolp(false),
				},
			}},
			{"allowCustom", &jsonSchema{Type: "boolean", Description: "是否允许用户填写选项之外的内容 / Whether the user may write an answer besides the options; it comes back in customInput."}},
			{"submitLabel", str(fmt.Sprintf("提交按钮文案 / The submit button caption (at most %d characters).", MaxSubmitLabelLen), 0, MaxSubmitLabelLen)},
			{"minimum", &jsonSchema{Type: "number", Description: "number 模式的最小值 / mode number only: the smallest number the user may enter."}},
			{"maximum", &jsonSchema{Type: "number", Description: "number 模式的最大值 / mode number only: the largest number the user may enter."}},
			{"integer", &jsonSchema{Type: "boolean", Description: "number 模式只接受整数 / mode number only: accept whole numbers only (a count, say)."}},
		},
		Required:             []string{"title", "mode"},
		AdditionalProperties: boolp(false),
	}
}

// askUserBatchSchema is AgentScope's AskUserParams (docs/design.md §B): 1–4 questions,
// each with a header chip, optional context, 2–4 options and multi_select.
func askUserBatchSchema() *jsonSchema {
	option := &jsonSchema{
		Type: "object",
		Properties: properties{
			{"label", str(fmt.Sprintf("The option text the user picks and you get back; unique within the question; no \"Other\" (at most %d characters).", MaxLabelLen), 1, MaxLabelLen)},
			{"description", str(fmt.Sprintf("What choosing this option means (at most %d characters).", MaxOptionDescriptionLen), 0, MaxOptionDescriptionLen)},
			{"preview", str(fmt.Sprintf("A concrete artifact shown beside the options (code, ASCII mockup, config); single-select questions only (at most %d characters).", MaxPreviewLen), 0, MaxPreviewLen)},
		},
		Required:             []string{"label", "description"},
		AdditionalProperties: boolp(false),
	}
	question := &jsonSchema{
		Type: "object",
		Properties: properties{
			{"question", str(fmt.Sprintf("The complete question; unique within the batch (at most %d characters).", MaxQuestionLen), 1, MaxQuestionLen)},
			{"header", str(fmt.Sprintf("A very short label shown as a chip, e.g. \"Database\" (at most %d characters).", MaxHeaderLen), 1, MaxHeaderLen)},
			{"context", str(fmt.Sprintf("What the user must look at to answer: a draft, a diff, an error (at most %d characters).", MaxContextLen), 0, MaxContextLen)},
			{"options", &jsonSchema{
				Type:        "array",
				Description: fmt.Sprintf("%d–%d options. The user can always answer \"Other\" in their own words.", MinQuestionOptions, MaxQuestionOptions),
				MinItems:    intp(MinQuestionOptions),
				MaxItems:    intp(MaxQuestionOptions),
				Items:       option,
			}},
			{"multi_select", &jsonSchema{Type: "boolean", Description: "true only when the options are not mutually exclusive; default false."}},
		},
		Required:             []string{"question", "header", "options"},
		AdditionalProperties: boolp(false),
	}
	return &jsonSchema{
		Type: "object",
		Properties: properties{
			{"questions", &jsonSchema{
				Type:        "array",
				Description: fmt.Sprintf("%d–%d related questions asked together.", MinQuestions, MaxQuestions),
				MinItems:    intp(MinQuestions),
				MaxItems:    intp(MaxQuestions),
				Items:       question,
			}},
		},
		Required:             []string{"questions"},
		AdditionalProperties: boolp(false),
	}
}

// compileSchema compiles a schema document with santhosh-tekuri/jsonschema
// (draft 2020-12). It panics on failure: the documents are built in this
// package and a test compiles them.
func compileSchema(name string, doc []byte) *jsonschema.Schema {
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(doc)))
	if err != nil {
		panic(fmt.Sprintf("askuser: schema %s: %v", name, err))
	}
	c := schemac.NewCompiler()
	url := "mem:///schemas/" + name + ".json"
	if err := c.AddResource(url, v); err != nil {
		panic(fmt.Sprintf("askuser: schema %s: %v", name, err))
	}
	s, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("askuser: schema %s: %v", name, err))
	}
	return s
}
