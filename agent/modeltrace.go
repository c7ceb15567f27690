package agent

import (
	"errors"
	"strings"
	"time"

	"github.com/lubanhq/luban/model"
)

// modelCallTrace is the data of a model_call trace entry: provider
// ("kind:model" as people see it), model, the tool names sent, the message
// count, latency, retries, and the finish reason or the error. Retries of a
// failed call come from its *model.CallError. Nothing here can hold an API
// key: providers keep keys out of their names and errors.
func modelCallTrace(p model.Provider, toolNames []string, messages int, latency time.Duration, resp *model.Response, err error) map[string]any {
	_, modelName, _ := strings.Cut(p.Name(), ":")
	d := map[string]any{"provider": p.Name(), "model": modelName, "tools": toolNames,
		"messageCount": messages, "latencyMs": latency.Milliseconds(), "retries": 0}
	if err != nil {
		var ce *model.CallError
		if errors.As(err, &ce) {
			d["retries"] = ce.Retries
		}
		d["error"] = err.Error()
		return d
	}
	d["retries"], d["finishReason"] = resp.Retries, resp.FinishReason
	return d
}
