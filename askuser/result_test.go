package askuser_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

// renderResult writes a ToolResult as a readable golden text: the flag, the
// content exactly as the model reads it, and the metadata exactly as sent.
func renderResult(r api.ToolResult) []byte {
	s := fmt.Sprintf("isError: %t\ncontent:\n%s\n", r.IsError, r.Content)
	if r.Metadata != nil {
		s += fmt.Sprintf("metadata:\n%s\n", r.Metadata)
	}
	return []byte(s)
}

func TestToolResultGolden(t *testing.T) {
	t.Parallel()
	b := setup(t)
	answered := func(prompt string, a api.Answer) api.ToolResult {
		p := b.prompts[prompt]
		got, err := askuser.ValidateAnswer(p, a, askuser.AnswerOptions{})
		require.NoError(t, err)
		return askuser.AnsweredResult(p, got)
	}
	tests := []struct {
		name   string
		result api.ToolResult
	}{
		{"ask_user_answered_single", answered("single", api.Answer{Selections: []string{"safe"}})},
		{"ask_user_answered_multiple_custom", answered("multiple+custom", api.Answer{Selections: []string{"b", "a"}, CustomInput: "还要导出 CSV 🙂 <b>&\"quoted\"\nline 2"})},
		{"ask_user_answered_multiple_empty", answered("multiple", api.Answer{Selections: []string{}})},
		{"ask_user_answered_custom_only", answered("single+custom", api.Answer{CustomInput: "都不要"})},
		{"ask_user_answered_text", answered("text", api.Answer{CustomInput: "luban-demo"})},
		{"ask_user_answered_number", answered("number", api.Answer{CustomInput: "1e3"})},
		{"ask_user_cancelled", askuser.CancelledResult(b.prompts["single"])},
		{"ask_user_expired", askuser.ExpiredResult(b.prompts["text"])},
		{"AskUser_answered", answered("batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"SQLite (Recommended)"}},
			{Question: "Which features?", Selected: []string{"Auth", "Export"}, Other: "also an audit log\nwith 中文"},
		}})},
		{"AskUser_answered_other_and_nothing", answered("batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Other: "DuckDB"},
			{Question: "Which features?"},
		}})},
		{"AskUser_cancelled", askuser.CancelledResult(b.prompts["batch"])},
		{"AskUser_expired", askuser.ExpiredResult(b.prompts["batch"])},
		{"fallback", askuser.FallbackResult()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			requireGolden(t, filepath.Join("testdata", "golden", tt.name+".txt"), renderResult(tt.result))
		})
	}
}

// askUserContent mirrors the ask_user ToolResult content (docs/design.md §3).
type askUserContent struct {
	Selections  []string `json:"selections"`
	CustomInput string   `json:"customInput"`
	Cancelled   bool     `json:"cancelled"`
	Expired     *bool    `json:"expired"`
	Labels      []string `json:"labels"`
}

func TestAskUserResultsKeepTheAnswerVerbatim(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.prompts["multiple+custom"]
	custom := "还要导出 CSV 🙂 <b>&\"quoted\"\nline 2"
	r := askuser.AnsweredResult(p, api.Answer{Selections: []string{"b", "a"}, CustomInput: custom})
	require.False(t, r.IsError)
	require.Nil(t, r.Metadata)
	require.Contains(t, r.Content, `"customInput":"还要导出 CSV 🙂 <b>&\"quoted\"\nline 2"`) // not \u-escaped

	var c askUserContent
	require.NoError(t, json.Unmarshal([]byte(r.Content), &c))
	require.Equal(t, askUserContent{Selections: []string{"b", "a"}, CustomInput: custom, Labels: []string{"B", "A"}}, c)

	// An explicit [] stays [] and is never replaced by the recommended option.
	r = askuser.AnsweredResult(b.prompts["multiple"], api.Answer{Selections: []string{}})
	require.Equal(t, `{"selections":[],"customInput":"","cancelled":false}`, r.Content)
	r = askuser.AnsweredResult(b.prompts["multiple"], api.Answer{})
	require.Equal(t, `{"selections":[],"customInput":"","cancelled":false}`, r.Content)

	require.Equal(t, `{"selections":[],"customInput":"","cancelled":true}`, askuser.CancelledResult(p).Content)
	require.Equal(t, `{"selections":[],"customInput":"","cancelled":true,"expired":true}`, askuser.ExpiredResult(p).Content)
}

func TestAskUserBatchResultMetadata(t *testing.T) {
	t.Parallel()
	b := setup(t)
	p := b.prompts["batch"]
	r := askuser.AnsweredResult(p, api.Answer{Answers: []api.QuestionAnswer{
		{Question: "Which database?", Other: "DuckDB"},
		{Question: "Which features?", Selected: []string{"Search"}},
	}})
	var md struct {
		Answers []api.QuestionAnswer `json:"answers"`
	}
	require.NoError(t, json.Unmarshal(r.Metadata, &md))
	require.Equal(t, []api.QuestionAnswer{
		{Question: "Which database?", Selected: []string{}, Other: "DuckDB"},
		{Question: "Which features?", Selected: []string{"Search"}},
	}, md.Answers)
	require.Contains(t, r.Content, "DuckDB")
	require.Contains(t, r.Content, `"Search"`)

	for _, r := range []api.ToolResult{askuser.CancelledResult(p), askuser.ExpiredResult(p)} {
		require.False(t, r.IsError)
		require.NoError(t, json.Unmarshal(r.Metadata, &md))
		require.Equal(t, []api.QuestionAnswer{}, md.Answers)
	}
}

func TestFallbackResult(t *testing.T) {
	t.Parallel()
	r := askuser.FallbackResult()
	require.True(t, r.IsError)
	require.Contains(t, r.Content, "ask_user 需要在 Web 交互界面中完成。")
	require.Contains(t, r.Content, "ask_user needs an interactive front end")
}
