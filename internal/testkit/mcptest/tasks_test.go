package mcptest_test

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/mcptest"
	"github.com/lubanhq/luban/internal/testkit/npmtest"
)

// taskWire is a 2025-11-25 Task as tasks.mjs prints it.
type taskWire struct {
	TaskID        string  `json:"taskId"`
	Status        string  `json:"status"`
	StatusMessage string  `json:"statusMessage"`
	CreatedAt     string  `json:"createdAt"`
	LastUpdatedAt string  `json:"lastUpdatedAt"`
	TTL           *int64  `json:"ttl"`
	PollInterval  float64 `json:"pollInterval"`
}

// taskLine is one line tasks.mjs writes.
type taskLine struct {
	Tool *struct {
		Name      string `json:"name"`
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	} `json:"tool"`
	Tasks       json.RawMessage `json:"tasks"`
	TaskCreated *taskWire       `json:"taskCreated"`
	TaskStatus  *taskWire       `json:"taskStatus"`
	Task        *taskWire       `json:"task"`
	Cancelled   *taskWire       `json:"cancelled"`
	Result      *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool           `json:"isError"`
		Meta    map[string]any `json:"_meta"`
	} `json:"result"`
	Error *string `json:"error"`
}

// tsTasks starts tasks.mjs (the official TypeScript SDK client's tasks API)
// with args; its lines arrive on the channel, closed when it exits.
func tsTasks(t *testing.T, base string, args ...string) <-chan taskLine {
	t.Helper()
	node, err := exec.LookPath("node")
	require.NoError(t, err, "the TypeScript SDK client needs node (scripts/test.sh installs it)")
	require.NoError(t, npmtest.Install(mcptest.Dir(), "@modelcontextprotocol/sdk"))
	cmd := exec.Command(node, append([]string{filepath.Join(mcptest.Dir(), "tasks.mjs"), base, "test-token"}, args...)...)
	cmd.Dir = mcptest.Dir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ch := make(chan taskLine, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l taskLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("tasks.mjs wrote %q: %v", sc.Text(), err)
				continue
			}
			ch <- l
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("tasks.mjs stderr:\n%s", stderr.String())
		}
	})
	return ch
}

func nextTask(t *testing.T, ch <-chan taskLine) taskLine {
	t.Helper()
	v := recv(t, chanOf(ch))
	require.True(t, v.bool, "tasks.mjs exited without another line")
	return v.taskLine
}

// chanOf turns ch into a channel of (line, open) pairs recv can wait on.
func chanOf(ch <-chan taskLine) <-chan struct {
	taskLine
	bool
} {
	out := make(chan struct {
		taskLine
		bool
	}, 1)
	go func() {
		l, ok := <-ch
		out <- struct {
			taskLine
			bool
		}{l, ok}
	}()
	return out
}

// The official TypeScript SDK client, as a host that speaks the 2025-11-25
// tasks utility, asks ask_user as a task: the server declares tasks and the
// tool's taskSupport, the task starts working and is input_required while
// the question waits on luban, and the SDK's tasks/result is held. luban is
// killed with SIGKILL; against the next process the host comes back with
// the task id alone: tasks/get and tasks/list still have it (a row in the
// store), and tasks/result returns the answer given on luban, marked with
// the task, with one ToolResult stored.
func TestTypeScriptTaskAcrossKill9(t *testing.T) {
	t.Parallel()
	first, start := twoLives(t)
	lines := tsTasks(t, first.URL, "create", "ask_user", singleArgs)
	l := nextTask(t, lines)
	require.NotNil(t, l.Tool, "%+v", l)
	require.Equal(t, "optional", l.Tool.Execution.TaskSupport)
	require.JSONEq(t, `{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`, string(l.Tasks))

	l = nextTask(t, lines)
	require.NotNil(t, l.TaskCreated, "%+v", l)
	created := l.TaskCreated
	require.Equal(t, "working", created.Status, "a task begins working")
	require.True(t, strings.HasPrefix(created.TaskID, "task_") && len(created.TaskID) == len("task_")+26, created.TaskID)
	require.NotNil(t, created.TTL)
	require.GreaterOrEqual(t, *created.TTL, int64(60_000), "at least the ttl the host asked for")
	l = nextTask(t, lines)
	require.NotNil(t, l.TaskStatus, "%+v", l)
	require.Equal(t, "input_required", l.TaskStatus.Status)
	require.Contains(t, l.TaskStatus.StatusMessage, "部署到哪个环境？")

	// The question is on luban, saying which host asked.
	var inbox struct {
		Interactions []struct {
			ID        string         `json:"id"`
			SessionID string         `json:"sessionId"`
			Source    map[string]any `json:"source"`
		} `json:"interactions"`
	}
	require.Equal(t, 200, first.API.JSON("GET", "/api/interactions?status=pending", nil, &inbox))
	require.Len(t, inbox.Interactions, 1)
	q := inbox.Interactions[0]
	require.Equal(t, map[string]any{"kind": "mcp", "client": "luban-ts-tasks", "clientVersion": "2.5.0"}, q.Source)

	first.Kill9()
	for l = nextTask(t, lines); l.Error == nil; l = nextTask(t, lines) {
		require.NotNil(t, l.TaskStatus, "%+v", l)
	}

	second := start("second")
	lines = tsTasks(t, second.URL, "resume", created.TaskID)
	l = nextTask(t, lines)
	require.NotNil(t, l.Task, "%+v", l)
	require.Equal(t, created.TaskID, l.Task.TaskID)
	require.Equal(t, "input_required", l.Task.Status, "the task survived the restart")
	require.Equal(t, created.CreatedAt, l.Task.CreatedAt)
	l = nextTask(t, lines)
	require.NotNil(t, l.Tasks, "%+v", l)
	var listed []taskWire
	require.NoError(t, json.Unmarshal(l.Tasks, &listed))
	require.Len(t, listed, 1)
	require.Equal(t, created.TaskID, listed[0].TaskID)

	answer(t, second, q.SessionID, q.ID, "prod")
	l = nextTask(t, lines)
	require.NotNil(t, l.Result, "%+v", l)
	require.False(t, l.Result.IsError)
	require.Len(t, l.Result.Content, 1)
	require.Equal(t, wantProd, l.Result.Content[0].Text)
	require.Equal(t, map[string]any{"taskId": created.TaskID}, l.Result.Meta["io.modelcontextprotocol/related-task"])

	tools, audit := stored(t, second, q.SessionID)
	require.Equal(t, []string{wantProd}, tools)
	require.Equal(t, []string{"requested", "answered"}, audit)
	require.Equal(t, 1, sessionCount(t, second))
}

// tasks/cancel from the TypeScript SDK client cancels the task and its
// question on luban (the run gets the cancelled result); the task stays
// cancelled, and a second cancel of the terminal task is refused (-32602).
func TestTypeScriptTaskCancel(t *testing.T) {
	t.Parallel()
	p, _ := twoLives(t)
	lines := tsTasks(t, p.URL, "create", "ask_user", `{"title":"要取消吗？","mode":"text"}`)
	nextTask(t, lines)
	created := nextTask(t, lines).TaskCreated
	require.NotNil(t, created)
	require.Equal(t, "input_required", nextTask(t, lines).TaskStatus.Status)

	cl := tsTasks(t, p.URL, "cancel", created.TaskID)
	l := nextTask(t, cl)
	require.NotNil(t, l.Cancelled, "%+v", l)
	require.Equal(t, "cancelled", l.Cancelled.Status)
	require.Equal(t, "cancelled", nextTask(t, cl).Task.Status)
	l = nextTask(t, cl)
	require.NotNil(t, l.Error, "%+v", l)
	require.Contains(t, *l.Error, "-32602")
	require.Contains(t, *l.Error, "already in terminal status 'cancelled'")

	// The host's held tasks/result gets the question's cancelled result.
	l = nextTask(t, lines)
	require.NotNil(t, l.Result, "%+v", l)
	require.Contains(t, l.Result.Content[0].Text, `"cancelled":true`)
	var inbox struct {
		Interactions []struct {
			Status string `json:"status"`
		} `json:"interactions"`
	}
	require.Equal(t, 200, p.API.JSON("GET", "/api/interactions?status=resolved", nil, &inbox))
	require.Len(t, inbox.Interactions, 1)
	require.Equal(t, "cancelled", inbox.Interactions[0].Status)
}
