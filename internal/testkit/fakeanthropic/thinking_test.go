package fakeanthropic_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
)

const thinkingOn = `"thinking":{"type":"enabled","budget_tokens":1024}`

// assistantFollowUp is a request whose history holds the assistant turn
// with the given content blocks, its tool_result, and thinking (raw JSON
// member, may be empty).
func assistantFollowUp(thinking, blocks string) string {
	if thinking != "" {
		thinking += ","
	}
	return `{"model":"claude-x","max_tokens":5000,"stream":true,` + thinking +
		`"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]},` +
		`{"role":"assistant","content":[` + blocks + `]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"},{"type":"tool_result","tool_use_id":"toolu_b","content":"ok"}]}]}`
}

func thinkingJSON(text string) string {
	b, _ := json.Marshal(map[string]string{"type": "thinking", "thinking": text, "signature": fakeanthropic.Signature(text)})
	return string(b)
}

// In reasoning mode every request enables thinking, and a tool_use turn's
// thinking, redacted_thinking and interleaved thinking blocks come back
// unchanged and in place, else 400 as the Messages API.
func TestEnforceThinking(t *testing.T) {
	t.Parallel()
	toolA := `{"type":"tool_use","id":"toolu_a","name":"ask_user","input":{}}`
	toolB := `{"type":"tool_use","id":"toolu_b","name":"ask_user","input":{}}`
	redacted := `{"type":"redacted_thinking","data":"ZW5jcnlwdGVk"}`
	text := `{"type":"text","text":"好"}`
	forged := `{"type":"thinking","thinking":"先想想 changed","signature":"` + fakeanthropic.Signature("先想想") + `"}`
	for _, tc := range []struct {
		name, thinking, blocks, want string
	}{
		{"exact", thinkingOn, strings.Join([]string{thinkingJSON("先想想"), redacted, text, toolA, thinkingJSON("再想"), toolB}, ","), ""},
		{"thinking off", "", strings.Join([]string{thinkingJSON("先想想"), redacted, text, toolA, thinkingJSON("再想"), toolB}, ","), "thinking:"},
		{"dropped", thinkingOn, strings.Join([]string{text, toolA, toolB}, ","), "Expected `thinking` or `redacted_thinking`, but found `text`"},
		{"forged", thinkingOn, strings.Join([]string{forged, redacted, text, toolA, thinkingJSON("再想"), toolB}, ","), "Invalid `signature`"},
		{"no redacted", thinkingOn, strings.Join([]string{thinkingJSON("先想想"), text, toolA, thinkingJSON("再想"), toolB}, ","), "passed back unchanged"},
		{"moved", thinkingOn, strings.Join([]string{thinkingJSON("先想想"), redacted, thinkingJSON("再想"), text, toolA, toolB}, ","), "passed back unchanged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.srv.EnforceThinking()
			b.srv.Push(fakeanthropic.Turn{Thinking: "先想想", RedactedThinking: "ZW5jcnlwdGVk", Text: "好", ToolUses: []fakeanthropic.ToolUse{
				{ID: "toolu_a", Name: "ask_user", Input: `{}`},
				{ID: "toolu_b", Name: "ask_user", Input: `{}`, ThinkingBefore: "再想"},
			}}, fakeanthropic.Turn{Text: "done"})
			first := post(t, b, strings.Replace(body, `"max_tokens":100,`, `"max_tokens":5000,`+thinkingOn+`,`, 1))
			evs, err := events(first.Body)
			require.NoError(t, err)
			require.Equal(t, http.StatusOK, first.StatusCode)
			var all strings.Builder
			for _, e := range evs {
				all.WriteString(e.data + "\n")
			}
			require.Contains(t, all.String(), `"signature":"`+fakeanthropic.Signature("先想想")+`"`)
			require.Contains(t, all.String(), `{"type":"redacted_thinking","data":"ZW5jcnlwdGVk"}`)

			resp := post(t, b, assistantFollowUp(tc.thinking, tc.blocks))
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			if tc.want == "" {
				require.Equal(t, http.StatusOK, resp.StatusCode, string(raw))
				return
			}
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, string(raw))
			require.Contains(t, string(raw), `"invalid_request_error"`)
			require.Contains(t, string(raw), tc.want)
		})
	}
}

// A request without thinking enabled is refused in reasoning mode before
// anything streams.
func TestEnforceThinkingNeedsThinkingEnabled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.EnforceThinking()
	b.srv.Push(fakeanthropic.Turn{Text: "x"}, fakeanthropic.Turn{Text: "y"})
	resp := post(t, b, body)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	budgetTooBig := strings.Replace(body, `"stream":true,`, `"stream":true,"thinking":{"type":"enabled","budget_tokens":2048},`, 1)
	require.Equal(t, http.StatusBadRequest, post(t, b, budgetTooBig).StatusCode, "budget_tokens must be below max_tokens (100)")
}
