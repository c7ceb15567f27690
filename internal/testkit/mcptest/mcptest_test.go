package mcptest_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/mcptest"
	"github.com/lubanhq/luban/internal/testkit/npmtest"
)

var lubanBin string

func TestMain(m *testing.M) { os.Exit(lubantest.RunWithLuban(m, "mcptest", &lubanBin)) }

const (
	singleArgs     = `{"title":"部署到哪个环境？","mode":"single","options":[{"id":"dev","label":"开发"},{"id":"prod","label":"生产","recommended":true}]}`
	legacyProtocol = "2025-11-25"
	wait           = 30 * time.Second
)

// twoLives starts `luban serve` on a SQLite file and returns a function
// that starts the next process on the same file (after a Kill9).
func twoLives(t *testing.T) (*lubantest.Proc, func(name string) *lubantest.Proc) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "luban.db")
	model := fakeopenai.New(t).URL()
	ws := t.TempDir()
	start := func(name string) *lubantest.Proc {
		return lubantest.StartProc(t, lubantest.ProcOptions{Bin: lubanBin, Name: name, DB: db, ModelURL: model, Workspace: ws})
	}
	return start("first"), start
}

// connect opens a Go SDK client session (protocol version, "" = newest)
// with the SDK's multi round-trip loop off.
func connect(t *testing.T, base, token, version string) (*sdk.ClientSession, <-chan mcptest.Progress) {
	t.Helper()
	return mcptest.Connect(t, base, token, version, "luban-go-host", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
}

func recv[T any](t *testing.T, ch <-chan T) T { t.Helper(); return mcptest.Recv(t, ch) }

func text(t *testing.T, res *sdk.CallToolResult) string { t.Helper(); return mcptest.Text(t, res) }

// call runs CallTool in the background with a progress token.
func call(cs *sdk.ClientSession, p *sdk.CallToolParams) <-chan mcptest.CallResult {
	return mcptest.CallAsync(cs, p, "tok")
}

func answer(t *testing.T, p *lubantest.Proc, sessionID, requestID, option string) {
	t.Helper()
	resp := p.API.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": requestID,
		"selections": []string{option}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
}

// stored returns the ToolResult contents luban's transcript holds for the
// session and the audit actions of its questions.
func stored(t *testing.T, p *lubantest.Proc, sessionID string) (tools []string, audit []string) {
	t.Helper()
	var tr struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	require.Equal(t, 200, p.API.JSON("GET", "/api/sessions/"+sessionID, nil, &tr))
	for _, m := range tr.Messages {
		if m.Role == "tool" {
			tools = append(tools, m.Content)
		}
	}
	var trace struct {
		Audit []struct {
			Action string `json:"action"`
		} `json:"audit"`
	}
	require.Equal(t, 200, p.API.JSON("GET", "/api/sessions/"+sessionID+"/trace", nil, &trace))
	for _, a := range trace.Audit {
		audit = append(audit, a.Action)
	}
	return tools, audit
}

func sessionCount(t *testing.T, p *lubantest.Proc) int {
	t.Helper()
	var list struct {
		Sessions []any `json:"sessions"`
	}
	require.Equal(t, 200, p.API.JSON("GET", "/api/sessions", nil, &list))
	return len(list.Sessions)
}

var wantProd = askuser.AnsweredResult(&api.Prompt{Tool: "ask_user", Title: "部署到哪个环境？", Mode: "single",
	Options: []api.Option{{ID: "dev", Label: "开发"}, {ID: "prod", Label: "生产", Recommended: true}}},
	api.Answer{Selections: []string{"prod"}}).Content

// A 2026-07-28 host keeps its requestState across a kill -9 of luban: the
// retry held open when luban died fails; against the next process the same
// requestState gets input_required (the same question, its page on the new
// address), then the answer given there — the same answer on every retry,
// whatever the retry carries, and one ToolResult stored.
func TestModernClientAcrossKill9(t *testing.T) {
	t.Parallel()
	first, start := twoLives(t)
	cs, prog := connect(t, first.URL, "test-token", "")
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	res := recv(t, call(cs, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)}))
	require.NoError(t, res.Err)
	require.True(t, res.Res.NeedsInput())
	state := res.Res.RequestState
	sessionID, _ := res.Res.Meta["sessionId"].(string)
	requestID, _ := res.Res.Meta["requestId"].(string)
	require.NotEmpty(t, state)

	// The host's user accepted the URL: the retry is held until the answer.
	held := call(cs, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), RequestState: state,
		InputResponses: sdk.InputResponseMap{"luban": &sdk.ElicitResult{Action: "accept"}}})
	require.Equal(t, requestID, recv(t, prog).RequestID)
	first.Kill9()
	require.Error(t, recv(t, held).Err, "the held retry ends with the process")

	second := start("second")
	cs2, _ := connect(t, second.URL, "test-token", "")
	retry := func(action string) *sdk.CallToolResult {
		t.Helper()
		p := &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), RequestState: state}
		if action != "" {
			p.InputResponses = sdk.InputResponseMap{"luban": &sdk.ElicitResult{Action: action}}
		}
		o := recv(t, call(cs2, p))
		require.NoError(t, o.Err)
		return o.Res
	}
	again := retry("")
	require.True(t, again.NeedsInput(), "still pending after the restart")
	require.Equal(t, requestID, again.Meta["requestId"])
	el, ok := again.InputRequests["luban"].(*sdk.ElicitParams)
	require.True(t, ok)
	require.Equal(t, second.URL+"/q/"+requestID, el.URL)
	// Another principal's host cannot use the state.
	other, _ := connect(t, second.URL, "other-token", "")
	o := recv(t, call(other, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), RequestState: state}))
	require.ErrorContains(t, o.Err, "invalid requestState")

	answer(t, second, sessionID, requestID, "prod")
	for _, action := range []string{"", "accept", "decline", "cancel", ""} {
		r := retry(action)
		require.False(t, r.NeedsInput())
		require.Equal(t, "answered", r.Meta["status"], "retry with %q", action)
		require.Equal(t, wantProd, text(t, r), "exactly once: retry with %q", action)
	}
	tools, audit := stored(t, second, sessionID)
	require.Equal(t, []string{wantProd}, tools)
	require.Equal(t, []string{"requested", "answered"}, audit)
	require.Equal(t, 1, sessionCount(t, second))
}

// An older host's held call dies with luban (kill -9). It reconnects to the
// next process and calls again with _meta.sessionId and the same
// arguments: it waits on the same question (no second one), and gets the
// answer given there; a call with _meta.requestId afterwards gets that
// same result.
func TestOlderClientAcrossKill9(t *testing.T) {
	t.Parallel()
	first, start := twoLives(t)
	cs, prog := connect(t, first.URL, "test-token", legacyProtocol)
	held := call(cs, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)})
	pr := recv(t, prog)
	require.NotEmpty(t, pr.RequestID)
	first.Kill9()
	require.Error(t, recv(t, held).Err, "the held call ends with the process")

	second := start("second")
	cs2, prog2 := connect(t, second.URL, "test-token", legacyProtocol)
	held2 := call(cs2, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), Meta: sdk.Meta{"sessionId": pr.SessionID}})
	pr2 := recv(t, prog2)
	require.Equal(t, pr, pr2, "the same question, not a second one")
	answer(t, second, pr.SessionID, pr.RequestID, "prod")
	o := recv(t, held2)
	require.NoError(t, o.Err)
	require.Equal(t, wantProd, text(t, o.Res))
	require.Equal(t, "answered", o.Res.Meta["status"])

	again := recv(t, call(cs2, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), Meta: sdk.Meta{"requestId": pr.RequestID}}))
	require.NoError(t, again.Err)
	require.Equal(t, wantProd, text(t, again.Res))
	tools, audit := stored(t, second, pr.SessionID)
	require.Equal(t, []string{wantProd}, tools)
	require.Equal(t, []string{"requested", "answered"}, audit)
	require.Equal(t, 1, sessionCount(t, second))
}

// tsLine is one line client.mjs writes.
type tsLine struct {
	Protocol *string `json:"protocol"`
	Progress *struct {
		Meta struct {
			SessionID string `json:"sessionId"`
			RequestID string `json:"requestId"`
		} `json:"_meta"`
		Message string `json:"message"`
	} `json:"progress"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool           `json:"isError"`
		Meta    map[string]any `json:"_meta"`
	} `json:"result"`
	Error *string `json:"error"`
}

// tsCall starts client.mjs (the official TypeScript SDK client) calling
// tool; its lines arrive on the channel, which is closed when it exits.
func tsCall(t *testing.T, base, token, tool, args, meta string) <-chan tsLine {
	t.Helper()
	node, err := exec.LookPath("node")
	require.NoError(t, err, "the TypeScript SDK client needs node (scripts/test.sh installs it)")
	require.NoError(t, npmtest.Install(mcptest.Dir(), "@modelcontextprotocol/sdk"))
	argv := []string{filepath.Join(mcptest.Dir(), "client.mjs"), base, token, tool, args}
	if meta != "" {
		argv = append(argv, meta)
	}
	cmd := exec.Command(node, argv...)
	cmd.Dir = mcptest.Dir()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	ch := make(chan tsLine, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var l tsLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("client.mjs wrote %q: %v", sc.Text(), err)
				continue
			}
			ch <- l
		}
		_ = cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("client.mjs stderr:\n%s", stderr.String())
		}
	})
	return ch
}

// next returns the next line that is not a progress one when skip is set.
func next(t *testing.T, ch <-chan tsLine) tsLine {
	t.Helper()
	l, ok := <-chanWithTimeout(t, ch)
	require.True(t, ok, "client.mjs exited without another line")
	return l
}

func chanWithTimeout(t *testing.T, ch <-chan tsLine) <-chan tsLine {
	t.Helper()
	out := make(chan tsLine, 1)
	select {
	case l, ok := <-ch:
		if ok {
			out <- l
		}
		close(out)
	case <-time.After(wait):
		t.Fatal("timed out waiting for client.mjs")
	}
	return out
}

// The official TypeScript SDK client (protocol 2025-11-25: its call is held
// open) asks ask_user; luban is killed with SIGKILL while it waits, and the
// call fails. Against the next process the same client calls again with
// _meta.sessionId and the same arguments, waits on the same question, and
// returns the answer given on luban; luban stored one ToolResult.
func TestTypeScriptClientAcrossKill9(t *testing.T) {
	t.Parallel()
	first, start := twoLives(t)
	lines := tsCall(t, first.URL, "test-token", "ask_user", singleArgs, "")
	l := next(t, lines)
	require.NotNil(t, l.Protocol, "first line: %+v", l)
	require.Equal(t, legacyProtocol, *l.Protocol)
	l = next(t, lines)
	require.NotNil(t, l.Progress, "a progress notification first: %+v", l)
	sessionID, requestID := l.Progress.Meta.SessionID, l.Progress.Meta.RequestID
	require.NotEmpty(t, sessionID)
	require.NotEmpty(t, requestID)

	var pv struct {
		Pending map[string]any `json:"pending"`
	}
	require.Equal(t, 200, first.API.JSON("GET", "/api/interactions/pending?sessionId="+sessionID, nil, &pv))
	require.Equal(t, map[string]any{"kind": "mcp", "client": "luban-ts-test", "clientVersion": "1.0.0"}, pv.Pending["source"])
	first.Kill9()
	for l = next(t, lines); l.Progress != nil; l = next(t, lines) {
	}
	require.NotNil(t, l.Error, "the held call fails when luban dies: %+v", l)

	second := start("second")
	lines = tsCall(t, second.URL, "test-token", "ask_user", singleArgs, `{"sessionId":"`+sessionID+`"}`)
	require.NotNil(t, next(t, lines).Protocol)
	l = next(t, lines)
	require.NotNil(t, l.Progress, "%+v", l)
	require.Equal(t, requestID, l.Progress.Meta.RequestID, "the same question")
	answer(t, second, sessionID, requestID, "prod")
	for l = next(t, lines); l.Progress != nil; l = next(t, lines) {
	}
	require.NotNil(t, l.Result, "%+v", l)
	require.False(t, l.Result.IsError)
	require.Len(t, l.Result.Content, 1)
	require.Equal(t, "text", l.Result.Content[0].Type)
	require.Equal(t, wantProd, l.Result.Content[0].Text)
	require.Equal(t, "answered", l.Result.Meta["status"])

	tools, audit := stored(t, second, sessionID)
	require.Equal(t, []string{wantProd}, tools)
	require.Equal(t, []string{"requested", "answered"}, audit)
	require.Equal(t, 1, sessionCount(t, second))
}

// The TypeScript client with a wrong token is refused (401) before any
// question exists.
func TestTypeScriptClientUnauthorized(t *testing.T) {
	t.Parallel()
	first, _ := twoLives(t)
	l := next(t, tsCall(t, first.URL, "wrong-token", "ask_user", singleArgs, ""))
	require.NotNil(t, l.Error, "%+v", l)
	require.Contains(t, *l.Error, "unauthorized")
	require.Equal(t, 0, sessionCount(t, first))
}
