package crashtest

import (
	"os"
	"testing"
	"time"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// lubanBin is the luban binary TestMain built for every test of the package.
var lubanBin string

// waitEvents bounds waits on SSE events, recovery after a lease expiry
// included; nothing here sleeps.
const waitEvents = 30 * time.Second

// TestMain builds cmd/luban once; a failed build fails the package.
func TestMain(m *testing.M) { os.Exit(lubantest.RunWithLuban(m, "crashtest", &lubanBin)) }

// procOptions configures one `luban serve` process.
type procOptions struct {
	// Name labels the process in logs and artifacts (p1, p2, ...).
	Name string
	// DB is the SQLite path, or "memory".
	DB string
	// Fake is the model server (OPENAI_BASE_URL).
	Fake *fakeopenai.Server
	// Fault is LUBAN_FAULT: <point>[:<n>] makes the process SIGKILL itself.
	Fault string
	// Agent is LUBAN_AGENT (default agent name "default").
	Agent string
	// Workspace is --workspace; default a temporary directory.
	Workspace string
	// Config is LUBAN_CONFIG, a configuration file (docs/agents.md).
	Config string
	// Lease is --lease; default "1s".
	Lease string
}

// proc is a running `luban serve` (lubantest.Proc).
type proc = lubantest.Proc

// startProc starts luban serve with a 1s lease (o.Lease), a 500ms SSE heartbeat and
// the test tools (LUBAN_TEST_TOOLS=1), and returns once /readyz answers
// 200. The process is killed when the test ends if still running.
func startProc(t *testing.T, o procOptions) *proc {
	t.Helper()
	env := []string{"LUBAN_TEST_TOOLS=1"}
	if o.Fault != "" {
		env = append(env, "LUBAN_FAULT="+o.Fault)
	}
	if o.Agent != "" {
		env = append(env, "LUBAN_AGENT="+o.Agent)
	}
	if o.Config != "" {
		env = append(env, "LUBAN_CONFIG="+o.Config)
	}
	return lubantest.StartProc(t, lubantest.ProcOptions{
		Bin: lubanBin, Name: o.Name, DB: o.DB, ModelURL: o.Fake.URL(), APIKey: "sk-crashtest",
		Lease: o.Lease, Heartbeat: "500ms", Workspace: o.Workspace, Env: env,
	})
}
