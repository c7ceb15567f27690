package copilotkittest

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

var lubanBin string

func TestMain(m *testing.M) { os.Exit(lubantest.RunWithLuban(m, "copilotkittest", &lubanBin)) }

const askArgs = `{"title":"部署到哪个环境？","mode":"single","options":[{"id":"dev","label":"开发"},{"id":"prod","label":"生产"}]}`

// CopilotKit's runtime 1.75.0 and its front-end core drive luban through
// ask → interrupt → resume → success, then a decline: the declined run ends
// cleanly for @ag-ui/client 0.0.59 (no cancelled outcome, which its schema
// rejects), no interrupt stays pending, and the next message in the same
// thread starts a new run (docs/design.md §21 "Clients before 1.0").
func TestCopilotKitAskAndDecline(t *testing.T) {
	t.Parallel()
	Node(t)
	fake := fakeopenai.New(t)
	fake.Push(
		fakeopenai.Turn{Text: "先确认环境。", ToolCalls: []fakeopenai.ToolCall{{ID: "call_ck_1", Name: "ask_user", Arguments: askArgs}}},
		fakeopenai.Turn{Text: "已部署到开发环境。"},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_ck_2", Name: "ask_user", Arguments: askArgs}}},
		fakeopenai.Turn{Text: "你好！"},
	)
	p := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "luban", DB: filepath.Join(t.TempDir(), "luban.db"), ModelURL: fake.URL()})
	thread := "copilotkit-decline"
	app := Start(t, p.URL+"/api/agui", "test-token", thread, nil)

	// ask → interrupt
	d := app.Say("帮我部署")
	require.Empty(t, d.Errors)
	require.Len(t, d.Outcomes, 1)
	require.Equal(t, "interrupt", d.Outcomes[0].Outcome)
	require.Len(t, d.PendingInterrupts, 1)
	it := d.PendingInterrupts[0]
	require.Equal(t, "call_ck_1", it["toolCallId"])

	// answer → resume → success, the answer is the call's ToolResult
	d = app.Resume(map[string]any{"interruptId": it["id"], "status": "resolved", "payload": map[string]any{"selections": []string{"dev"}}})
	require.Empty(t, d.Errors)
	require.Len(t, d.Outcomes, 1)
	require.Equal(t, "success", d.Outcomes[0].Outcome)
	require.Empty(t, d.PendingInterrupts)
	require.Equal(t, 1, toolMessages(d, "call_ck_1"))

	// a new question, declined: a clean end, nothing pending
	d = app.Say("再部署一次")
	require.Len(t, d.PendingInterrupts, 1)
	it2 := d.PendingInterrupts[0]
	d = app.Resume(map[string]any{"interruptId": it2["id"], "status": "cancelled"})
	require.Empty(t, d.Errors, "a decline through the runtime ends without RUN_ERROR")
	require.Len(t, d.Outcomes, 1)
	require.Equal(t, "success", d.Outcomes[0].Outcome, "0.0.59 reads a RUN_FINISHED without outcome as success")
	require.Equal(t, map[string]any{"luban": map[string]any{"outcome": "cancelled"}}, d.Outcomes[0].Metadata)
	require.Empty(t, d.PendingInterrupts)

	// the thread takes a new run
	d = app.Say("你好")
	require.Empty(t, d.Errors)
	require.Len(t, d.Outcomes, 1)
	require.Equal(t, "success", d.Outcomes[0].Outcome)
	last := d.Messages[len(d.Messages)-1]
	require.Equal(t, "你好！", last["content"])

	// luban's own record: answered, cancelled, then a completed run.
	var tr api.Transcript
	require.Equal(t, http.StatusOK, p.API.JSON("GET", "/api/sessions/"+thread, nil, &tr))
	require.Len(t, tr.Interactions, 2)
	require.Equal(t, api.StatusAnswered, tr.Interactions[0].Status)
	require.Equal(t, api.StatusCancelled, tr.Interactions[1].Status)
	require.Len(t, fake.Requests(), 4)

	Validate(t, app.Bodies())
}

// toolMessages counts the front end's tool messages for toolCallID.
func toolMessages(d *Done, toolCallID string) int {
	n := 0
	for _, m := range d.Messages {
		if m["role"] == "tool" && m["toolCallId"] == toolCallID {
			n++
		}
	}
	return n
}

// A front-end tool registered as useHumanInTheLoop registers it is offered
// to luban's model through the CopilotKit runtime; the model's call to it
// is a durable interaction: luban is killed with SIGKILL while the person
// has not answered yet, the person answers on the restarted server, and
// the answer (the tool message CopilotKit sends with its follow-up run) is
// the call's ToolResult, once (docs/design.md §21 "Front-end tools").
func TestCopilotKitFrontendTool(t *testing.T) {
	t.Parallel()
	Node(t)
	fake := fakeopenai.New(t)
	fake.Push(
		fakeopenai.Turn{Text: "请确认。", ToolCalls: []fakeopenai.ToolCall{{ID: "call_fe_1", Name: "confirm_deploy", Arguments: `{"env":"prod"}`}}},
		fakeopenai.Turn{Text: "已部署到生产环境。"},
	)
	db := filepath.Join(t.TempDir(), "luban.db")
	first := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "luban-1", DB: db, ModelURL: fake.URL()})
	thread := "copilotkit-frontend"
	tool := Tool{Name: "confirm_deploy", Description: "Ask the person in the app to confirm a deployment.",
		Parameters: map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}, "required": []string{"env"}}}
	app := Start(t, first.URL+"/api/agui", "test-token", thread, []Tool{tool})

	app.Send(map[string]any{"op": "say", "text": "部署到生产"})
	l := app.Next()
	require.NotNil(t, l.Tool, "the front end runs its tool: %+v", l)
	require.Equal(t, "confirm_deploy", l.Tool.Name)
	require.Equal(t, "call_fe_1", l.Tool.ToolCallID)
	require.Equal(t, map[string]any{"env": "prod"}, l.Tool.Args)
	reqs := fake.Requests()
	require.Len(t, reqs, 1)
	require.Contains(t, reqs[0].ToolNames, "confirm_deploy", "the front-end tool is offered to the model")

	// The call waits as an interaction, persisted before it was announced.
	var pending api.PendingResponse
	require.Equal(t, http.StatusOK, first.API.JSON("GET", "/api/interactions/pending?sessionId="+thread, nil, &pending))
	require.NotNil(t, pending.Pending)
	require.Equal(t, api.ToolFrontend, pending.Pending.Tool)
	require.Equal(t, "call_fe_1", pending.Pending.ToolCallID)
	require.JSONEq(t, `{"env":"prod"}`, string(pending.Pending.Arguments))

	// luban dies before the person answers; the app keeps waiting.
	first.Kill9()
	second := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "luban-2", DB: db, ModelURL: fake.URL()})
	app.Send(map[string]any{"op": "url", "url": second.URL + "/api/agui"})
	require.Equal(t, second.URL+"/api/agui", app.Next().URL)

	// The person answers in the app: CopilotKit's follow-up run carries
	// the tool message.
	app.Send(map[string]any{"op": "respond", "result": map[string]any{"approved": true, "note": "go"}})
	l = app.Next()
	require.NotNil(t, l.Done, "%+v", l)
	d := l.Done
	require.Empty(t, d.Errors)
	require.NotEmpty(t, d.Outcomes)
	for _, o := range d.Outcomes {
		require.Equal(t, "success", o.Outcome)
	}
	require.Empty(t, d.PendingInterrupts)
	require.Equal(t, 1, toolMessages(d, "call_fe_1"), "the client's own result only, not a second one from luban")
	require.Equal(t, "已部署到生产环境。", d.Messages[len(d.Messages)-1]["content"])

	// The model's second call saw the result as the call's ToolResult and
	// was offered the tool again, after the restart.
	reqs = fake.Requests()
	require.Len(t, reqs, 2)
	require.Contains(t, reqs[1].ToolNames, "confirm_deploy")
	var toolMsg map[string]any
	for _, m := range reqs[1].Messages {
		if m["role"] == "tool" {
			toolMsg = m
		}
	}
	require.NotNil(t, toolMsg)
	require.Equal(t, "call_fe_1", toolMsg["tool_call_id"])
	require.JSONEq(t, `{"approved":true,"note":"go"}`, toolMsg["content"].(string))

	// luban's record: one ToolResult, the interaction answered with a receipt.
	var tr api.Transcript
	require.Equal(t, http.StatusOK, second.API.JSON("GET", "/api/sessions/"+thread, nil, &tr))
	n := 0
	for _, m := range tr.Messages {
		if m.Role == api.RoleTool && m.ToolCallID == "call_fe_1" {
			n++
			require.Equal(t, "confirm_deploy", m.Name)
		}
	}
	require.Equal(t, 1, n)
	require.Len(t, tr.Interactions, 1)
	require.Equal(t, api.StatusAnswered, tr.Interactions[0].Status)

	Validate(t, app.Bodies())
}
