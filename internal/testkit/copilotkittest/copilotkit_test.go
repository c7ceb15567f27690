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
// thread starts a new run (docs/design.md §13 "Clients before 1.0").
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
