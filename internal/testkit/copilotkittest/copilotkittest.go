// Package copilotkittest runs CopilotKit against luban in tests (docs/design.md
// §21 "Clients before 1.0" and "Front-end tools"): the CopilotKit runtime
// (@copilotkit/runtime 1.75.0) with luban as its AG-UI agent, the headless
// front-end core of @copilotkit/react-core 1.74.0 (@copilotkit/core 1.74.0),
// and the @ag-ui/client and @ag-ui/core 0.0.59 they pin, unmodified. Node is
// the one thing a test may lack: without a node command the tests that need
// it skip; the npm packages of package.json are installed on first use (npm
// ci), as scripts/test.sh does for CI.
package copilotkittest

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lubanhq/luban/internal/testkit/npmtest"
)

// Dir is this package's directory: package.json, the .mjs scripts and
// node_modules.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(file)
}

// Node returns the node command, after making sure the npm packages are
// installed; it skips the test when there is no node command and fails it
// when the packages cannot be installed.
func Node(t testing.TB) string {
	t.Helper()
	return npmtest.Node(t, Dir(), "@copilotkit/runtime", "the CopilotKit tests")
}

// Validate checks raw POST /api/agui response bodies with validate.mjs:
// every event against @ag-ui/core 0.0.59's EventSchemas, every stream
// against @ag-ui/client 0.0.59's verifyEvents. It skips without node.
func Validate(t testing.TB, bodies map[string][]byte) {
	t.Helper()
	node := Node(t)
	dir := t.TempDir()
	args := []string{filepath.Join(Dir(), "validate.mjs")}
	for name, b := range bodies {
		f := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+".sse")
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	cmd := exec.Command(node, args...)
	cmd.Dir = Dir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("AG-UI 0.0.59 schema validation failed: %v\n%s", err, out)
	}
	t.Logf("validated with @ag-ui/core and @ag-ui/client 0.0.59:\n%s", out)
}

// Tool is a front-end tool the application registers (RunAgentInput.tools):
// Parameters is its JSON Schema.
type Tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	Parameters  map[string]any `json:"parameters"`
}

// App is copilotkit.mjs running: a CopilotKit runtime whose agent "luban"
// is luban's /api/agui, and the front-end core on it, on one thread.
type App struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *strings.Builder
	// Out is the directory holding every response body luban sent
	// (luban-N.sse).
	Out string
}

// Line is one line the script printed: exactly one field is set.
type Line struct {
	Ready bool      `json:"ready"`
	Fail  string    `json:"fail"`
	Tool  *ToolCall `json:"tool"`
	Done  *Done     `json:"done"`
	URL   string    `json:"url"`
}

// ToolCall is a front-end tool call waiting for the person.
type ToolCall struct {
	Name       string         `json:"name"`
	ToolCallID string         `json:"toolCallId"`
	Args       map[string]any `json:"args"`
}

// Done is what the front end saw of one say or resume: the RUN_FINISHED
// outcomes and the errors of its runs (its follow-up runs included), the
// interrupts still pending and the messages it holds.
type Done struct {
	Outcomes []struct {
		Outcome  string         `json:"outcome"`
		Metadata map[string]any `json:"metadata"`
	} `json:"outcomes"`
	Errors            []map[string]any `json:"errors"`
	PendingInterrupts []map[string]any `json:"pendingInterrupts"`
	Messages          []map[string]any `json:"messages"`
}

// Timeout bounds each wait for the script's next line.
const Timeout = 90 * time.Second

// Start runs copilotkit.mjs against lubanURL (…/api/agui) with token on
// thread, the front end offering tools, and waits until the front end sees
// the runtime's agent.
func Start(t testing.TB, lubanURL, token, thread string, tools []Tool) *App {
	t.Helper()
	node := Node(t)
	if tools == nil {
		tools = []Tool{}
	}
	tj, err := json.Marshal(tools)
	if err != nil {
		t.Fatal(err)
	}
	a := &App{t: t, lines: make(chan string, 16), stderr: &strings.Builder{}, Out: t.TempDir()}
	a.cmd = exec.Command(node, filepath.Join(Dir(), "copilotkit.mjs"), lubanURL, token, thread, a.Out, string(tj))
	a.cmd.Dir = Dir()
	// The runtime's and the packages' telemetry stay off in tests.
	a.cmd.Env = append(os.Environ(), "COPILOTKIT_TELEMETRY_DISABLED=true", "DO_NOT_TRACK=1", "SCARF_ANALYTICS=false")
	if a.stdin, err = a.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a.cmd.Stderr = a.stderr
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.cmd.Process.Kill(); _ = a.cmd.Wait() })
	go func() {
		defer close(a.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
	}()
	if l := a.Next(); !l.Ready {
		t.Fatalf("copilotkit.mjs did not start: %+v", l)
	}
	return a
}

// Send writes one command (see copilotkit.mjs).
func (a *App) Send(cmd map[string]any) {
	a.t.Helper()
	b, err := json.Marshal(cmd)
	if err != nil {
		a.t.Fatal(err)
	}
	if _, err := a.stdin.Write(append(b, '\n')); err != nil {
		a.t.Fatalf("copilotkit.mjs stdin: %v\n%s", err, a.stderr)
	}
}

// Next is the script's next line; a "fail" line, an end of the script or
// Timeout without a line fails the test.
func (a *App) Next() Line {
	a.t.Helper()
	select {
	case l, ok := <-a.lines:
		if !ok {
			_ = a.cmd.Wait()
			a.t.Fatalf("copilotkit.mjs ended:\n%s", a.stderr)
		}
		var out Line
		if err := json.Unmarshal([]byte(l), &out); err != nil {
			a.t.Fatalf("copilotkit.mjs printed %q: %v", l, err)
		}
		if out.Fail != "" {
			a.t.Fatalf("copilotkit.mjs: %s\n%s", out.Fail, a.stderr)
		}
		return out
	case <-time.After(Timeout):
		a.t.Fatalf("no line from copilotkit.mjs within %s:\n%s", Timeout, a.stderr)
	}
	return Line{}
}

// Say sends a user message and returns what the front end saw of the run.
func (a *App) Say(text string) *Done {
	a.t.Helper()
	a.Send(map[string]any{"op": "say", "text": text})
	return a.done()
}

// Resume runs with resume entries ({interruptId, status, payload}).
func (a *App) Resume(entries ...map[string]any) *Done {
	a.t.Helper()
	a.Send(map[string]any{"op": "resume", "resume": entries})
	return a.done()
}

func (a *App) done() *Done {
	a.t.Helper()
	l := a.Next()
	if l.Done == nil {
		a.t.Fatalf("copilotkit.mjs: expected the end of a run, got %+v", l)
	}
	return l.Done
}

// Bodies is every response body luban sent so far, by file name.
func (a *App) Bodies() map[string][]byte {
	a.t.Helper()
	files, err := filepath.Glob(filepath.Join(a.Out, "*.sse"))
	if err != nil {
		a.t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			a.t.Fatal(err)
		}
		out[filepath.Base(f)] = b
	}
	return out
}
