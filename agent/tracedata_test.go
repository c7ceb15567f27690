package agent

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The trace entries' structs encode byte for byte as the maps of the same
// keys did (stored trace rows keep their bytes).
func TestTraceDataEncodesAsTheMap(t *testing.T) {
	enc := func(v any) string {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		return string(b)
	}
	for _, tools := range [][]string{nil, {}, {"ask_user", "<a&b>"}} {
		require.Equal(t,
			enc(map[string]any{"provider": "openai:gpt-<x>", "model": "gpt-<x>", "tools": tools, "messageCount": 3, "latencyMs": int64(12), "retries": 1, "finishReason": "tool_calls"}),
			enc(modelCallData{FinishReason: "tool_calls", LatencyMs: 12, MessageCount: 3, Model: "gpt-<x>", Provider: "openai:gpt-<x>", Retries: 1, Tools: tools}))
	}
	require.Equal(t,
		enc(map[string]any{"toolCallId": "call_1", "name": "ask_user", "argumentsBytes": 42, "argumentsSha256": "ab\u2028"}),
		enc(toolCallData{ToolCallID: "call_1", Name: "ask_user", ArgumentsBytes: 42, ArgumentsSha256: "ab\u2028"}))
	require.Equal(t,
		enc(map[string]any{"requestId": "r&1", "toolCallId": "c<1>", "action": "answered"}),
		enc(interactionTrace{RequestID: "r&1", ToolCallID: "c<1>", Action: "answered"}))
}
