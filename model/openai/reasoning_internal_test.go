package openai

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/model"
)

// rawString decodes like encoding/json, except that raw bytes of a cut
// character are kept; non-strings are refused.
func TestRawString(t *testing.T) {
	t.Parallel()
	for _, lit := range []string{`""`, `"abc"`, `"a\"b\\c\/d\n\t\r\b\f"`, `"\u4e2d\u6587"`, `"\ud83d\ude00 x"`, `"<>&"`, `"中文😀"`} {
		var want string
		require.NoError(t, json.Unmarshal([]byte(lit), &want))
		got, ok := rawString(lit)
		require.True(t, ok, lit)
		require.Equal(t, want, got, lit)
	}
	got, ok := rawString("\"\xe4\xb8\"")
	require.True(t, ok)
	require.Equal(t, "\xe4\xb8", got, "the first bytes of a cut character stay raw")
	got, ok = rawString(`"\ud83d x"`)
	require.True(t, ok)
	require.Equal(t, "\uFFFD x", got, "a lone surrogate is U+FFFD")
	for _, bad := range []string{`null`, `1`, `"`, `"\"`, `"\x"`, `"\u12"`, `{}`} {
		_, ok := rawString(bad)
		require.False(t, ok, bad)
	}
}

// reasoning_details pieces merge by index; pieces without one join the last
// entry without one of the same type; text, summary and data are appended
// (bytes of a cut character included), other fields keep their last value.
func TestReasoningDetailsMerge(t *testing.T) {
	t.Parallel()
	var r reasoningAcc
	for _, lit := range []string{
		`[{"type":"reasoning.text","text":"中` + "\xe6" + `","index":0,"format":"f"}]`,
		"[{\"type\":\"reasoning.text\",\"text\":\"\x96\x87\",\"index\":0},{\"type\":\"reasoning.encrypted\",\"data\":\"AAA\",\"index\":1}]",
		`[{"type":"reasoning.text","signature":"sig","index":0},{"type":"reasoning.encrypted","data":"BBB","index":1}]`,
		`[{"type":"reasoning.summary","summary":"总"}]`,
		`[{"type":"reasoning.summary","summary":"结","id":null}]`,
		`not json`,
	} {
		r.addDetails(lit)
	}
	got := r.reasoning()
	require.NotNil(t, got)
	require.Equal(t, "中文\n\n总结", got.Text, "without a text field the entries' text is shown")
	var d reasoningData
	require.NoError(t, json.Unmarshal(got.Data, &d))
	require.Len(t, d.Details, 3)
	require.JSONEq(t, `{"type":"reasoning.text","text":"中文","index":0,"format":"f","signature":"sig"}`, string(d.Details[0]))
	require.JSONEq(t, `{"type":"reasoning.encrypted","data":"AAABBB","index":1}`, string(d.Details[1]))
	require.JSONEq(t, `{"type":"reasoning.summary","summary":"总结"}`, string(d.Details[2]))
	back := reasoningBack(model.Message{Reasoning: got, ToolCalls: []model.ToolCall{{ID: "c"}}})
	require.Equal(t, d.Details, back["reasoning_details"])
	require.NotContains(t, back, "reasoning_content", "no text field came, none goes back")
}
