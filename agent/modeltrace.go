package agent

import (
	"errors"
	"strings"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
)

// modelCallTrace is the data of a model_call trace entry: provider
// ("kind:model" as people see it), model, the tool names sent, the message
// count, latency, retries, and the finish reason or the error. Retries of a
// failed call come from its *model.CallError. Nothing here can hold an API
// key: providers keep keys out of their names and errors.
func modelCallTrace(p model.Provider, toolNames []string, messages int, latency time.Duration, resp *model.Response, err error) any {
	_, modelName, _ := strings.Cut(p.Name(), ":")
	if err == nil {
		return modelCallData{FinishReason: resp.FinishReason, LatencyMs: latency.Milliseconds(), MessageCount: messages,
			Model: modelName, Provider: p.Name(), Retries: resp.Retries, Tools: toolNames}
	}
	d := map[string]any{"provider": p.Name(), "model": modelName, "tools": toolNames,
		"messageCount": messages, "latencyMs": latency.Milliseconds(), "retries": 0}
	var ce *model.CallError
	if errors.As(err, &ce) {
		d["retries"] = ce.Retries
	}
	d["error"] = err.Error()
	return d
}

// modelCallData is a successful call's model_call trace. Its fields are in
// the order of their JSON names, so it encodes byte for byte as the map of
// the same keys would (encoding/json sorts a map's keys), without the map.
type modelCallData struct {
	FinishReason string   `json:"finishReason"`
	LatencyMs    int64    `json:"latencyMs"`
	MessageCount int      `json:"messageCount"`
	Model        string   `json:"model"`
	Provider     string   `json:"provider"`
	Retries      int      `json:"retries"`
	Tools        []string `json:"tools"`
}

// toolCallData is a "tool_call" trace entry's data (toolCallTrace), its
// fields in the order of their JSON names as modelCallData's.
type toolCallData struct {
	ArgumentsBytes  int    `json:"argumentsBytes"`
	ArgumentsSha256 string `json:"argumentsSha256"`
	Name            string `json:"name"`
	ToolCallID      string `json:"toolCallId"`
}

// toolResultData is a "tool_result" trace entry's data (resultRows): the
// result named by its length in bytes and SHA-256 (hex), its fields in the
// order of their JSON names as modelCallData's.
type toolResultData struct {
	ContentBytes  int    `json:"contentBytes"`
	ContentSha256 string `json:"contentSha256"`
	IsError       bool   `json:"isError"`
	Name          string `json:"name"`
	ToolCallID    string `json:"toolCallId"`
}

// questionAudit is the summary of a question's "requested" audit entry
// (Runner.question), its fields in the order of their JSON names as
// modelCallData's.
type questionAudit struct {
	Mode          api.Mode `json:"mode"`
	OptionCount   int      `json:"optionCount"`
	QuestionCount int      `json:"questionCount"`
	Tool          string   `json:"tool"`
}

// interactionTrace is an "interaction" trace entry's data for an ask or
// approval question: what happened to the request (requested, answered,
// cancelled, expired …), its fields in the order of their JSON names as
// modelCallData's.
type interactionTrace struct {
	Action     string `json:"action"`
	RequestID  string `json:"requestId"`
	ToolCallID string `json:"toolCallId"`
}
