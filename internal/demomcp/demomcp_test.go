package demomcp_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/demomcp"
)

type bundle struct {
	ctx context.Context
	cs  *sdk.ClientSession
}

// setup connects a go-sdk client (protocol version, empty for the newest;
// elicit answers elicitation/create) to the demo server in memory.
func setup(t *testing.T, version string, elicit func(*sdk.ElicitRequest) *sdk.ElicitResult) bundle {
	t.Helper()
	ctx := t.Context()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := demomcp.NewServer("test").Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	opts := &sdk.ClientOptions{
		Capabilities:   &sdk.ClientCapabilities{Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}}},
		MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true},
	}
	if elicit != nil {
		opts.ElicitationHandler = func(_ context.Context, r *sdk.ElicitRequest) (*sdk.ElicitResult, error) { return elicit(r), nil }
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "t", Version: "1"}, opts).Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return bundle{ctx: ctx, cs: cs}
}

func textOf(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(*sdk.TextContent)
	require.True(t, ok, "%T", res.Content[0])
	return tc.Text
}

// A 2026-07-28 client (luban) gets the form as an input request with a
// requestState; the retry with the answer and the same state gets the plan,
// a decline or a cancel says nothing was planned, a foreign state is an
// error result.
func TestPlanRolloutAsksTheFormAsAnInputRequest(t *testing.T) {
	t.Parallel()
	b := setup(t, "", nil)
	tools, err := b.cs.ListTools(b.ctx, nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	require.Equal(t, demomcp.ToolName, tools.Tools[0].Name)
	require.True(t, tools.Tools[0].Annotations.ReadOnlyHint)

	res, err := b.cs.CallTool(b.ctx, &sdk.CallToolParams{Name: demomcp.ToolName, Arguments: map[string]any{}})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	require.NotEmpty(t, res.RequestState)
	form, ok := res.InputRequests[demomcp.FormKey].(*sdk.ElicitParams)
	require.True(t, ok, "%v", res.InputRequests)
	require.Equal(t, "form", form.Mode)
	require.Equal(t, demomcp.FormMessage, form.Message)
	schema, err := json.Marshal(form.RequestedSchema)
	require.NoError(t, err)
	require.JSONEq(t, demomcp.FormSchema, string(schema))

	retry := func(state string, answer *sdk.ElicitResult) *sdk.CallToolResult {
		t.Helper()
		res, err := b.cs.CallTool(b.ctx, &sdk.CallToolParams{Name: demomcp.ToolName, Arguments: map[string]any{},
			RequestState: state, InputResponses: sdk.InputResponseMap{demomcp.FormKey: answer}})
		require.NoError(t, err)
		require.False(t, res.NeedsInput())
		return res
	}
	done := retry(res.RequestState, &sdk.ElicitResult{Action: "accept", Content: map[string]any{
		"regions": []any{"cn-east", "eu-west"}, "window": "saturday", "canary": 25, "rollback": false}})
	require.False(t, done.IsError)
	require.Equal(t, "上线计划 (Rollout plan): 区域 (regions) 华东 (East China), 西欧 (West Europe); 窗口 (window) 周六上午 (Saturday morning); 灰度 (canary) 25%; 失败时不回滚 (no rollback on failure). 演示服务器只做计划，没有部署任何东西。(The demo server only plans; nothing was deployed.)", textOf(t, done))
	require.Contains(t, textOf(t, retry(res.RequestState, &sdk.ElicitResult{Action: "decline"})), "You declined the rollout form; nothing was planned.")
	require.Contains(t, textOf(t, retry(res.RequestState, &sdk.ElicitResult{Action: "cancel"})), "You cancelled the rollout form; nothing was planned.")
	forged := retry("forged", &sdk.ElicitResult{Action: "decline"})
	require.True(t, forged.IsError)
	require.Contains(t, textOf(t, forged), "not issued by the demo server")
}

// A client of 2025-11-25 gets the same form as elicitation/create (the
// SDK's server side of the multi round-trip), and its answer the plan.
func TestPlanRolloutAsksAnOlderClientWithElicitationCreate(t *testing.T) {
	t.Parallel()
	var asked []*sdk.ElicitParams
	b := setup(t, "2025-11-25", func(r *sdk.ElicitRequest) *sdk.ElicitResult {
		asked = append(asked, r.Params)
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"regions": []any{"cn-north"}, "window": "now", "canary": 100}}
	})
	res, err := b.cs.CallTool(b.ctx, &sdk.CallToolParams{Name: demomcp.ToolName, Arguments: map[string]any{}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Len(t, asked, 1)
	require.Equal(t, "form", asked[0].Mode)
	require.Equal(t, demomcp.FormMessage, asked[0].Message)
	require.Equal(t, "上线计划 (Rollout plan): 区域 (regions) 华北 (North China); 窗口 (window) 立即 (now); 灰度 (canary) 100%; 失败时自动回滚 (rollback on failure). 演示服务器只做计划，没有部署任何东西。(The demo server only plans; nothing was deployed.)", textOf(t, res))
}
