package agent_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// A run with a custom tool and a custom provider: the model calls the tool,
// asks a question, and ends with the answer.
func Example() {
	ctx := context.Background()
	st, _ := sqlite.Open(ctx, "memory", nil)
	defer st.Close()
	tools := tool.NewRegistry()
	_ = tools.Register(tool.Func{ToolSpec: model.ToolSpec{Name: "weather", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(context.Context, json.RawMessage) (api.ToolResult, error) {
			return api.ToolResult{Content: "sunny"}, nil
		}}, true)
	turn := func(calls ...model.ToolCall) *model.Response {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: calls}}
	}
	provider := model.ProviderFunc{ProviderName: "example", Fn: func(ctx context.Context, req *model.Request, _ func(string)) (*model.Response, error) {
		switch last := req.Messages[len(req.Messages)-1]; last.Name {
		case "":
			return turn(model.ToolCall{ID: "c1", Name: "weather", Arguments: `{}`}), nil
		case "weather":
			return turn(model.ToolCall{ID: "c2", Name: "ask_user", Arguments: `{"title":"Go out?","mode":"single","options":[{"id":"yes","label":"Yes"},{"id":"no","label":"No"}]}`}), nil
		default:
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "answer: " + last.Content}}, nil
		}
	}}
	r, _ := agent.New(agent.Options{Store: st, Tools: tools, Agents: []*agent.Agent{{Provider: provider, Tools: tool.Allowlist{"weather", "ask_user"}}}})
	defer r.Shutdown()
	run, _ := r.Start(ctx, agent.StartParams{Owner: "me", Message: "plan my day"})
	for ev := range r.Events(ctx, run.SessionID, 0) {
		switch p := ev.Payload().(type) {
		case *api.ToolResultEvent:
			fmt.Println(p.Name, "→", p.Content)
		case *api.InputRequest:
			_, _ = r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "me", SessionID: run.SessionID, RequestID: p.ID, Answer: api.ContinueRequest{Selections: []string{"yes"}}})
		case *api.DoneEvent:
			fmt.Println("run", p.Status)
			return
		}
	}
	// Output:
	// weather → sunny
	// ask_user → {"selections":["yes"],"customInput":"","cancelled":false,"labels":["Yes"]}
	// run completed
}

// Runner.Run starts a run and yields its events until it pauses for a
// person or ends; Resolve answers the question and Events follows the rest.
func ExampleRunner_Run() {
	ctx := context.Background()
	st, _ := sqlite.Open(ctx, "memory", nil)
	defer st.Close()
	provider := model.ProviderFunc{ProviderName: "example", Fn: func(ctx context.Context, req *model.Request, _ func(string)) (*model.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == model.RoleTool {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "deploying to " + last.Content}}, nil
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "c1", Name: "ask_user",
			Arguments: `{"title":"Where to?","mode":"single","options":[{"id":"dev","label":"dev"},{"id":"prod","label":"prod"}]}`}}}}, nil
	}}
	r, _ := agent.New(agent.Options{Store: st, Tools: tool.NewRegistry(), Agents: []*agent.Agent{{Provider: provider, Tools: tool.Allowlist{"ask_user"}}}})
	defer r.Shutdown()
	var question *api.InputRequest
	for ev, err := range r.Run(ctx, agent.StartParams{Owner: "me", Message: "deploy"}) {
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(ev.Name)
		if q, ok := ev.Payload().(*api.InputRequest); ok {
			question = q
		}
	}
	res, _ := r.Resolve(ctx, agent.ResolveParams{By: "me", RequestID: question.ID, Answer: api.ContinueRequest{Selections: []string{"dev"}}, Surface: agent.SurfaceContinue, SessionID: question.SessionID})
	for ev := range r.Events(ctx, question.SessionID, res.AfterSeq) {
		if p, ok := ev.Payload().(*api.DoneEvent); ok {
			fmt.Println("run", p.Status)
			return
		}
	}
	// Output:
	// session
	// message
	// message
	// tool_call
	// user_input_required
	// run completed
}
