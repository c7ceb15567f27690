package crashtest

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// approvalConfig is a configuration whose agent must get approval before the
// test-only, non-idempotent record_note runs (docs/design.md §10).
func approvalConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "luban.yaml")
	require.NoError(t, os.WriteFile(p, []byte("agents:\n  - name: default\n    tools: [current_time, list_files]\n    approval: {record_note: always}\n"), 0o600))
	return p
}

func approveBody(sessionID, requestID string) string {
	b, _ := json.Marshal(map[string]any{"sessionId": sessionID, "requestId": requestID, "decision": "approve"})
	return string(b)
}

func approve(t *testing.T, p *proc, sessionID, requestID string) []lubantest.Event {
	t.Helper()
	resp, err := p.Post("/api/chat/continue", approveBody(sessionID, requestID))
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("continue: %s %s", resp.Status, b)
	}
	evs, err := p.API.Open(resp, p.Name+"-approve").All(waitEvents)
	require.NoError(t, err)
	return evs
}

// docs/design.md §10 with a real kill -9: an approval survives the process dying
// while it waits, and the approved non-idempotent tool then runs exactly
// once; when the process dies while the approved tool runs, the tool is not
// run again and its ToolResult says it was interrupted.
func TestCrashApproval(t *testing.T) {
	t.Parallel()
	noteTurn := fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_note_1", Name: "record_note", Arguments: `{"note":"deploy-42"}`}}}
	start := func(t *testing.T, fault string, lease ...string) (*testBundle, *proc, string, string, string) {
		b := setup(t)
		ws, cfg := t.TempDir(), approvalConfig(t)
		b.fake.Push(noteTurn, endTurn())
		p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Workspace: ws, Config: cfg, Fault: fault, Lease: strings.Join(lease, "")})
		st := p1.API.Chat("", userMessage)
		evs, err := st.Until("user_input_required", waitEvents)
		st.Close()
		require.NoError(t, err)
		var req struct{ ID, SessionID, Tool, Mode, ToolName string }
		require.NoError(t, json.Unmarshal(evs[len(evs)-1].Data, &req))
		require.Equal(t, "approval", req.Tool)
		require.Equal(t, "record_note", req.ToolName)
		return b, p1, ws, cfg, req.SessionID + " " + req.ID
	}
	split := func(s string) (string, string) {
		for i := range s {
			if s[i] == ' ' {
				return s[:i], s[i+1:]
			}
		}
		return s, ""
	}

	t.Run("killed_while_waiting", func(t *testing.T) {
		t.Parallel()
		b, p1, ws, cfg, ids := start(t, "")
		sid, rid := split(ids)
		p1.Kill9()
		p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake, Workspace: ws, Config: cfg})
		evs := approve(t, p2, sid, rid)
		require.Equal(t, "done", evs[len(evs)-1].Name)
		checkRun(t, p2, sid, "completed", b.fake)
		notes, err := os.ReadFile(filepath.Join(ws, "luban-notes.txt"))
		require.NoError(t, err)
		require.Equal(t, "deploy-42\n", string(notes), "ran exactly once")
		reqs := b.fake.Requests()
		require.Len(t, reqs, 2)
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		require.Equal(t, "call_note_1", last["tool_call_id"])
		require.Equal(t, "noted", last["content"])
	})

	t.Run("killed_while_the_approved_tool_runs", func(t *testing.T) {
		t.Parallel()
		b, p1, ws, cfg, ids := start(t, "tool_running")
		sid, rid := split(ids)
		resp, err := p1.Post("/api/chat/continue", approveBody(sid, rid))
		if err == nil {
			resp.Body.Close()
		}
		p1.WaitFault()
		p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake, Workspace: ws, Config: cfg})
		p2.API.EventsUntil(sid, 0, "done", waitEvents)
		tr := checkRun(t, p2, sid, "completed", b.fake)
		const interrupted = "interrupted: the server stopped while record_note was running after approval; it may or may not have taken effect, and it was not run again because it is not idempotent"
		found := false
		for _, m := range tr.Messages {
			if m.Role == "tool" && m.ToolCallID == "call_note_1" {
				require.Equal(t, interrupted, m.Content)
				require.True(t, m.IsError)
				found = true
			}
		}
		require.True(t, found)
		_, err = os.ReadFile(filepath.Join(ws, "luban-notes.txt"))
		require.True(t, os.IsNotExist(err), "record_note never ran twice (nor once: the crash came first)")
		reqs := b.fake.Requests()
		require.Len(t, reqs, 2)
		require.Equal(t, interrupted, reqs[1].Messages[len(reqs[1].Messages)-1]["content"])
	})

	// The process dies after the tool started (its marker
	// is durable) and the run is cancelled after the restart, before the
	// dead process's lease runs out: the call may have taken effect, and
	// its ToolResult says so instead of "not run".
	t.Run("killed_while_the_approved_tool_runs_then_cancelled", func(t *testing.T) {
		t.Parallel()
		b, p1, ws, cfg, ids := start(t, "tool_running", "1m")
		sid, rid := split(ids)
		resp, err := p1.Post("/api/chat/continue", approveBody(sid, rid))
		if err == nil {
			resp.Body.Close()
		}
		p1.WaitFault()
		p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake, Workspace: ws, Config: cfg, Lease: "1m"})
		var out struct{ Status string }
		require.Equal(t, http.StatusOK, p2.API.JSON("POST", "/api/sessions/"+sid+"/cancel", nil, &out))
		require.Equal(t, "cancelled", out.Status)
		tr := checkRun(t, p2, sid, "cancelled", b.fake)
		found := false
		for _, m := range tr.Messages {
			if m.Role == "tool" && m.ToolCallID == "call_note_1" {
				require.Equal(t, "interrupted: the run ended (cancelled) while record_note was running; it may have taken effect", m.Content)
				require.True(t, m.IsError)
				found = true
			}
		}
		require.True(t, found)
		require.Len(t, b.fake.Requests(), 1, "no model call after the cancel")
	})
}
