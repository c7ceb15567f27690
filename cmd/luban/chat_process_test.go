package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
)

// The terminal's approval flow (docs/design.md §10, docs/terminal.md) driven through
// the real command line: `luban serve --config` (an agent with write_file
// under approval, the in-repo fake OpenAI-compatible model) and `luban chat`
// as processes of the luban main (TestMain), their stdin piped, or a
// pseudo-terminal for the $EDITOR path.

const chatProcToken = "chat-proc-token"

type chatProcServer struct {
	url  string
	work string
	fake *fakeopenai.Server
}

// startChatProcServer runs `luban serve` with one agent, "writer", that may
// call write_file (approval always), against a fresh fake model.
func startChatProcServer(t *testing.T, turns ...fakeopenai.Turn) *chatProcServer {
	t.Helper()
	fake := fakeopenai.New(t)
	fake.Push(turns...)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "luban.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agents:\n  - name: writer\n    model: openai:fake-model\n    tools: [write_file]\n    askTools: []\n    approval: {write_file: always}\n"), 0o600))
	url, work := startServeProc(t, []string{"OPENAI_BASE_URL=" + fake.URL(), "OPENAI_API_KEY=sk-fake"}, "--config", cfg)
	return &chatProcServer{url: url, work: work, fake: fake}
}

// startServeProc runs `luban serve` (the luban main, TestMain) on a free
// loopback port with a fresh SQLite file, the token chatProcToken and a
// workspace of its own, plus args and env; it is stopped with SIGTERM at the
// end of the test. It returns the base URL (no trailing slash) and the
// workspace.
func startServeProc(t *testing.T, env []string, args ...string) (string, string) {
	t.Helper()
	url, work, _ := startServeProcStop(t, env, args...)
	return url, work
}

// startServeProcStop is startServeProc that also returns a stop function
// (SIGTERM, then wait; idempotent). Later args win over the defaults, so
// "--db" and "--addr" may name a database and an address of the test's.
func startServeProcStop(t *testing.T, env []string, args ...string) (string, string, func()) {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	require.NoError(t, os.Mkdir(work, 0o755))
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"serve", "--db", filepath.Join(dir, "luban.db"),
		"--auth-token", chatProcToken, "--addr", "127.0.0.1:0", "--workspace", work}, args...)...)
	cmd.Env = append(append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1"), env...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var errb syncBuffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(func() {
		stop()
		require.NotContains(t, errb.String(), "panic:")
	})
	sc := bufio.NewScanner(stdout)
	var url string
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "luban serving on "); ok {
			url = strings.TrimSuffix(u, "/")
			break
		}
	}
	require.NotEmpty(t, url, "serve did not start: %s", errb.String())
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return url, work, stop
}

// chatPiped runs `luban chat` with input on a pipe and returns its output.
func (s *chatProcServer) chatPiped(t *testing.T, input string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "chat", "--url", s.url, "--token", chatProcToken)
	cmd.Env = append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1", "EDITOR=/bin/false") // no terminal: the editor is never used
	cmd.Stdin = strings.NewReader(input)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Run(), "luban chat: %s\n%s", errb.String(), out.String())
	return out.String()
}

// trace reads a session's trace over the API.
func (s *chatProcServer) trace(t *testing.T, sessionID string) map[string]any {
	t.Helper()
	req, err := http.NewRequest("GET", s.url+"/api/sessions/"+sessionID+"/trace", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+chatProcToken)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	var v map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&v))
	return v
}

func sessionOf(t *testing.T, out string) string {
	t.Helper()
	_, after, ok := strings.Cut(out, " --session ")
	require.True(t, ok, "the chat names its session: %s", out)
	return strings.Fields(after)[0]
}

func writeCall(id, path, content string) fakeopenai.Turn {
	b, _ := json.Marshal(map[string]string{"path": path, "content": content})
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: id, Name: "write_file", Arguments: string(b)}}}
}

func readWork(t *testing.T, s *chatProcServer, name string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.work, name))
	if errors.Is(err, os.ErrNotExist) {
		return "", false
	}
	require.NoError(t, err)
	return string(b), true
}

// Reject with a reason: the tool never runs and the model's next request
// carries the decline with the reason; then approve, in a new process on
// the same session's server.
func TestChatProcessRejectWithReasonThenApprove(t *testing.T) {
	t.Parallel()
	s := startChatProcServer(t, writeCall("call_r", "r.txt", "r"), fakeopenai.Turn{Text: "好，不写。"},
		writeCall("call_a", "a.txt", "a"), fakeopenai.Turn{Text: "写好了。"})
	out := s.chatPiped(t, "写 r\nr\n不要写 r.txt\n写 a\na\n/quit\n")
	require.Contains(t, out, "write_file")
	require.Contains(t, out, `"path": "r.txt"`)
	require.Contains(t, out, "不要写 r.txt")
	require.Contains(t, out, "好，不写。")
	require.Contains(t, out, "写好了。")
	_, written := readWork(t, s, "r.txt")
	require.False(t, written, "a rejected call never runs")
	got, _ := readWork(t, s, "a.txt")
	require.Equal(t, "a", got)

	reqs := s.fake.Requests()
	require.Len(t, reqs, 4)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "tool", last["role"])
	require.Equal(t, "call_r", last["tool_call_id"])
	require.Equal(t, `The user declined this write_file call; it did not run. Their message: "不要写 r.txt" Do not repeat the same call unless the user asks for it.`, last["content"])
	last = reqs[3].Messages[len(reqs[3].Messages)-1]
	require.Equal(t, "call_a", last["tool_call_id"])
	require.Equal(t, "wrote 1 bytes to a.txt", last["content"])
}

// Edit with inline JSON (no terminal): a value the server refuses (its 422
// details are shown and the decision asked again), then a valid one, which
// runs instead of the model's.
func TestChatProcessEditInline(t *testing.T) {
	t.Parallel()
	s := startChatProcServer(t, writeCall("call_e", "model.txt", "m"), fakeopenai.Turn{Text: "按你的改了。"})
	out := s.chatPiped(t, "写\ne\n{\"path\":\"../out.txt\",\"content\":\"x\"}\ne\n{\"path\":\"mine.txt\",\"content\":\"edited inline\"}\n/quit\n")
	require.Contains(t, out, `  ! argument path: "../out.txt" is outside the workspace`)
	require.Contains(t, out, `"path": "mine.txt"`)
	require.Contains(t, out, "按你的改了。")
	got, _ := readWork(t, s, "mine.txt")
	require.Equal(t, "edited inline", got)
	_, written := readWork(t, s, "model.txt")
	require.False(t, written)
	_, err := os.Stat(filepath.Join(filepath.Dir(s.work), "out.txt"))
	require.True(t, errors.Is(err, os.ErrNotExist), "nothing is written outside the workspace")
	reqs := s.fake.Requests()
	require.Len(t, reqs, 2)
	require.Contains(t, reqs[1].Messages[len(reqs[1].Messages)-1]["content"], "The user changed the arguments of this write_file call before approving it.")
}

// Remember: "a!" approves this call and the next call of the same tool in
// the session without asking; the trace shows the remembered one.
func TestChatProcessRemember(t *testing.T) {
	t.Parallel()
	s := startChatProcServer(t, writeCall("call_1", "one.txt", "1"), writeCall("call_2", "two.txt", "2"), fakeopenai.Turn{Text: "两个都写好了。"})
	out := s.chatPiped(t, "写两个\na!\n/quit\n")
	require.Equal(t, 1, strings.Count(out, `"path": `), "asked once: %s", out)
	require.Contains(t, out, "两个都写好了。")
	require.Contains(t, out, "bye. continue with: luban chat --url "+s.url+" --session sess_", "the way back keeps the non-default --url")
	for name, want := range map[string]string{"one.txt": "1", "two.txt": "2"} {
		got, _ := readWork(t, s, name)
		require.Equal(t, want, got)
	}
	tr := s.trace(t, sessionOf(t, out))
	var remembered []string
	for _, e := range tr["trace"].([]any) {
		e := e.(map[string]any)
		if d, _ := e["data"].(map[string]any); e["kind"] == "approval" && d["action"] == "remembered" {
			remembered = append(remembered, d["toolCallId"].(string))
		}
	}
	require.Equal(t, []string{"call_2"}, remembered)
}

// Edit in $EDITOR: on a terminal (a pseudo-terminal here) `e` opens the
// arguments in $EDITOR and sends what the file holds when it exits.
func TestChatProcessEditInEditor(t *testing.T) {
	t.Parallel()
	s := startChatProcServer(t, writeCall("call_v", "model.txt", "m"), fakeopenai.Turn{Text: "用了编辑器里的参数。"})
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen.json")
	editor := filepath.Join(dir, "editor.sh")
	// The editor keeps what it was given (to check it) and writes new arguments.
	require.NoError(t, os.WriteFile(editor, []byte("#!/bin/sh\ncp \"$1\" '"+seen+"'\nprintf '%s' '{\"path\": \"from-editor.txt\", \"content\": \"edited in $EDITOR\"}' > \"$1\"\n"), 0o755))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "chat", "--url", s.url, "--token", chatProcToken)
	cmd.Env = append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1", "EDITOR="+editor, "VISUAL=", "TERM=dumb")
	tty, err := pty.Start(cmd)
	require.NoError(t, err)
	defer tty.Close()
	var out syncBuffer
	done := make(chan struct{})
	go func() { defer close(done); _, _ = io.Copy(&out, tty) }() // ends with EIO when the chat exits
	_, err = tty.Write([]byte("写\n"))
	require.NoError(t, err)
	waitFor(t, &out, done, "[a/a!/e/r]")
	_, err = tty.Write([]byte("e\n"))
	require.NoError(t, err)
	waitFor(t, &out, done, "用了编辑器里的参数。")
	_, err = tty.Write([]byte("/quit\n"))
	require.NoError(t, err)
	require.NoError(t, cmd.Wait())
	<-done

	given, err := os.ReadFile(seen)
	require.NoError(t, err)
	require.JSONEq(t, `{"path":"model.txt","content":"m"}`, string(given), "the editor got the model's arguments")
	got, _ := readWork(t, s, "from-editor.txt")
	require.Equal(t, "edited in $EDITOR", got)
	_, written := readWork(t, s, "model.txt")
	require.False(t, written)
	require.Contains(t, out.String(), `"path": "from-editor.txt"`, "the receipt shows the edited arguments")
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor polls the output of a pseudo-terminal until it holds want.
func waitFor(t *testing.T, out *syncBuffer, done <-chan struct{}, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want) {
		select {
		case <-done:
			t.Fatalf("luban chat ended before %q:\n%s", want, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 30 s:\n%s", want, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// chatProc is `luban chat` as a process with stdin on a pipe the test writes
// to line by line, and its output collected as it comes.
type chatProc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   syncBuffer
	done  chan struct{}
}

func startChatProc(t *testing.T, url string, env ...string) *chatProc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	p := &chatProc{done: make(chan struct{})}
	p.cmd = exec.CommandContext(ctx, os.Args[0], "chat", "--url", url, "--token", chatProcToken)
	p.cmd.Env = append(append(cleanEnv(t), "LUBAN_CLI_TEST_MAIN=1"), env...)
	var err error
	p.stdin, err = p.cmd.StdinPipe()
	require.NoError(t, err)
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.out
	require.NoError(t, p.cmd.Start())
	go func() { defer close(p.done); _ = p.cmd.Wait() }()
	t.Cleanup(func() { _ = p.stdin.Close(); <-p.done })
	return p
}

func (p *chatProc) send(t *testing.T, line string) {
	t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(t, err)
}

// waitPending polls the session's pending request until it is not skip.
func waitPending(t *testing.T, cl *client.Client, sessionID, skip string) *api.InputRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		p, err := cl.Pending(ctx, sessionID)
		require.NoError(t, err)
		if p.Pending != nil && p.Pending.ID != skip {
			return p.Pending
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no new pending request in %s", sessionID)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A question `luban chat` shows is answered elsewhere (here through the
// API, as the page or a second terminal would): the terminal, which follows
// the session's stream while it waits, prints the receipt and that it was
// answered elsewhere, then the run's next question, which it answers itself.
// Real binaries: `luban serve --model scripted` (the demo) and `luban chat`
// on pipes.
func TestChatProcessFollowsAnAnswerGivenElsewhere(t *testing.T) {
	t.Parallel()
	url, _ := startServeProc(t, nil, "--model", "scripted")
	cl, err := client.New(url, chatProcToken, nil)
	require.NoError(t, err)
	p := startChatProc(t, url, "LANG=zh_CN.UTF-8")
	p.send(t, "开始演示")
	waitFor(t, &p.out, p.done, "部署到哪个环境？")
	waitFor(t, &p.out, p.done, "选择一项")
	list, err := cl.Sessions(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	first := waitPending(t, cl, list[0].ID, "")
	require.Equal(t, api.ModeSingle, first.Mode)

	rc, err := cl.ContinueNoStream(context.Background(), api.ContinueRequest{SessionID: first.SessionID, RequestID: first.ID, Selections: []string{first.Options[1].ID}})
	require.NoError(t, err)
	require.Equal(t, api.StatusAnswered, rc.Status)
	waitFor(t, &p.out, p.done, "已在别处回答")
	waitFor(t, &p.out, p.done, "已提交："+first.Options[1].Label)
	waitFor(t, &p.out, p.done, "启用哪些功能？")
	second := waitPending(t, cl, first.SessionID, first.ID)
	require.Equal(t, api.ModeMultiple, second.Mode)

	// The terminal answers the next question itself.
	p.send(t, "1")
	waitFor(t, &p.out, p.done, "其他说明")
	p.send(t, "")
	waitFor(t, &p.out, p.done, "安全选项")
	third := waitPending(t, cl, first.SessionID, second.ID)
	require.Equal(t, api.ModeToggle, third.Mode)
	pend, err := cl.Pending(context.Background(), first.SessionID)
	require.NoError(t, err)
	require.Equal(t, second.ID, pend.Last.RequestID)
	require.Equal(t, []string{second.Options[0].ID}, pend.Last.Selections, "answered from the terminal")
	p.send(t, "/quit")
	<-p.done
	out := p.out.String()
	require.Equal(t, 1, strings.Count(out, "已提交："+first.Options[1].Label), "the receipt shows once:\n%s", out)
	require.Equal(t, 1, strings.Count(out, "启用哪些功能？"), "the next question shows once:\n%s", out)
}

// The terminal's watch survives a server restart: `luban serve` stops
// (SIGTERM) while a question waits in `luban chat` and starts again on the
// same address and database; the watch reconnects with Last-Event-ID, and
// an answer given through the API after the restart shows in the terminal
// as its receipt, followed by the next question.
func TestChatProcessWatchReconnectsAfterARestart(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	db := filepath.Join(t.TempDir(), "luban.db")
	url, _, stop := startServeProcStop(t, nil, "--model", "scripted", "--db", db, "--addr", addr)
	p := startChatProc(t, url, "LANG=en_US.UTF-8")
	p.send(t, "start the demo")
	waitFor(t, &p.out, p.done, "choose one (1-3): ")
	stop()
	url2, _, _ := startServeProcStop(t, nil, "--model", "scripted", "--db", db, "--addr", addr)
	require.Equal(t, url, url2)

	cl, err := client.New(url2, chatProcToken, nil)
	require.NoError(t, err)
	list, err := cl.Sessions(context.Background())
	require.NoError(t, err)
	require.Len(t, list, 1)
	first := waitPending(t, cl, list[0].ID, "")
	_, err = cl.ContinueNoStream(context.Background(), api.ContinueRequest{SessionID: first.SessionID, RequestID: first.ID, Selections: []string{first.Options[0].ID}})
	require.NoError(t, err)
	waitFor(t, &p.out, p.done, "(answered elsewhere)\n✓ answered: "+first.Options[0].Label+"\n")
	waitFor(t, &p.out, p.done, "启用哪些功能？")
	p.send(t, "/quit")
	<-p.done
	require.Equal(t, 1, strings.Count(p.out.String(), "启用哪些功能？"), "the next question shows once:\n%s", p.out.String())
}

// TestChatProcessRefusedAgentExits1: an --agent the server does not have,
// and --session with another agent than the session keeps, are refusals
// known only after asking the server: exit 1 (docs/terminal.md), not the
// usage exit 2, and nothing is sent to the model.
func TestChatProcessRefusedAgentExits1(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.Push(fakeopenai.Turn{Text: "好的。"})
	cfg := filepath.Join(t.TempDir(), "luban.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("agents:\n  - name: writer\n    model: openai:fake-model\n  - name: reader\n    model: openai:fake-model\n"), 0o600))
	url, _ := startServeProc(t, []string{"OPENAI_BASE_URL=" + fake.URL(), "OPENAI_API_KEY=sk-fake"}, "--config", cfg)

	r := luban(t, nil, "chat", "--url", url, "--token", chatProcToken, "--lang", "en", "--agent", "nosuch")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "no agent nosuch (the server's agents: writer, reader)")
	require.NotContains(t, r.stderr, "--help")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.New(url, chatProcToken, nil)
	require.NoError(t, err)
	st, err := c.Start(ctx, api.ChatRequest{Message: "hi", Agent: "writer"})
	require.NoError(t, err)
	for {
		if _, err := st.Next(); err != nil {
			break
		}
	}
	st.Close()
	ss, err := c.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, ss, 1)
	r = luban(t, nil, "chat", "--url", url, "--token", chatProcToken, "--lang", "en", "--session", ss[0].ID, "--agent", "reader")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "keeps its agent writer")
	require.Len(t, fake.Requests(), 1, "a refused --agent sends nothing")
}
