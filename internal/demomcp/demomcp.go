// Package demomcp is the MCP server of luban's built-in demo: `luban
// demo-mcp` serves it on stdin/stdout, and `luban serve` starts it as the
// stdio server "demo" when it plays the built-in scripted demo without a
// config (docs/scenario.md, docs/mcp.md). Its one tool, plan_rollout, asks
// the person a form through the MCP server's own question (docs/design.md §11), so
// the demo shows luban as an MCP client with the client's real code path.
//
// The server reads nothing but its stdin and writes nothing but its stdout
// (the protocol); it opens no file and no network connection, and it keeps
// no state between calls: the form's answer comes back in the retried call.
package demomcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server's name in its serverInfo; luban's built-in demo
// registers it under the same name, so its tool reaches the model as
// demo__plan_rollout.
const Name = "demo"

// ToolName is the server's one tool.
const ToolName = "plan_rollout"

// FormKey is the key of the form in the tool's input requests (the
// multi round-trip result of MCP 2026-07-28, SEP-2322).
const FormKey = "rollout"

// requestState is what the first answer of a call carries for its retry:
// the server is stateless, so it only marks the retry as the answer to
// this server's form.
const requestState = "demo/plan_rollout/form/1"

// FormMessage is the form's message, the title of the card.
const FormMessage = "上线安排 (Rollout plan)：发布到哪里、什么时候、先放多少流量？(Where, when, and how much traffic first?)"

// FormSchema is the form's requestedSchema: the regions (several of
// three, at least one), the window (one of three), the canary share (a
// whole percentage, 1–100) and whether to roll back on failure.
const FormSchema = `{
  "type": "object",
  "properties": {
    "regions": {
      "type": "array",
      "title": "发布区域 (Regions)",
      "description": "先发布到哪些区域？(Where to roll out first?)",
      "minItems": 1,
      "items": {"anyOf": [
        {"const": "cn-east", "title": "华东 (East China)"},
        {"const": "cn-north", "title": "华北 (North China)"},
        {"const": "eu-west", "title": "西欧 (West Europe)"}
      ]},
      "default": ["cn-east"]
    },
    "window": {
      "type": "string",
      "title": "发布窗口 (Window)",
      "oneOf": [
        {"const": "now", "title": "立即 (now)"},
        {"const": "tonight", "title": "今晚 22:00 (tonight 22:00)"},
        {"const": "saturday", "title": "周六上午 (Saturday morning)"}
      ],
      "default": "tonight"
    },
    "canary": {
      "type": "integer",
      "title": "灰度比例 % (Canary share %)",
      "description": "先让多少流量用上新版本？(How much traffic gets the new version first?)",
      "minimum": 1,
      "maximum": 100,
      "default": 10
    },
    "rollback": {
      "type": "boolean",
      "title": "失败时自动回滚 (Roll back on failure)",
      "default": true
    }
  },
  "required": ["regions", "window", "canary"]
}`

// titles are the labels of the form's choices, for the result text.
var titles = map[string]string{
	"cn-east": "华东 (East China)", "cn-north": "华北 (North China)", "eu-west": "西欧 (West Europe)",
	"now": "立即 (now)", "tonight": "今晚 22:00 (tonight 22:00)", "saturday": "周六上午 (Saturday morning)",
}

// NewServer returns the demo server with its one tool, plan_rollout. A
// call without a requestState answers with the form as an input request
// (FormKey); the retry that carries the person's answer and the same
// requestState gets the plan as text, or says that the form was declined
// or cancelled and nothing was planned. For a client of 2025-11-25 or older
// the SDK sends the same form as elicitation/create and calls the handler
// again with the answer. version is the serverInfo version.
func NewServer(version string) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: Name, Title: "luban demo", Version: version}, nil)
	srv.AddTool(&sdk.Tool{
		Name:        ToolName,
		Title:       "Plan the rollout",
		Description: "Plans the rollout of the demo deployment: asks the person for the regions, the window, the canary share and the rollback, and returns the plan. It changes nothing.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, planRollout)
	return srv
}

// Serve serves the demo server on stdin and stdout until the client
// closes the connection (luban closes the server's stdin) or ctx ends.
func Serve(ctx context.Context, version string) error {
	return NewServer(version).Run(ctx, &sdk.StdioTransport{})
}

func planRollout(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	p := req.Params
	if p.RequestState == "" {
		return &sdk.CallToolResult{RequestState: requestState, InputRequests: sdk.InputRequestMap{
			FormKey: &sdk.ElicitParams{Mode: "form", Message: FormMessage, RequestedSchema: json.RawMessage(FormSchema)},
		}}, nil
	}
	if p.RequestState != requestState {
		return errorResult("this requestState was not issued by the demo server; call plan_rollout again"), nil
	}
	r, ok := p.InputResponses[FormKey].(*sdk.ElicitResult)
	if !ok {
		return errorResult("the retry carries no answer to the rollout form"), nil
	}
	switch r.Action {
	case "accept":
		return text(Plan(r.Content)), nil
	case "decline":
		return text("你拒绝了上线安排表单，什么也没有计划。(You declined the rollout form; nothing was planned.)"), nil
	default:
		return text("你取消了上线安排表单，什么也没有计划。(You cancelled the rollout form; nothing was planned.)"), nil
	}
}

// Plan is the text of an accepted form's content: the regions, the window,
// the canary share and the rollback, each by its label; a value the form
// does not offer is shown as sent.
func Plan(content map[string]any) string {
	var regions []string
	if rs, ok := content["regions"].([]any); ok {
		for _, r := range rs {
			regions = append(regions, label(r))
		}
	}
	rollback := "失败时不回滚 (no rollback on failure)"
	if b, ok := content["rollback"].(bool); !ok || b {
		rollback = "失败时自动回滚 (rollback on failure)"
	}
	return fmt.Sprintf("上线计划 (Rollout plan): 区域 (regions) %s; 窗口 (window) %s; 灰度 (canary) %v%%; %s. 演示服务器只做计划，没有部署任何东西。(The demo server only plans; nothing was deployed.)",
		strings.Join(regions, ", "), label(content["window"]), content["canary"], rollback)
}

func label(v any) string {
	s := fmt.Sprint(v)
	if t, ok := titles[s]; ok {
		return t
	}
	return s
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

func errorResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}, IsError: true}
}
