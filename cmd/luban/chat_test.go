package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
)

// chatModel plays its assistant turns in order. Running out of turns is a
// model error, so an unplanned model call makes the run fail visibly.
type chatModel struct {
	mu   sync.Mutex
	next []model.Message
	seen []*model.Request
}

func (m *chatModel) Name() string { return "chat-test" }

func (m *chatModel) Generate(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
	m.mu.Lock()
	m.seen = append(m.seen, req)
	if len(m.next) == 0 {
		m.mu.Unlock()
		return nil, errors.New("chatModel: no turn left")
	}
	msg := m.next[0]
	m.next = m.next[1:]
	m.mu.Unlock()
	msg.Role = model.RoleAssistant
	if req.OnReasoning != nil && msg.Reasoning != nil {
		for _, r := range msg.Reasoning.Text {
			req.OnReasoning(string(r))
		}
	}
	if onDelta != nil && msg.Content != "" {
		onDelta(msg.Content)
	}
	return &model.Response{Message: msg, FinishReason: "stop"}, nil
}

func (m *chatModel) push(msgs ...model.Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next = append(m.next, msgs...)
}

func (m *chatModel) requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.Request{}, m.seen...)
}

// asks is an assistant turn with some text and one call of tool.
func asks(text, tool, args string) model.Message {
	return model.Message{Content: text, ToolCalls: []model.ToolCall{{ID: "call_1", Name: tool, Arguments: args}}}
}

type chatBundle struct {
	t     *testing.T
	ctx   context.Context
	model *chatModel
	srv   *lubantest.Server
	work  string
	// locale is LANG for luban chat ("" = unset: English).
	locale string
}

func setup(t *testing.T) *chatBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	m := &chatModel{}
	work := t.TempDir()
	srv := lubantest.Start(t, lubantest.Options{Provider: m, Workspace: work})
	return &chatBundle{t: t, ctx: ctx, model: m, srv: srv, work: work}
}

// chat runs `luban chat` against the bundle's server with stdin and returns
// its stdout with session ids replaced by "SESS".
func (b *chatBundle) chat(stdin string, args ...string) string {
	b.t.Helper()
	out, err := b.chatErr(stdin, args...)
	require.NoError(b.t, err, out)
	return out
}

func (b *chatBundle) chatErr(stdin string, args ...string) (string, error) {
	b.t.Helper()
	var stdout, stderr bytes.Buffer
	c := &Chat{Stdin: strings.NewReader(stdin), Stdout: &stdout, Stderr: &stderr,
		Getenv: envOf(map[string]string{"LUBAN_URL": b.srv.URL, "LUBAN_AUTH_TOKEN": "test-token", "XDG_DATA_HOME": b.t.TempDir(), "LANG": b.locale})}
	err := c.Run(b.ctx, args)
	out := sessRE.ReplaceAllString(stdout.String(), "SESS") + stderr.String()
	return strings.ReplaceAll(out, b.srv.URL, "URL"), err
}

var sessRE = regexp.MustCompile(`sess_[a-z0-9]+`)

// sessionID is the only session of the test principal.
func (b *chatBundle) sessionID() string {
	b.t.Helper()
	c, err := client.New(b.srv.URL, "test-token", nil)
	require.NoError(b.t, err)
	list, err := c.Sessions(b.ctx)
	require.NoError(b.t, err)
	require.Len(b.t, list, 1)
	return list[0].ID
}

func (b *chatBundle) pending(id string) *api.PendingResponse {
	b.t.Helper()
	c, err := client.New(b.srv.URL, "test-token", nil)
	require.NoError(b.t, err)
	p, err := c.Pending(b.ctx, id)
	require.NoError(b.t, err)
	return p
}

const chatSingleArgs = `{"title":"请选择执行方式","description":"改代码之前\n先确认","mode":"single","options":[{"id":"safe","label":"先分析","description":"稳妥","recommended":true},{"id":"implement","label":"直接实现"}]}`

func TestChatSingleChoiceChecksLocallyAndResumes(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locale = "zh_CN.UTF-8"
	b.model.push(asks("我需要问一下。", "ask_user", chatSingleArgs), model.Message{Content: "好的，先分析。"})

	out := b.chat("帮我改代码\n3\n\n1\n/quit\n")
	require.Equal(t, `luban chat：输入消息后按回车（/help 查看命令）
> 帮我改代码
[会话 SESS]
我需要问一下。
? 请选择执行方式
  改代码之前
  先确认
  1) 先分析 (推荐) — 稳妥
  2) 直接实现
  （/cancel 取消，/quit 稍后再答）
选择一项 (1-2): 3
  ! 请输入 1 到 2 之间的数字
选择一项 (1-2): 
  ! 请选择一项
选择一项 (1-2): 1
✓ 已提交：先分析
好的，先分析。
[任务已完成]
> /quit
再见。之后继续：luban chat --url URL --session SESS
`, out)
	reqs := b.model.requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "call_1", last.ToolCallID)
	require.JSONEq(t, `{"selections":["safe"],"customInput":"","cancelled":false,"labels":["先分析"]}`, last.Content)
}

const batchArgs = `{"questions":[` +
	`{"question":"用哪个方案？","header":"方案","context":"两种都可行","options":[{"label":"方案A","description":"快","preview":"a := 1"},{"label":"方案B","description":"稳"}],"multi_select":false},` +
	`{"question":"要哪些检查？","header":"检查","options":[{"label":"单测","description":"快速"},{"label":"集成","description":"完整"}],"multi_select":true}]}`

func TestChatAskUserBatchWithOther(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locale = "zh_CN.UTF-8"
	b.model.push(asks("", "AskUser", batchArgs), model.Message{Content: "收到。"})

	out := b.chat("选方案\n2\n1 3\n\n手测\n")
	require.Equal(t, `luban chat：输入消息后按回车（/help 查看命令）
> 选方案
[会话 SESS]
? 请回答 2 个问题 （/cancel 取消，/quit 稍后再答）
[方案] 用哪个方案？ (1/2)
  两种都可行
  1) 方案A — 快
       a := 1
  2) 方案B — 稳
  3) 其他 — 自己填写
选择一项 (1-3): 2
[检查] 要哪些检查？ (2/2)
  1) 单测 — 快速
  2) 集成 — 完整
  3) 其他 — 自己填写
可多选，用逗号分隔 (如 1,3): 1 3
其他: 
  ! 请填写内容
其他: 手测
✓ 已提交：
  用哪个方案？ → 方案B
  要哪些检查？ → 单测，其他：手测
收到。
[任务已完成]
> 
再见。之后继续：luban chat --url URL --session SESS
`, out)
	p := b.pending(b.sessionID())
	require.Equal(t, []api.QuestionAnswer{
		{Question: "用哪个方案？", Selected: []string{"方案B"}},
		{Question: "要哪些检查？", Selected: []string{"单测"}, Other: "手测"},
	}, p.Last.Answers)
}

// The server's 422 (a directory outside the workspace: only the server can
// check it) shows its field message; the request stays pending and the
// next answer wins.
func TestChatShowsServerFieldErrorsAndAsksAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locale = "zh_CN.UTF-8"
	require.NoError(t, os.Mkdir(filepath.Join(b.work, "reports"), 0o755))
	b.model.push(asks("", "ask_user", `{"title":"存到哪个目录？","mode":"directory"}`), model.Message{Content: "已保存。"})

	out := b.chat("存报告\n../outside\nreports\n")
	require.Contains(t, out, `? 存到哪个目录？
  （/cancel 取消，/quit 稍后再答）
输入工作区内的相对目录: ../outside
  ! 回答：「../outside」在工作区之外
请重新回答。
输入工作区内的相对目录: reports
✓ 已提交：reports
已保存。
[任务已完成]
`)
	require.Equal(t, "reports", b.pending(b.sessionID()).Last.CustomInput)
}

// A message over the server's bound is refused with the bound in the
// terminal's words (413 payload_too_large, details too_long), and the next
// message is taken.
func TestChatSaysTheBoundOfATooLongMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(model.Message{Content: "好的。"})
	out := b.chat(strings.Repeat("长", agent.MaxMessageRunes+5) + "\n短\n")
	require.Contains(t, out, "error: too large: at most 32000 characters (now 32005)\n")
	require.Contains(t, out, "好的。")
	b.locale = "zh_CN.UTF-8"
	out = b.chat(strings.Repeat("长", agent.MaxMessageRunes+1) + "\n")
	require.Contains(t, out, "错误：内容太长：最多 32000 个字（现在 32001）\n")
}

func TestChatCancelDeclinesTheQuestion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locale = "zh_CN.UTF-8"
	b.model.push(asks("", "ask_user", chatSingleArgs))

	out := b.chat("问我\n/cancel\n/cancel\n/quit\n")
	require.Contains(t, out, `选择一项 (1-2): /cancel
✗ 已取消
[已取消]
> /cancel
[会话已取消]
> /quit
`)
	require.Len(t, b.model.requests(), 1, "a cancelled question gets no further model turn")
	require.Equal(t, api.StatusCancelled, b.pending(b.sessionID()).Last.Status)
}

func TestChatToggleNeedsOneAndEnglishMarks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(asks("Let me check.", "ask_user", `{"title":"Pick features","mode":"toggle","allowCustom":true,"options":[{"id":"a","label":"Alpha","recommended":true},{"id":"b","label":"Beta"},{"id":"c","label":"Gamma"}]}`),
		model.Message{Content: "Done."})

	out := b.chat("go\n\n1,1\n1, 3\n  also delta \n")
	require.Contains(t, out, `? Pick features
  1) Alpha (recommended)
  2) Beta
  3) Gamma
  (/cancel to decline, /quit to answer later)
choose at least one, comma separated (e.g. 1,3): 
  ! choose at least 1
choose at least one, comma separated (e.g. 1,3): 1,1
  ! 1 is listed twice
choose at least one, comma separated (e.g. 1,3): 1, 3
other notes (may be empty):   also delta 
✓ answered: Alpha, Gamma, other: also delta
Done.
[run completed]
`)
	p := b.pending(b.sessionID())
	require.Equal(t, []string{"a", "c"}, p.Last.Selections)
	require.Equal(t, "also delta", p.Last.CustomInput)
}

// /quit leaves the run paused; `luban chat --session id` shows the same
// question again (GET /api/interactions/pending) and the answer resumes it.
func TestChatQuitThenResumeWithSession(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.locale = "zh_CN.UTF-8"
	b.model.push(asks("", "ask_user", chatSingleArgs), model.Message{Content: "好，直接实现。"})

	out := b.chat("问我\n/quit\n")
	require.Contains(t, out, `选择一项 (1-2): /quit
问题保留，稍后可以继续回答。
再见。之后继续：luban chat --url URL --session SESS
`)
	id := b.sessionID()
	p := b.pending(id)
	require.NotNil(t, p.Pending, "the run stays paused")
	require.Len(t, b.model.requests(), 1)

	out = b.chat("2\n", "--session", id)
	require.Equal(t, `会话 SESS · 问我 · 等待回答 · 刚刚
> 问我
? 请选择执行方式
  改代码之前
  先确认
  1) 先分析 (推荐) — 稳妥
  2) 直接实现
  （/cancel 取消，/quit 稍后再答）
选择一项 (1-2): 2
✓ 已提交：直接实现
好，直接实现。
[任务已完成]
> 
再见。之后继续：luban chat --url URL --session SESS
`, out)

	// A finished session shows its last receipt.
	out = b.chat("", "--session", id)
	require.Equal(t, "会话 SESS · 问我 · 任务已完成 · 刚刚\n> 问我\n✓ 已提交：直接实现\n好，直接实现。\n> \n再见。之后继续：luban chat --url URL --session SESS\n", out)
}

// Nothing the model writes can drive the terminal: escapes, bell, bidi
// overrides and line breaks in one-line fields print as inert text.
func TestChatEscapesModelText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(asks("红\x1b[31m色\u202e\n第二行", "ask_user", `{"title":"标题\u001b]0;pwned\u0007\n假行","mode":"text"}`),
		model.Message{Content: "完成\u009b2J"})

	out := b.chat("hi\nok\n")
	require.Contains(t, out, "红\\x1b[31m色\\u202e\n第二行\n? 标题\\x1b]0;pwned\\x07\\n假行\n")
	require.Contains(t, out, "完成\\x9b2J\n[run completed]\n")
	for _, bad := range []string{"\x1b", "\x07", "\u202e", "\u009b"} {
		require.NotContains(t, out, bad)
	}
	require.Equal(t, "line\\x00\\xff\\u2066", safeLine("line\x00\xff\u2066"))
	require.Equal(t, "a\n\tb\\r", safeText("a\n\tb\r"))
	require.Equal(t, "纯文本 plain", safeLine("纯文本 plain"))
}

// A reasoning model's thinking is never printed as answer text: one
// "(thinking…)" line per message stands for it.
func TestChatShowsThinkingAsAMarkerOnly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	think := &model.Reasoning{Provider: model.ReasoningOpenAI, Text: "秘密的思考 secret-chain"}
	turn := asks("先问一下", "ask_user", `{"title":"继续吗","mode":"text"}`)
	turn.Reasoning = think
	b.model.push(turn, model.Message{Content: "完成", Reasoning: think})

	out := b.chat("hi\nok\n")
	require.NotContains(t, out, "secret-chain")
	require.Contains(t, out, "(thinking…)\n先问一下\n")
	require.Contains(t, out, "(thinking…)\n完成\n[run completed]\n")
	require.Equal(t, 2, strings.Count(out, "(thinking…)"), "once per message")
}

func TestChatFlagsEnvAndGeneratedToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(model.Message{Content: "one"}, model.Message{Content: "two"})

	// --url and --token win over the environment; a comma list uses its first token.
	var stdout, stderr bytes.Buffer
	c := &Chat{Stdin: strings.NewReader("hello\n"), Stdout: &stdout, Stderr: &stderr,
		Getenv: envOf(map[string]string{"LUBAN_URL": "http://127.0.0.1:1", "LUBAN_AUTH_TOKEN": "nope"})}
	require.NoError(t, c.Run(b.ctx, []string{"--url", b.srv.URL, "--token", "test-token,other-token"}))
	require.Contains(t, stdout.String(), "> hello\n[session ")
	require.Contains(t, stdout.String(), "one\n[run completed]\n")

	// Without a token: the one luban serve generated in the data directory.
	data := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(data, "luban"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(data, "luban", "luban.token"), []byte("test-token\n"), 0o600))
	stdout.Reset()
	c = &Chat{Stdin: strings.NewReader("again\n"), Stdout: &stdout, Stderr: &stderr,
		Getenv: envOf(map[string]string{"LUBAN_URL": b.srv.URL, "XDG_DATA_HOME": data})}
	require.NoError(t, c.Run(b.ctx, nil))
	require.Contains(t, stdout.String(), "two\n[run completed]\n")

	// No token anywhere is a usage error; a wrong one is the server's 401.
	c = &Chat{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"XDG_DATA_HOME": t.TempDir()})}
	err := c.Run(b.ctx, nil)
	var u *usageError
	require.ErrorAs(t, err, &u)
	stdout.Reset()
	out, err := b.chatErr("hello\n", "--token", "wrong")
	require.EqualError(t, err, "the server refused the token: pass the token luban serve printed with --token or LUBAN_AUTH_TOKEN")
	require.Empty(t, out, "a refused token is said before the chat starts")
	data = t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(data, "luban"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(data, "luban", "luban.token"), []byte("another-servers-token\n"), 0o600))
	c = &Chat{Stdin: strings.NewReader("hello\n"), Stdout: &stdout, Stderr: &stderr,
		Getenv: envOf(map[string]string{"LUBAN_URL": b.srv.URL, "XDG_DATA_HOME": data, "LANG": "zh_CN.UTF-8"})}
	require.EqualError(t, c.Run(b.ctx, nil), "服务拒绝了从 "+filepath.Join(data, "luban", "luban.token")+" 读取的令牌：请用 --db（LUBAN_DB）指定这个服务使用的数据库，或用 --token 或 LUBAN_AUTH_TOKEN 传入 luban serve 打印的令牌")

	// An unknown --session is refused in the chat's language, with no goodbye.
	out, err = b.chatErr("", "--session", "sess_nosuch", "--lang", "zh")
	require.EqualError(t, err, "找不到会话 sess_nosuch（它不存在，或属于另一个令牌）")
	require.Empty(t, out)
	out, err = b.chatErr("", "--session", "sess_nosuch", "--token", "wrong")
	require.EqualError(t, err, "the server refused the token: pass the token luban serve printed with --token or LUBAN_AUTH_TOKEN")
	require.Empty(t, out)

	// A server that is not there is said at the start, naming the URL.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	gone := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	stdout.Reset()
	c = &Chat{Stdin: strings.NewReader("hello\n"), Stdout: &stdout, Stderr: &stderr, Getenv: envOf(map[string]string{"LUBAN_AUTH_TOKEN": "t", "LANG": "zh_CN.UTF-8"})}
	err = c.Run(b.ctx, []string{"--url", gone})
	require.EqualError(t, err, "无法连接 "+gone+"（服务是否在运行？地址用 --url 或 LUBAN_URL 指定）")
	require.Empty(t, stdout.String())

	// The subcommand is wired into luban's command line.
	var o, e bytes.Buffer
	require.Equal(t, 0, Run(b.ctx, []string{"chat", "--help"}, &o, &e))
	require.Contains(t, o.String(), "Usage: luban chat [--url http://127.0.0.1:8080] [--token …|--db path] [--session id] [--agent name] [--lang zh|en]")
	require.Contains(t, o.String(), "LUBAN_LANG", "--help names the environment twin")
}

// Two ask_user calls in one assistant message are put at once
// (docs/design.md §32) and asked one after another in the terminal, each
// with its own receipt; the model is called once, after both.
func TestChatAsksSeveralQuestionsOfOneMessageInTurn(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(model.Message{ToolCalls: []model.ToolCall{
		{ID: "call_1", Name: "ask_user", Arguments: `{"title":"How many?","mode":"number"}`},
		{ID: "call_2", Name: "ask_user", Arguments: `{"title":"When?","mode":"date"}`},
	}}, model.Message{Content: "Booked."})

	out := b.chat("book\nmany\n3\n2026-02-30\n2026-03-01\n")
	require.Contains(t, out, `(2 questions are waiting; answering them in turn)
? How many?
  (/cancel to decline, /quit to answer later)
a number: many
  ! answer: enter a number written in full (like 42, -3.5 or 1e3)
Please answer again.
`)
	require.Contains(t, out, `a number: 3
✓ answered: 3
? When?
  (/cancel to decline, /quit to answer later)
a date (YYYY-MM-DD): 2026-02-30
  ! answer: not a real date (YYYY-MM-DD)
Please answer again.
`)
	require.Contains(t, out, `a date (YYYY-MM-DD): 2026-03-01
✓ answered: 2026-03-01
Booked.
[run completed]
`)
	require.Len(t, b.model.requests(), 2, "both answers go back in one next model call")
}

// A number question's bounds are in its prompt, and an answer beyond them
// is refused before it is sent, in the words of the server's field error.
func TestChatNumberBounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(asks("", "ask_user", `{"title":"How many replicas?","mode":"number","integer":true,"minimum":1}`),
		asks("", "ask_user", `{"title":"Ratio?","mode":"number","minimum":0.5,"maximum":2}`), model.Message{Content: "Done."})
	out := b.chat("scale\n0\n2.5\n3e0\n2.5\n15e-1\n")
	require.Contains(t, out, `? How many replicas?
  (/cancel to decline, /quit to answer later)
a whole number, at least 1: 0
  ! answer: at least 1
Please answer again.
a whole number, at least 1: 2.5
  ! answer: must be an integer
Please answer again.
a whole number, at least 1: 3e0
✓ answered: 3
? Ratio?
  (/cancel to decline, /quit to answer later)
a number from 0.5 to 2: 2.5
  ! answer: at most 2
Please answer again.
a number from 0.5 to 2: 15e-1
✓ answered: 1.5
Done.
`)
	// The model gets the canonical decimal form, not the exponent typed.
	reqs := b.model.requests()
	var got []string
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == model.RoleTool {
			got = append(got, m.Content)
		}
	}
	require.Len(t, got, 2)
	require.Contains(t, got[0], `"customInput":"3"`)
	require.Contains(t, got[1], `"customInput":"1.5"`)

	b = setup(t)
	b.locale = "zh_CN.UTF-8"
	b.model.push(asks("", "ask_user", `{"title":"副本数","mode":"number","integer":true,"maximum":9}`), model.Message{Content: "好。"})
	out = b.chat("扩容\n10\n9\n")
	require.Contains(t, out, "输入不大于 9 的整数: 10\n  ! 回答：不能大于 9\n请重新回答。\n输入不大于 9 的整数: 9\n")
}

// --session on a run that is still going follows its events
// (GET /api/sessions/{id}/events after the transcript's lastEventId).
func TestChatFollowsARunStillGoing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	b.model.push(model.Message{Content: "slow answer"})
	slow := model.ProviderFunc{ProviderName: "slow", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return b.model.Generate(ctx, req, onDelta)
	}}
	srv := lubantest.Start(t, lubantest.Options{Provider: slow})
	c, err := client.New(srv.URL, "test-token", nil)
	require.NoError(t, err)
	st, err := c.Chat(b.ctx, "", "take your time")
	require.NoError(t, err)
	ev, err := st.Next()
	require.NoError(t, err)
	id := ev.Value.(*api.SessionEvent).SessionID
	require.NoError(t, st.Close())

	br, stdout, done := followSession(t, b.ctx, srv.URL, id)
	close(release)
	_, _ = io.Copy(io.Discard, br)
	require.NoError(t, <-done)
	require.Equal(t, "session "+id+" · take your time · running · just now\n> take your time\nthe run is still going; following it (Ctrl-C to stop watching)\nslow answer\n[run completed]\n> \nbye. continue with: luban chat --url "+srv.URL+" --session "+id+"\n", stdout.String())
}

// --session on a reply that is streaming prints the text streamed before
// the transcript was read, then the rest live, each piece once (the
// message's deltas, then nothing of its final message event).
func TestChatFollowsAReplyMidStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release, shown := make(chan struct{}), make(chan struct{})
	slow := model.ProviderFunc{ProviderName: "slow", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		onDelta("head ")
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		onDelta("tail")
		select {
		case <-shown:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "head tail"}, FinishReason: "stop"}, nil
	}}
	srv := lubantest.Start(t, lubantest.Options{Provider: slow})
	c, err := client.New(srv.URL, "test-token", nil)
	require.NoError(t, err)
	st, err := c.Chat(b.ctx, "", "stream")
	require.NoError(t, err)
	var id string
	for {
		ev, err := st.Next()
		require.NoError(t, err)
		if s, ok := ev.Value.(*api.SessionEvent); ok {
			id = s.SessionID
		}
		if _, ok := ev.Value.(*api.MessageDeltaEvent); ok {
			break
		}
	}
	require.NoError(t, st.Close())

	br, stdout, done := followSession(t, b.ctx, srv.URL, id)
	close(release)
	var got []byte
	for !bytes.Contains(got, []byte("tail")) {
		c, err := br.ReadByte()
		require.NoError(t, err)
		got = append(got, c)
	}
	close(shown)
	_, _ = io.Copy(io.Discard, br)
	require.NoError(t, <-done)
	require.Equal(t, "session "+id+" · stream · running · just now\n> stream\nthe run is still going; following it (Ctrl-C to stop watching)\nhead tail\n[run completed]\n> \nbye. continue with: luban chat --url "+srv.URL+" --session "+id+"\n", stdout.String())
}

// followSession runs `luban chat --session id` against url with no input
// and reads its output until it says it follows the running run; it returns
// the rest of the output to read, all of it as written, and Run's error.
func followSession(t *testing.T, ctx context.Context, url, id string) (*bufio.Reader, *bytes.Buffer, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	stdout := &bytes.Buffer{}
	go func() {
		ch := &Chat{Stdin: strings.NewReader(""), Stdout: io.MultiWriter(stdout, pw), Stderr: io.Discard,
			Getenv: envOf(map[string]string{"LUBAN_URL": url, "LUBAN_AUTH_TOKEN": "test-token"})}
		done <- ch.Run(ctx, []string{"--session", id})
		pw.Close()
	}()
	br := bufio.NewReader(pr)
	for {
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "the run is still going") {
			return br, stdout, done
		}
	}
}

// A server that shuts down mid-run ends the stream cleanly; the terminal
// says the run goes on and how to follow it, instead of going quiet.
func TestChatSaysWhenTheStreamEndsEarly(t *testing.T) {
	t.Parallel()
	b := setup(t)
	blocked := make(chan struct{})
	slow := model.ProviderFunc{ProviderName: "slow", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		close(blocked)
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	srv := lubantest.Start(t, lubantest.Options{Provider: slow})
	stdout := &syncBuf{grew: make(chan struct{}, 1)}
	stdin, feed := io.Pipe()
	done := make(chan error, 1)
	go func() {
		ch := &Chat{Stdin: stdin, Stdout: stdout, Stderr: io.Discard,
			Getenv: envOf(map[string]string{"LUBAN_URL": srv.URL, "LUBAN_AUTH_TOKEN": "test-token"})}
		done <- ch.Run(b.ctx, nil)
	}()
	_, err := io.WriteString(feed, "hello\n")
	require.NoError(t, err)
	<-blocked
	// The model may be called before the stream's headers reach the client:
	// stop the server only once the terminal shows the stream has begun.
	stdout.waitFor(t, "[session ")
	srv.Stop()
	require.NoError(t, feed.Close())
	require.NoError(t, <-done)
	out := strings.ReplaceAll(sessRE.ReplaceAllString(stdout.String(), "SESS"), srv.URL, "URL")
	require.Contains(t, out, "> hello\n[session SESS]\n[the stream ended before the run paused or finished; luban chat --url URL --session SESS follows it]\n> \nbye. continue with: luban chat --url URL --session SESS\n")

	// A usage error names the chat command's help.
	var o, e bytes.Buffer
	require.Equal(t, 2, Run(b.ctx, []string{"chat", "extra"}, &o, &e))
	require.Contains(t, e.String(), "Try: luban chat --help\n")
}

// syncBuf is a bytes.Buffer safe to write from the command's goroutine
// while the test waits for some output.
type syncBuf struct {
	mu   sync.Mutex
	b    bytes.Buffer
	grew chan struct{}
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case s.grew <- struct{}{}:
	default:
	}
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuf) waitFor(t *testing.T, sub string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(s.String(), sub) {
		select {
		case <-s.grew:
		case <-deadline:
			t.Fatalf("output never contained %q: %q", sub, s.String())
		}
	}
}

// A session deleted elsewhere (DELETE ?force=true) while its question
// waits ends the wait (the session's stream ends, or shows the question
// cancelled elsewhere, as the deletion outran it or not), and the next
// message is refused as "no such session" (404 session_not_found), worded
// by its code in the terminal's language, never as a restart.
func TestChatWordsARefusedAnswerByItsCode(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(asks("", "ask_user", chatSingleArgs))
	stdout := &syncBuf{grew: make(chan struct{}, 1)}
	stdin, feed := io.Pipe()
	done := make(chan error, 1)
	go func() {
		ch := &Chat{Stdin: stdin, Stdout: stdout, Stderr: io.Discard,
			Getenv: envOf(map[string]string{"LUBAN_URL": b.srv.URL, "LUBAN_AUTH_TOKEN": "test-token", "LANG": "zh_CN.UTF-8"})}
		done <- ch.Run(b.ctx, nil)
	}()
	_, err := io.WriteString(feed, "问我\n")
	require.NoError(t, err)
	stdout.waitFor(t, "选择一项 (1-2): ")
	resp := b.srv.Request("DELETE", "/api/sessions/"+b.sessionID()+"?force=true", nil, "")
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	for strings.Count(stdout.String(), "\n> ") < 2 { // back at the message prompt
		select {
		case <-stdout.grew:
		case <-b.ctx.Done():
			t.Fatalf("the wait did not end: %s", stdout.String())
		}
	}
	_, err = io.WriteString(feed, "再问\n")
	require.NoError(t, err)
	stdout.waitFor(t, "错误：找不到这个会话（它不存在，或属于另一个令牌）\n")
	require.NoError(t, feed.Close())
	require.NoError(t, <-done)
	require.NotContains(t, stdout.String(), "服务已重启")
}
