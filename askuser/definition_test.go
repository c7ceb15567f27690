package askuser_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

func TestSchemaFilesMatchDefinitions(t *testing.T) {
	t.Parallel()
	for _, d := range askuser.Definitions() {
		t.Run(d.Name, func(t *testing.T) {
			t.Parallel()
			requireGolden(t, filepath.Join("..", "schemas", d.Name+".json"), d.Parameters)
		})
	}
}

func TestDefinitions(t *testing.T) {
	t.Parallel()
	defs := askuser.Definitions()
	require.Len(t, defs, 2)
	require.Equal(t, api.ToolAskUser, defs[0].Name)
	require.Equal(t, api.ToolAskUserBatch, defs[1].Name)
	for _, d := range defs {
		require.True(t, d.ReadOnly, d.Name)
		require.True(t, d.ConcurrencySafe, d.Name)
		require.True(t, d.External, d.Name)
		require.False(t, d.NeedsPermission(nil), d.Name)
		require.False(t, d.NeedsPermission(json.RawMessage(`{"title":"rm -rf /","mode":"text"}`)), d.Name)
		require.True(t, json.Valid(d.Parameters), d.Name)

		got, ok := askuser.DefinitionFor(d.Name)
		require.True(t, ok)
		require.Equal(t, d, got)
	}
	_, ok := askuser.DefinitionFor("ask_User")
	require.False(t, ok)

	// Definitions returns copies: changing one does not change the next.
	defs[0].Parameters[0] = 'X'
	require.Equal(t, byte('{'), askuser.AskUserDefinition().Parameters[0])
}

// schemaShape is the part of a JSON Schema document docs/design.md §A.1 fixes.
type schemaShape struct {
	Type       string                  `json:"type"`
	Required   []string                `json:"required"`
	Properties map[string]*schemaShape `json:"properties"`
	Items      *schemaShape            `json:"items"`
	Enum       []string                `json:"enum"`
	MinItems   *int                    `json:"minItems"`
	MaxItems   *int                    `json:"maxItems"`
	MaxLength  *int                    `json:"maxLength"`
	Desc       string                  `json:"description"`
}

func TestAskUserSchemaIsTheSeeds(t *testing.T) {
	t.Parallel()
	d := askuser.AskUserDefinition()
	var s schemaShape
	require.NoError(t, json.Unmarshal(d.Parameters, &s))

	// docs/design.md §A.1 ASK_USER_SCHEMA: names, types, enum and required lists.
	require.Equal(t, "object", s.Type)
	require.Equal(t, []string{"title", "mode"}, s.Required)
	want := map[string]string{"title": "string", "description": "string", "mode": "string", "options": "array", "allowCustom": "boolean", "submitLabel": "string",
		// luban's bounds of a number answer, beyond §A.1's schema.
		"minimum": "number", "maximum": "number", "integer": "boolean"}
	require.Len(t, s.Properties, len(want))
	for name, typ := range want {
		require.Equal(t, typ, s.Properties[name].Type, name)
	}
	require.Equal(t, []string{"single", "multiple", "text", "number", "date", "directory", "toggle"}, s.Properties["mode"].Enum)
	item := s.Properties["options"].Items
	require.Equal(t, []string{"id", "label"}, item.Required)
	require.Equal(t, "boolean", item.Properties["recommended"].Type)

	// §A.1's Chinese descriptions are kept.
	for name, zh := range map[string]string{"title": "问题标题", "description": "用户需要知道的补充说明", "mode": "决定前端渲染何种控件", "options": "single、multiple、toggle 模式的选项", "allowCustom": "是否允许用户填写选项之外的内容", "submitLabel": "提交按钮文案"} {
		require.True(t, strings.HasPrefix(s.Properties[name].Desc, zh+" / "), name)
	}
	for name, zh := range map[string]string{"id": "稳定提交值", "label": "展示名称", "description": "展示说明", "recommended": "推荐项"} {
		require.True(t, strings.HasPrefix(item.Properties[name].Desc, zh+" / "), name)
	}
	require.True(t, strings.HasPrefix(d.Description, "当任务缺少必要信息时发起结构化追问。支持 single、multiple、text、number、date、directory、toggle；收到用户结果后继续任务。"))
	require.Equal(t, askuser.MaxTitleLen, *s.Properties["title"].MaxLength)
	require.Equal(t, askuser.MaxOptions, *s.Properties["options"].MaxItems)
}

func TestAskUserBatchSchemaIsAgentScopes(t *testing.T) {
	t.Parallel()
	d := askuser.AskUserBatchDefinition()
	var s schemaShape
	require.NoError(t, json.Unmarshal(d.Parameters, &s))
	require.Equal(t, []string{"questions"}, s.Required)
	qs := s.Properties["questions"]
	require.Equal(t, 1, *qs.MinItems)
	require.Equal(t, 4, *qs.MaxItems)
	q := qs.Items
	require.Equal(t, []string{"question", "header", "options"}, q.Required)
	require.Equal(t, 12, *q.Properties["header"].MaxLength)
	require.Equal(t, "boolean", q.Properties["multi_select"].Type)
	require.Equal(t, "string", q.Properties["context"].Type)
	opts := q.Properties["options"]
	require.Equal(t, 2, *opts.MinItems)
	require.Equal(t, 4, *opts.MaxItems)
	require.Equal(t, []string{"label", "description"}, opts.Items.Required)
	require.Equal(t, "string", opts.Items.Properties["preview"].Type)

	// The usage rules of AgentScope AskUser, in our own words.
	for _, rule := range []string{"1–4 questions", "2–4 options", "never add an \"Other\" option", "multi_select", "(Recommended)", "only on single-select questions", "goes in context", "metadata {\"answers\""} {
		require.Contains(t, d.Description, rule)
	}
}
