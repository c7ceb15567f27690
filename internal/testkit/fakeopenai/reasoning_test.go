package fakeopenai_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
)

// followUp is a request whose history holds the assistant tool-call turn
// call_r with the given extra fields (raw JSON members, may be empty).
func followUp(extra string) string {
	if extra != "" {
		extra = "," + extra
	}
	return `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","tool_calls":[{"id":"call_r","type":"function","function":{"name":"ask_user","arguments":"{}"}}]` + extra + `},` +
		`{"role":"tool","tool_call_id":"call_r","content":"ok"}]}`
}

// In reasoning mode a tool-call turn must come back with its reasoning, in
// the field it was streamed in, byte for byte; otherwise 400 as DeepSeek.
func TestEnforceReasoning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		field  string
		extra  string
		status int
	}{
		{"missing", "", ``, http.StatusBadRequest},
		{"other field", "", `"reasoning":"想一想 \u003cok\u003e"`, http.StatusBadRequest},
		{"changed", "", `"reasoning_content":"想一想"`, http.StatusBadRequest},
		{"null", "", `"reasoning_content":null`, http.StatusBadRequest},
		{"exact", "", `"reasoning_content":"想一想 \u003cok\u003e"`, http.StatusOK},
		{"exact reasoning field", "reasoning", `"reasoning":"想一想 <ok>"`, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.srv.EnforceReasoning()
			b.srv.Push(
				fakeopenai.Turn{Reasoning: "想一想 <ok>", ReasoningField: tc.field, ToolCalls: []fakeopenai.ToolCall{{ID: "call_r", Name: "ask_user", Arguments: `{}`}}},
				fakeopenai.Turn{Text: "done"},
			)
			first := post(t, b, body)
			require.Equal(t, http.StatusOK, first.StatusCode)
			data, err := events(first.Body)
			require.NoError(t, err)
			field := tc.field
			if field == "" {
				field = "reasoning_content"
			}
			require.Contains(t, strings.Join(data, "\n"), `"`+field+`":"想`)

			resp := post(t, b, followUp(tc.extra))
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			require.Equal(t, tc.status, resp.StatusCode, string(raw))
			if tc.status == http.StatusBadRequest {
				var e struct {
					Error struct{ Message, Type string }
				}
				require.NoError(t, json.Unmarshal(raw, &e))
				require.Contains(t, e.Error.Message, fakeopenai.ReasoningMessage)
				require.Equal(t, "invalid_request_error", e.Error.Type)
			}
		})
	}
}

// An empty reasoning still streams its field once, and must come back as
// an empty string; without reasoning mode nothing is enforced.
func TestEnforceReasoningEmptyAndOff(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.EnforceReasoning()
	b.srv.Push(fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_r", Name: "ask_user", Arguments: `{}`}}},
		fakeopenai.Turn{Text: "x"}, fakeopenai.Turn{Text: "y"})
	data, err := events(post(t, b, body).Body)
	require.NoError(t, err)
	require.Contains(t, data[1], `"reasoning_content":""`)
	require.Equal(t, http.StatusBadRequest, post(t, b, followUp("")).StatusCode)
	require.Equal(t, http.StatusOK, post(t, b, followUp(`"reasoning_content":""`)).StatusCode)

	off := setup(t)
	off.srv.Push(fakeopenai.Turn{Reasoning: "r", ToolCalls: []fakeopenai.ToolCall{{ID: "call_r", Name: "ask_user", Arguments: `{}`}}}, fakeopenai.Turn{Text: "x"})
	_, err = events(post(t, off, body).Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, post(t, off, followUp("")).StatusCode)
}
