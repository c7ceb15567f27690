package aguitest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

var lubanBin string

func TestMain(m *testing.M) { os.Exit(lubantest.RunWithLuban(m, "aguitest", &lubanBin)) }

// nodeTimeout bounds each wait on the HttpAgent script's next line.
const nodeTimeout = 60 * time.Second

const askArgs = `{"title":"部署到哪个环境？","mode":"single","options":[{"id":"dev","label":"开发"},{"id":"prod","label":"生产","recommended":true}]}`

// The official @ag-ui/client HttpAgent, unmodified, completes a durable
// ask → interrupt → resume cycle against a real luban process that is
// killed with SIGKILL and restarted on the same SQLite file between the
// interrupt and the resume (docs/design.md §13); the same interrupt answered again
// through POST /api/chat/continue loses.
func TestHttpAgentAcrossRestart(t *testing.T) {
	t.Parallel()
	node := Node(t)
	fake := fakeopenai.New(t)
	fake.Push(
		fakeopenai.Turn{Text: "先确认环境。", ToolCalls: []fakeopenai.ToolCall{{ID: "call_agui_1", Name: "ask_user", Arguments: askArgs}}},
		fakeopenai.Turn{Text: "好的，已部署到开发环境。"},
		fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_agui_2", Name: "ask_user", Arguments: askArgs}}},
	)
	db := filepath.Join(t.TempDir(), "luban.db")
	first := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "luban-1", DB: db, ModelURL: fake.URL()})

	out := t.TempDir()
	thread := "agui-thread-restart"
	cmd := exec.Command(node, filepath.Join(Dir(), "httpagent.mjs"), first.URL+"/api/agui", "test-token", thread, out)
	cmd.Dir = Dir()
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	expect := func(prefix string) string {
		t.Helper()
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					_ = cmd.Wait()
					t.Fatalf("the HttpAgent script ended before %q:\n%s", prefix, stderr.String())
				}
				if strings.HasPrefix(l, prefix) {
					return strings.TrimSpace(strings.TrimPrefix(l, prefix))
				}
				t.Logf("httpagent: %s", l)
			case <-time.After(nodeTimeout):
				t.Fatalf("no %q from the HttpAgent script within %s:\n%s", prefix, nodeTimeout, stderr.String())
			}
		}
	}

	var it struct {
		ID, ToolCallID string
	}
	require.NoError(t, json.Unmarshal([]byte(expect("INTERRUPT")), &it))
	require.Equal(t, "call_agui_1", it.ToolCallID)
	expect("RESTART")

	first.Kill9()
	second := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "luban-2", DB: db, ModelURL: fake.URL()})
	_, err = io.WriteString(stdin, second.URL+"/api/agui\n")
	require.NoError(t, err)
	expect("DONE")
	require.NoError(t, cmd.Wait(), "%s", stderr.String())

	// The restarted server's own record: one ToolResult for the call, the
	// question answered once, the second one cancelled.
	var tr api.Transcript
	require.Equal(t, http.StatusOK, second.API.JSON("GET", "/api/sessions/"+thread, nil, &tr))
	n := 0
	for _, m := range tr.Messages {
		if m.Role == api.RoleTool && m.ToolCallID == "call_agui_1" {
			n++
		}
	}
	require.Equal(t, 1, n, "exactly one ToolResult")
	require.Len(t, tr.Interactions, 2)
	require.Equal(t, api.StatusAnswered, tr.Interactions[0].Status)
	require.Equal(t, api.StatusCancelled, tr.Interactions[1].Status)
	require.Len(t, fake.Requests(), 3, "no model call after the cancel")

	// One winner: the interrupt AG-UI answered cannot be answered again
	// through POST /api/chat/continue.
	resp := second.API.Request("POST", "/api/chat/continue", map[string]any{"sessionId": thread, "requestId": it.ID,
		"selections": []string{"prod"}, "customInput": "", "cancelled": false}, "")
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusConflict, resp.StatusCode, "%s", body)
	require.Contains(t, string(body), "already_resolved")

	// Every body the HttpAgent received, against the published schemas.
	files, err := filepath.Glob(filepath.Join(out, "*.sse"))
	require.NoError(t, err)
	require.Len(t, files, 6, "one body per runAgent")
	bodies := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		bodies[filepath.Base(f)] = b
	}
	Validate(t, bodies)
}

// The official @ag-ui/client HttpAgent, unmodified, against a real luban
// process whose model asks two questions in one message (docs/design.md
// §32): one RUN_FINISHED with both in interrupts[], a resume[] of two with a
// refused entry that consumes nothing, then a resume[] of two that the run
// goes on from, with one model call after both (httpagent_batch.mjs).
func TestHttpAgentBatch(t *testing.T) {
	t.Parallel()
	node := Node(t)
	fake := fakeopenai.New(t)
	fake.Push(
		fakeopenai.Turn{Text: "两个问题。", ToolCalls: []fakeopenai.ToolCall{{ID: "call_batch_1", Name: "ask_user", Arguments: askArgs},
			{ID: "call_batch_2", Name: "ask_user", Arguments: askArgs}}},
		fakeopenai.Turn{Text: "都收到了。"},
	)
	srv := lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: "luban-batch", DB: filepath.Join(t.TempDir(), "luban.db"), ModelURL: fake.URL()})
	out := t.TempDir()
	thread := "agui-thread-batch"
	cmd := exec.Command(node, filepath.Join(Dir(), "httpagent_batch.mjs"), srv.URL+"/api/agui", "test-token", thread, out)
	cmd.Dir = Dir()
	res, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", res)
	require.Contains(t, string(res), "DONE ")
	require.Len(t, fake.Requests(), 2, "one model call after both answers")

	var tr api.Transcript
	require.Equal(t, http.StatusOK, srv.API.JSON("GET", "/api/sessions/"+thread, nil, &tr))
	require.Len(t, tr.Interactions, 2)
	for _, it := range tr.Interactions {
		require.Equal(t, api.StatusAnswered, it.Status)
	}
	files, err := filepath.Glob(filepath.Join(out, "*.sse"))
	require.NoError(t, err)
	require.Len(t, files, 3, "one body per runAgent")
	bodies := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		bodies[filepath.Base(f)] = b
	}
	Validate(t, bodies)
}
