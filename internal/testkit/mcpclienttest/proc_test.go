// luban as an MCP client end to end (docs/design.md §11):
// a real `luban serve` (built once by TestMain) with mcp.servers naming the
// official reference server (@modelcontextprotocol/server-everything, over
// stdio and streamable HTTP) or a go-sdk server that answers input_required,
// driven by the fake OpenAI model and answered through luban's HTTP API.
package mcpclienttest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/everythingtest"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

var lubanBin string

// waitEvents bounds every wait on SSE events and on a restarted run.
const waitEvents = 40 * time.Second

func TestMain(m *testing.M) { os.Exit(lubantest.RunWithLuban(m, "mcpclienttest", &lubanBin)) }

// startProc starts luban serve with config (a YAML file written for the
// test), a 1 s lease and the fake model.
func startProc(t *testing.T, name, db string, fake *fakeopenai.Server, config string) *lubantest.Proc {
	t.Helper()
	return startProcLease(t, name, db, fake, config, "1s")
}

// startProcLease is startProc with --lease lease.
func startProcLease(t *testing.T, name, db string, fake *fakeopenai.Server, config, lease string) *lubantest.Proc {
	t.Helper()
	return lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: name, DB: db, ModelURL: fake.URL(), Lease: lease, Env: []string{"LUBAN_CONFIG=" + config}})
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "luban.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// everythingConfig writes a configuration with one stdio MCP server,
// "everything" (server-everything), whose command line carries the marker
// mk that finds its processes.
func everythingConfig(t *testing.T) (cfg, mk string) {
	t.Helper()
	entry := everythingtest.Entry(t)
	mk = marker()
	return writeConfig(t, fmt.Sprintf(`
mcp:
  servers:
    - name: everything
      command: node
      args: [%q, stdio, %q]
`, entry, mk)), mk
}

func call(id, name, args string) fakeopenai.Turn {
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: id, Name: name, Arguments: args}}}
}

func text(s string) fakeopenai.Turn { return fakeopenai.Turn{Text: s} }

// decode returns an event's data as a JSON object.
func decode(t *testing.T, ev lubantest.Event) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, ev.Decode(&m))
	return m
}

// until reads st until the event called name and returns what it read.
func until(t *testing.T, st *lubantest.Stream, name string) []lubantest.Event {
	t.Helper()
	evs, err := st.Until(name, waitEvents)
	require.NoError(t, err, "waiting for %s", name)
	return evs
}

func last(evs []lubantest.Event) lubantest.Event { return evs[len(evs)-1] }

// toolResult returns the tool_result of call id among evs.
func toolResult(t *testing.T, evs []lubantest.Event, id string) map[string]any {
	t.Helper()
	for _, e := range evs {
		if e.Name == "tool_result" {
			m := decode(t, e)
			if m["toolCallId"] == id {
				return m
			}
		}
	}
	t.Fatalf("no tool_result for %s in %v", id, lubantest.Names(evs))
	return nil
}

// continueJSON posts an answer and decodes the JSON answer (status, body).
func continueJSON(t *testing.T, p *lubantest.Proc, body map[string]any) (int, map[string]any) {
	t.Helper()
	resp := p.API.Request("POST", "/api/chat/continue", body, "", "Accept", "application/json")
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "body %s", b)
	return resp.StatusCode, m
}

// waitGone polls until no process holds marker.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if len(everythingtest.Processes(marker)) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the stdio MCP server (%s) outlived luban: pids %v", marker, everythingtest.Processes(marker))
}

func marker() string { return fmt.Sprintf("--luban-mcpclienttest-%d", time.Now().UnixNano()) }
