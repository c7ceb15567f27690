package replicatest

import (
	"os"
	"testing"
	"time"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// lubanBin is the binary TestMain built.
var lubanBin string

// waitEvents bounds waits on SSE events; nothing sleeps.
const waitEvents = 30 * time.Second

// TestMain builds cmd/luban once when LUBAN_TEST_POSTGRES is set (without
// it every test skips). A failed build fails the package, never a skip.
func TestMain(m *testing.M) {
	if !pgtest.Enabled() {
		os.Exit(m.Run())
	}
	os.Exit(lubantest.RunWithLuban(m, "replicatest", &lubanBin))
}

// replicaOptions configures one `luban serve`.
type replicaOptions struct {
	Name  string             // A, B: labels logs and artifacts
	DB    string             // postgres://… with the test's search_path
	Fake  *fakeopenai.Server // the model (OPENAI_BASE_URL)
	Fault string             // LUBAN_FAULT: <point>[:<n>] makes the process SIGKILL itself
	TTL   string             // --interaction-ttl; default 1h
	Lease string             // --lease; default 30s
}

// replica is a running `luban serve` process (lubantest.Proc).
type replica = lubantest.Proc

// startReplica starts luban serve on 127.0.0.1:0 with the given lease (30s
// unless set: a loaded machine must not expire a live replica's lease and
// make a test see a takeover it did not ask for) and an SSE
// heartbeat of an hour (so live events can only come from LISTEN/NOTIFY, not
// from a heartbeat's re-read), and returns once /readyz answers 200. A
// replica still running when the test ends gets SIGTERM.
func startReplica(t *testing.T, o replicaOptions) *replica {
	t.Helper()
	var env []string
	if o.Fault != "" {
		env = append(env, "LUBAN_FAULT="+o.Fault)
	}
	lease := o.Lease
	if lease == "" {
		lease = "30s"
	}
	return lubantest.StartProc(t, lubantest.ProcOptions{
		Bin: lubanBin, Name: "replica-" + o.Name, DB: o.DB, ModelURL: o.Fake.URL(), APIKey: "sk-replicatest",
		Lease: lease, Heartbeat: "1h", TTL: o.TTL, Env: env, TermOnCleanup: true,
	})
}
