package tool

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
)

// CurrentTime is a built-in read-only tool that returns the server's time in
// RFC 3339. Now defaults to time.Now.
func CurrentTime(now func() time.Time) Tool {
	if now == nil {
		now = time.Now
	}
	return Func{
		ToolSpec: model.ToolSpec{
			Name:        "current_time",
			Description: "Returns the current date and time of the server (RFC 3339). 返回服务器当前时间。",
			Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
		},
		Fn: func(ctx context.Context, _ json.RawMessage) (api.ToolResult, error) {
			return api.ToolResult{Content: now().Format(time.RFC3339)}, nil
		},
	}
}
