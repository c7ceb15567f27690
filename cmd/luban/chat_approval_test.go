package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

func approvalSetup(t *testing.T) *chatBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	m := &chatModel{}
	work := t.TempDir()
	srv := lubantest.Start(t, lubantest.Options{Provider: m, Workspace: work, Tools: []tool.Tool{tool.WriteFile(work)}})
	return &chatBundle{t: t, ctx: ctx, model: m, srv: srv, work: work}
}

// docs/design.md §10 in the terminal: the approval card, an edit that is not an
// object (refused here), one the server refuses (its 422 details, asked
// again), then a valid one: the tool runs with it and the receipt says so.
func TestChatApprovalEdit(t *testing.T) {
	t.Parallel()
	b := approvalSetup(t)
	b.locale = "zh_CN.UTF-8"
	b.model.push(asks("写计划。", "write_file", `{"path":"plan.md","content":"v1"}`), model.Message{Content: "写好了。"})
	out := b.chat("写计划\nx\ne\n{bad\ne\n{\"path\":\"\",\"content\":\"v2\"}\ne\n{\"path\":\"docs/plan.md\",\"content\":\"v2\"}\n/quit\n")
	require.Contains(t, out, "? 需要批准： write_file\n")
	require.Contains(t, out, "    {\n      \"path\": \"plan.md\",\n      \"content\": \"v1\"\n    }\n")
	require.Contains(t, out, "  ! 请输入 a、a!、e 或 r\n")
	require.Contains(t, out, "  ! 参数：应为对象\n")
	require.Contains(t, out, "  ! 参数 path：至少 1 个字\n")
	require.Contains(t, out, "✓ 已修改参数后批准：\n    {\n      \"path\": \"docs/plan.md\",\n      \"content\": \"v2\"\n    }\n")
	require.Contains(t, out, "写好了。")
	got, err := os.ReadFile(filepath.Join(b.work, "docs", "plan.md"))
	require.NoError(t, err)
	require.Equal(t, "v2", string(got))
	_, err = os.Stat(filepath.Join(b.work, "plan.md"))
	require.True(t, os.IsNotExist(err), "the model's arguments never ran")
}

// Approve with remember, then reject with a reason in a new session.
func TestChatApprovalApproveAndReject(t *testing.T) {
	t.Parallel()
	b := approvalSetup(t)
	b.locale = "zh_CN.UTF-8"
	b.model.push(asks("写。", "write_file", `{"path":"a.txt","content":"a"}`), model.Message{Content: "好。"})
	out := b.chat("写\na!\n/quit\n")
	require.Contains(t, out, "✓ 已批准（本会话内总是允许）\n")
	got, err := os.ReadFile(filepath.Join(b.work, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "a", string(got))

	b.model.push(asks("再写。", "write_file", `{"path":"b.txt","content":"b"}`), model.Message{Content: "不写了。"})
	out = b.chat("再写\nr\n不要 b.txt\n/quit\n")
	require.Contains(t, out, "✗ 已拒绝：不要 b.txt\n")
	require.Contains(t, out, "不写了。")
	_, err = os.Stat(filepath.Join(b.work, "b.txt"))
	require.True(t, os.IsNotExist(err))
	reqs := b.model.requests()
	last := reqs[len(reqs)-1].Messages
	require.Equal(t, `The user declined this write_file call; it did not run. Their message: "不要 b.txt" Do not repeat the same call unless the user asks for it.`, last[len(last)-1].Content)
}

// writesTwo is a model message with two write_file calls, call_a (a.txt,
// content a) and call_c (c.txt, content c).
func writesTwo(a, c string) model.Message {
	return model.Message{Content: "写两个。", ToolCalls: []model.ToolCall{
		{ID: "call_" + a, Name: "write_file", Arguments: `{"path":"` + a + `.txt","content":"` + a + `"}`},
		{ID: "call_" + c, Name: "write_file", Arguments: `{"path":"` + c + `.txt","content":"` + c + `"}`}}}
}

// docs/design.md §32 in the terminal: two approvals of one model message
// are shown together and "approve all" (A) answers both with one batch
// request; Enter answers them one by one instead.
func TestChatApproveAll(t *testing.T) {
	t.Parallel()
	b := approvalSetup(t)
	two := writesTwo
	b.model.push(two("a", "b"), model.Message{Content: "both written"})
	out := b.chat("write both\nA\n/quit\n")
	require.Contains(t, out, "2 calls wait for approval:\n")
	require.Contains(t, out, "approve all? [A = approve all, Enter = one by one]: ")
	require.NotContains(t, out, "decision [a/a!/e/r]", "no approval was asked on its own")
	require.Equal(t, 2, strings.Count(out, "✓ approved"), out)
	require.Contains(t, out, "both written\n[run completed]\n")
	for _, f := range []string{"a", "b"} {
		got, err := os.ReadFile(filepath.Join(b.work, f+".txt"))
		require.NoError(t, err)
		require.Equal(t, f, string(got))
	}
	reqs := b.model.requests()
	require.Len(t, reqs, 2, "one model call after both approvals")

	// One by one: the first is rejected, the second approved.
	b.model.push(two("c", "d"), model.Message{Content: "one written"})
	out = b.chat("write two more\n\nr\nnot c\na\n/quit\n")
	require.Contains(t, out, "approve all? [A = approve all, Enter = one by one]: ")
	require.Contains(t, out, "✗ rejected: not c\n")
	require.Contains(t, out, "one written\n[run completed]\n")
	_, err := os.Stat(filepath.Join(b.work, "c.txt"))
	require.True(t, os.IsNotExist(err))
	got, err := os.ReadFile(filepath.Join(b.work, "d.txt"))
	require.NoError(t, err)
	require.Equal(t, "d", string(got))
}

// One of two approvals is rejected elsewhere (the API, as the page would)
// while the terminal shows "approve all?": A then gets 409 already_resolved,
// and the terminal says the approval was answered elsewhere with its receipt
// (docs/terminal.md), not an error, and asks the other one on its own.
func TestChatApproveAllAnsweredElsewhere(t *testing.T) {
	t.Parallel()
	b := approvalSetup(t)
	b.model.push(writesTwo("a", "b"), model.Message{Content: "b written"})
	stdin, w := io.Pipe()
	out := &syncBuffer{}
	done := make(chan struct{})
	c := &Chat{Stdin: stdin, Stdout: out, Stderr: out,
		Getenv: envOf(map[string]string{"LUBAN_URL": b.srv.URL, "LUBAN_AUTH_TOKEN": "test-token", "XDG_DATA_HOME": t.TempDir()})}
	var runErr error
	go func() { defer close(done); runErr = c.Run(b.ctx, nil) }()
	t.Cleanup(func() { _ = w.Close(); <-done })
	send := func(line string) {
		_, err := io.WriteString(w, line+"\n")
		require.NoError(t, err)
	}

	send("write both")
	waitFor(t, out, done, "approve all? [A = approve all, Enter = one by one]: ")
	cl, err := client.New(b.srv.URL, "test-token", nil)
	require.NoError(t, err)
	p := b.pending(b.sessionID())
	require.Len(t, p.Requests, 2)
	_, err = cl.ContinueNoStream(b.ctx, api.ContinueRequest{SessionID: p.Requests[0].SessionID, RequestID: p.Requests[0].ID,
		Decision: api.DecisionReject, Message: "not a"})
	require.NoError(t, err)

	send("A")
	waitFor(t, out, done, "(answered elsewhere)\n✗ rejected: not a\n")
	waitFor(t, out, done, "decision [a/a!/e/r]")
	send("a")
	waitFor(t, out, done, "b written\n[run completed]\n")
	send("/quit")
	<-done
	require.NoError(t, runErr)
	got := out.String()
	require.NotContains(t, got, "error:")
	require.Equal(t, 1, strings.Count(got, "✗ rejected: not a\n"), "the receipt shows once:\n%s", got)
	require.Equal(t, 1, strings.Count(got, "decision [a/a!/e/r]"), "only b is asked on its own:\n%s", got)
	_, err = os.Stat(filepath.Join(b.work, "a.txt"))
	require.True(t, os.IsNotExist(err))
	data, err := os.ReadFile(filepath.Join(b.work, "b.txt"))
	require.NoError(t, err)
	require.Equal(t, "b", string(data))
}
