package tool_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

func entry(name string) *tool.Entry {
	return &tool.Entry{Spec: model.ToolSpec{Name: name, Parameters: json.RawMessage(`{"type":"object"}`)},
		Tool: tool.Func{ToolSpec: model.ToolSpec{Name: name}, Fn: func(context.Context, json.RawMessage) (api.ToolResult, error) { return api.ToolResult{}, nil }}}
}

func TestReplaceGroupAndGlobs(t *testing.T) {
	reg := tool.NewRegistry()
	require.NoError(t, reg.Register(tool.CurrentTime(nil), true))
	require.NoError(t, reg.ReplaceGroup("gh__", []*tool.Entry{entry("gh__b"), entry("gh__a")}))
	allow := tool.Allowlist{"ask_user", "gh__*", "current_time", "gh__a", "other__gone", "A*"}
	specs, err := reg.Specs(allow)
	require.NoError(t, err)
	var names []string
	for _, s := range specs {
		names = append(names, s.Name)
	}
	assert.Equal(t, []string{"ask_user", "gh__a", "gh__b", "current_time"}, names, "globs expand sorted, each tool once; an MCP tool not listed now is skipped; globs never add ask tools")
	assert.True(t, allow.Allows("gh__c"), "a glob allows tools listed later")
	assert.False(t, allow.Allows("AskUser"), "a glob never allows an ask tool")

	require.NoError(t, reg.ReplaceGroup("gh__", []*tool.Entry{entry("gh__c")}))
	_, ok := reg.Get("gh__a")
	assert.False(t, ok, "a changed tool list replaces the whole group")
	_, ok = reg.Get("current_time")
	assert.True(t, ok)
	assert.Error(t, reg.ReplaceGroup("gh__", []*tool.Entry{entry("current_time")}), "a group holds only its own names")
	_, err = reg.Specs(tool.Allowlist{"nope"})
	assert.Error(t, err, "a built-in name that is not registered is still an error")
}
