package aguitest

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/npmtest"
)

// examples/agui/main.mjs, run as its README says, answers a question typed
// on its standard input and finishes the run.
func TestExampleScript(t *testing.T) {
	t.Parallel()
	node := Node(t)
	require.NoError(t, npmtest.Install(ExampleDir(), "@ag-ui/client"))
	fake := fakeopenai.New(t)
	fake.Push(
		fakeopenai.Turn{Text: "先确认环境。", ToolCalls: []fakeopenai.ToolCall{{ID: "call_ex", Name: "ask_user", Arguments: askArgs}}},
		fakeopenai.Turn{Text: "已部署到生产。"},
	)
	p := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "luban-example", DB: "memory", ModelURL: fake.URL()})
	cmd := exec.Command(node, "main.mjs", "帮我部署")
	cmd.Dir = ExampleDir()
	cmd.Env = append(cmd.Environ(), "LUBAN_URL="+p.URL, "LUBAN_TOKEN=test-token")
	cmd.Stdin = strings.NewReader("2\n")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "? 部署到哪个环境？")
	require.Contains(t, string(out), `"selections":["prod"]`)
	require.Contains(t, string(out), "已部署到生产。")
	require.Contains(t, string(out), "run finished: success")
	require.Len(t, fake.Requests(), 2)
}
