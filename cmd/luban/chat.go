package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/client"
)

// Chat is `luban chat`, the terminal front end (docs/design.md §1): a line-oriented
// REPL over the typed client. It prints streamed assistant text and compact
// tool calls, renders each user_input_required question by mode (docs/design.md
// §A.3 card rules; AgentScope AskUser for batches), checks the answer locally
// with askuser.ValidateAnswer where it can, sends it, and on a 422 shows the
// server's field messages and asks again (the request stays pending).
// While it waits for an answer it follows the session's event stream, so an
// answer given elsewhere (the page, another terminal) shows as its receipt
// and the run's next question is asked here (chat_watch.go).
// /cancel declines the question (or stops the run), /quit leaves with the
// run paused; `luban chat --session <id>` later shows the pending question
// again (GET /api/interactions/pending). Every string that came from the
// model is printed with control characters escaped (safeLine, safeText), so
// a model cannot drive the terminal. Flags have environment twins: --url
// (LUBAN_URL), --token (LUBAN_AUTH_TOKEN; a comma list uses its first token;
// default: the token `luban serve` generated and kept beside its database),
// --db (LUBAN_DB: that database, as serve's --db names it; tokenPath),
// --lang (LUBAN_LANG; default: the locale, LC_ALL, LC_MESSAGES or LANG: zh*
// is Chinese, anything else English): the language of everything the
// terminal says of its own, field errors included (chat_lang.go).
type Chat struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
}

// chatSession is one `luban chat` invocation.
type chatSession struct {
	c         *client.Client
	out       io.Writer
	lines     *lineReader
	editor    string // $VISUAL or $EDITOR: how an approval's arguments are edited when set
	sessionID string
	agent     string // --agent: the agent a new session is started with ("" = the server's default)
	resumeCmd string // "luban chat" with the --url of this chat when it is not the default
	lang      chatLang
	asked     map[string]*api.InputRequest // requestId → request, for receipts
	receipted map[string]bool              // requestId → its receipt is printed
	root      context.Context              // the whole chat's context (an $EDITOR outlives a question's wait)
	open      map[string]string            // messageId → text printed so far
	thought   map[string]bool              // messageId → its "(thinking…)" marker is printed
	midLine   bool                         // the cursor is not at the start of a line
	echo      bool                         // print each line read (stdin is not a terminal)
}

// errQuit is returned by the input helpers when the person typed /quit or
// stdin ended.
var errQuit = errors.New("quit")

// errCancel is returned by the answer helpers when the person typed /cancel.
var errCancel = errors.New("cancel")

// delegateCmd is returned by the answer helpers when the person typed
// "/delegate PERSON [message]": hand the question to PERSON
// (POST /api/interactions/{id}/delegate, docs/design.md §16).
type delegateCmd struct{ to, message string }

func (*delegateCmd) Error() string { return "delegate" }

// Run runs `luban chat` with args until /quit, the end of stdin or ctx.
func (c *Chat) Run(ctx context.Context, args []string) error {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	lang := localeLang(getenv)
	if v := or(langArg(args), getenv("LUBAN_LANG")); v != "" {
		if l, err := parseLang(v); err == nil {
			lang = l
		}
	}
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	baseURL := fs.String("url", env("LUBAN_URL", defaultChatURL), lang.pick("luban 服务的地址 (LUBAN_URL)", "the luban server (LUBAN_URL)"))
	token := fs.String("token", env("LUBAN_AUTH_TOKEN", ""), lang.pick("访问令牌 (LUBAN_AUTH_TOKEN)；默认使用 luban serve 生成并保存在数据库旁的令牌", "bearer token (LUBAN_AUTH_TOKEN); default: the token luban serve generated and kept beside its database"))
	db := fs.String("db", getenv("LUBAN_DB"), lang.pick("luban serve 使用的数据库 (LUBAN_DB)：没有 --token 时读取它旁边的 luban.token", "the database luban serve was started with (LUBAN_DB): without --token, the luban.token beside it is read"))
	session := fs.String("session", "", lang.pick("继续这个会话：再次显示它等待回答的问题", "continue this session: shows its pending question again"))
	agentName := fs.String("agent", "", lang.pick("新会话使用的智能体（GET /api/agents 列出的名字）；默认使用第一个", "the agent of a new session (a name GET /api/agents lists); default: the first"))
	langFlag := fs.String("lang", getenv("LUBAN_LANG"), lang.pick("终端使用的语言：zh 或 en (LUBAN_LANG)；默认取自 LC_ALL、LC_MESSAGES 或 LANG", "the terminal's language: zh or en (LUBAN_LANG); default from LC_ALL, LC_MESSAGES or LANG"))
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), lang.pick(
			"用法：luban chat [--url http://127.0.0.1:8080] [--token …|--db path] [--session id] [--agent name] [--lang zh|en]\n\n输入消息后按回车。有问题显示时直接回答，\n或输入 /cancel 拒绝、/quit 稍后再答。\n\n参数：\n",
			"Usage: luban chat [--url http://127.0.0.1:8080] [--token …|--db path] [--session id] [--agent name] [--lang zh|en]\n\nType a message and press Enter. While a question is shown, answer it,\nor type /cancel to decline it or /quit to answer later.\n\nFlags:\n"))
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	if *langFlag != "" {
		l, err := parseLang(*langFlag)
		if err != nil {
			return &usageError{err.Error()}
		}
		lang = l
	}
	tok, _, _ := strings.Cut(*token, ",")
	tok = strings.TrimSpace(tok)
	tokenFile := ""
	if tok == "" {
		tok, tokenFile = generatedToken(*db, getenv)
		if tok == "" {
			return &usageError{lang.pick("没有令牌：", "no token: ") + safeLine(tokenFile) +
				lang.pick(" 不存在或为空（luban serve 把它生成的令牌保存在 --db 数据库旁）；请用 --db（LUBAN_DB）指定服务使用的数据库，或用 --token（LUBAN_AUTH_TOKEN）传入 luban serve 打印的令牌",
					" is missing or empty (luban serve keeps the token it generates beside its --db database); pass the server's database with --db (LUBAN_DB), or the token luban serve printed with --token (LUBAN_AUTH_TOKEN)")}
		}
	}
	cl, err := client.New(*baseURL, tok, nil)
	if err != nil {
		return &usageError{"--url (LUBAN_URL): " + err.Error()}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := checkServer(ctx, cl, *session, tokenFile, lang); err != nil {
		return err
	}
	if err := checkAgent(ctx, cl, *session, *agentName, lang); err != nil {
		return err
	}
	resumeCmd := "luban chat"
	if u := strings.TrimRight(*baseURL, "/"); u != defaultChatURL {
		resumeCmd += " --url " + safeLine(u)
	}
	s := &chatSession{c: cl, out: c.Stdout, lines: readLines(ctx, c.Stdin), sessionID: *session, agent: *agentName, lang: lang, resumeCmd: resumeCmd,
		asked: map[string]*api.InputRequest{}, receipted: map[string]bool{}, root: ctx, open: map[string]string{}, thought: map[string]bool{}, echo: !isTerminal(c.Stdin)}
	if isTerminal(c.Stdin) {
		s.editor = or(getenv("VISUAL"), getenv("EDITOR"))
	}
	err = s.run(ctx)
	if errors.Is(err, errQuit) || (err != nil && ctx.Err() != nil) {
		s.leave()
		return nil
	}
	if err != nil {
		s.leave() // a lost connection: the run goes on; say how to come back
	}
	return err
}

// isTerminal reports whether r is a character device (a terminal, whose
// input shows as it is typed). Other input is echoed after its prompt, so
// a transcript of piped answers reads like the session it was.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// defaultChatURL is where `luban chat` looks for the server without --url
// or LUBAN_URL.
const defaultChatURL = "http://127.0.0.1:8080"

// generatedToken reads the token `luban serve --db db` generated when it was
// started without --auth-token (tokenPath: luban.token beside the SQLite
// file, or in the default data directory). It returns the token ("" when
// the file is missing, unreadable or empty) and the file it looked at.
func generatedToken(db string, getenv func(string) string) (string, string) {
	path := tokenPath(db, getenv)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", path
	}
	return strings.TrimSpace(string(b)), path
}

// checkServer asks the server, before the chat starts, whether it answers
// and takes the token: GET /api/sessions/{id} for --session (so a session
// that is not there is refused before anything else is printed), GET
// /api/info otherwise. The error it returns is worded in the chat's
// language: the server cannot be reached, the token was refused (and how to
// give one; tokenFile is where a token read without --token came from), or
// the server's refusal by its code.
func checkServer(ctx context.Context, cl *client.Client, sessionID, tokenFile string, lang chatLang) error {
	var err error
	if sessionID != "" {
		_, err = cl.Session(ctx, sessionID)
	} else {
		_, err = cl.Info(ctx)
	}
	if err == nil || ctx.Err() != nil {
		return err
	}
	var ce *client.Error
	if !errors.As(err, &ce) {
		return errors.New(lang.pick("无法连接 ", "cannot reach ") + safeLine(cl.BaseURL()) + lang.pick("（服务是否在运行？地址用 --url 或 LUBAN_URL 指定）", " (is luban serve running there? the address is --url or LUBAN_URL)"))
	}
	if ce.Status == http.StatusUnauthorized {
		if tokenFile != "" {
			return errors.New(lang.pick("服务拒绝了从 ", "the server refused the token read from ") + safeLine(tokenFile) +
				lang.pick(" 读取的令牌：请用 --db（LUBAN_DB）指定这个服务使用的数据库，或用 --token 或 LUBAN_AUTH_TOKEN 传入 luban serve 打印的令牌",
					": pass this server's database with --db (LUBAN_DB), or the token luban serve printed with --token or LUBAN_AUTH_TOKEN"))
		}
		return errors.New(lang.pick("服务拒绝了这个令牌：请用 --token 或 LUBAN_AUTH_TOKEN 传入 luban serve 打印的令牌", "the server refused the token: pass the token luban serve printed with --token or LUBAN_AUTH_TOKEN"))
	}
	if sessionID != "" && api.ErrorCode(ce.Code) == api.CodeSessionNotFound {
		return errors.New(lang.pick("找不到会话 ", "no session ") + safeLine(sessionID) + lang.pick("（它不存在，或属于另一个令牌）", " (it does not exist, or belongs to another token)"))
	}
	return errors.New(refusalText(ce, lang))
}

// checkAgent refuses, before the chat starts, an --agent the server does not
// have (naming the ones it has, GET /api/agents) or, with --session, another
// agent than the one that session keeps. An empty name checks nothing. Its
// refusals are runtime errors (exit 1, docs/terminal.md), not usage errors:
// the flag is well formed, and only the server knows its agents.
func checkAgent(ctx context.Context, cl *client.Client, sessionID, name string, lang chatLang) error {
	if name == "" {
		return nil
	}
	agents, err := cl.Agents(ctx)
	if err != nil {
		var ce *client.Error
		if errors.As(err, &ce) {
			return errors.New(refusalText(ce, lang))
		}
		return err
	}
	var names []string
	found := false
	for _, a := range agents {
		names = append(names, safeLine(a.Name))
		found = found || a.Name == name
	}
	if !found {
		return errors.New(lang.pick("没有智能体 ", "no agent ") + safeLine(name) + lang.pick("（服务的智能体：", " (the server's agents: ") + strings.Join(names, ", ") + lang.pick("）", ")"))
	}
	if sessionID == "" {
		return nil
	}
	tr, err := cl.Session(ctx, sessionID)
	if err != nil {
		return err
	}
	if tr.Session.Agent != "" && tr.Session.Agent != name {
		return errors.New(lang.pick("会话 ", "session ") + safeLine(sessionID) + lang.pick(" 使用智能体 ", " keeps its agent ") + safeLine(tr.Session.Agent) +
			lang.pick("；--agent 只为新会话选择智能体", "; --agent picks the agent of a new session"))
	}
	return nil
}

// lineReader reads stdin one line at a time, and only when asked: no read
// is pending between two prompts, so an $EDITOR started for an edit has the
// terminal to itself.
type lineReader struct {
	want    chan struct{}
	lines   chan string
	waiting bool // a line was asked for and not yet received
}

// readLines starts a lineReader on r; its lines channel (without the line
// ends) is closed at the end of input.
func readLines(ctx context.Context, r io.Reader) *lineReader {
	lr := &lineReader{want: make(chan struct{}, 1), lines: make(chan string)}
	go func() {
		defer close(lr.lines)
		br := bufio.NewReader(r)
		for {
			select {
			case <-lr.want:
			case <-ctx.Done():
				return
			}
			line, err := br.ReadString('\n')
			if line != "" || err == nil {
				select {
				case lr.lines <- strings.TrimRight(line, "\r\n"):
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	return lr
}

// next asks for the next line and returns the channel it arrives on.
func (lr *lineReader) next() <-chan string {
	if !lr.waiting {
		lr.want <- struct{}{}
		lr.waiting = true
	}
	return lr.lines
}

// read prints prompt and returns the next line; errQuit at the end of input,
// ctx's error when it ends first.
func (s *chatSession) read(ctx context.Context, prompt string) (string, error) {
	s.endLine()
	fmt.Fprint(s.out, prompt)
	s.midLine = true
	select {
	case line, ok := <-s.lines.next():
		s.lines.waiting = false
		s.midLine = false // the typed line ended it, or the echo below does
		if !ok {
			fmt.Fprintln(s.out)
			return "", errQuit
		}
		if s.echo {
			fmt.Fprintln(s.out, safeLine(line))
		}
		return line, nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (s *chatSession) printf(format string, a ...any) {
	s.endLine()
	fmt.Fprintf(s.out, format, a...)
}

// endLine ends a line of streamed text that is still open.
// thinking prints, once per message, a one-line marker that the model is
// reasoning. The reasoning itself is never printed: it is not the answer
// (docs/models.md "Reasoning models"); the page shows it folded.
func (s *chatSession) thinking(messageID string) {
	if s.thought[messageID] {
		return
	}
	s.thought[messageID] = true
	s.endLine()
	s.printf("%s\n", s.lang.pick("（思考中…）", "(thinking…)"))
}

func (s *chatSession) endLine() {
	if s.midLine {
		fmt.Fprintln(s.out)
		s.midLine = false
	}
}

func (s *chatSession) leave() {
	if s.sessionID != "" {
		s.printf(s.lang.pick("再见。之后继续：%s --session %s\n", "bye. continue with: %s --session %s\n"), s.resumeCmd, safeLine(s.sessionID))
	}
}

// mcpAuthorizations says which MCP servers wait for the principal to
// authorize luban (GET /api/mcp/authorizations, docs/design.md §11
// "OAuth") and the link that starts it, to open in a browser signed in to
// luban. A server that cannot say (an older one) is not mentioned.
func (s *chatSession) mcpAuthorizations(ctx context.Context) {
	as, err := s.c.MCPAuthorizations(ctx)
	if err != nil {
		return
	}
	for _, a := range as {
		s.printf(s.lang.pick("MCP 服务器 %s 需要你授权：在已登录 luban 的浏览器中打开 %s\n", "the MCP server %s needs your authorization: open %s in a browser signed in to luban\n"),
			safeLine(a.Server), safeLine(strings.TrimRight(s.c.BaseURL(), "/")+a.ConnectURL))
	}
}

func (s *chatSession) run(ctx context.Context) error {
	if s.sessionID != "" {
		if err := s.resume(ctx); err != nil {
			return err
		}
	} else {
		s.printf("%s\n", s.lang.pick("luban chat：输入消息后按回车（/help 查看命令）", "luban chat: type a message (/help for commands)"))
	}
	s.mcpAuthorizations(ctx)
	for {
		line, err := s.read(ctx, "> ")
		if err != nil {
			return err
		}
		cmd := strings.TrimSpace(line)
		switch {
		case cmd == "":
			continue
		case cmd == "/quit" || cmd == "/exit":
			return errQuit
		case cmd == "/help":
			s.printf("%s\n", s.lang.pick("命令：/cancel 停止会话中的任务 · /quit 退出（等待中的问题留待以后回答）· /help；回答问题时：/delegate 人员ID [留言] 转交给别人",
				"commands: /cancel stop the session's run · /quit leave (a pending question stays for later) · /help; at a question: /delegate PERSON-ID [message] hands it on"))
			continue
		case cmd == "/cancel":
			if err := s.cancelRun(ctx); err != nil {
				return err
			}
			continue
		case strings.HasPrefix(cmd, "/"):
			s.printf(s.lang.pick("没有 %s 这个命令（/help 列出全部命令）\n", "unknown command %s (/help lists them)\n"), safeLine(cmd))
			continue
		}
		st, err := s.c.Start(ctx, api.ChatRequest{SessionID: s.sessionID, Message: line, Agent: s.agent})
		var ce *client.Error
		if errors.As(err, &ce) && ce.Pending != nil {
			s.printf("%s\n", s.lang.pick("请先回答正在等待的问题：", "a question is waiting for your answer first:"))
			err = s.answerLoop(ctx, ce.Pending, s.lastEventID(ctx, ce.Pending.SessionID))
		} else if err != nil {
			if s.report(err) {
				continue
			}
			return err
		} else {
			err = s.follow(ctx, st)
		}
		if err != nil {
			return err
		}
	}
}

// report prints a server refusal and says whether the REPL can go on (a
// *client.Error); transport errors end it.
func (s *chatSession) report(err error) bool {
	var ce *client.Error
	if !errors.As(err, &ce) {
		return false
	}
	s.printf("%s%s\n", s.lang.pick("错误：", "error: "), refusalText(ce, s.lang))
	return true
}

// lastEventID is the id of the session's last event, where a watch of its
// pending question starts; 0 (the whole log) when it cannot be read.
func (s *chatSession) lastEventID(ctx context.Context, sessionID string) int64 {
	tr, err := s.c.Session(ctx, sessionID)
	if err != nil {
		return 0
	}
	return tr.LastEventID
}

// resume shows a session named by --session: its state, its pending
// question (answered now) or last receipt, and follows a run still going.
func (s *chatSession) resume(ctx context.Context) error {
	// The stream after the transcript starts with the text a run still
	// going streamed before it was read, and repeats nothing it holds.
	tr, st, err := s.c.Resume(ctx, s.sessionID)
	if err != nil {
		return err
	}
	defer st.Close()
	s.printf("%s %s · %s · %s · %s\n", s.lang.pick("会话", "session"), safeLine(tr.Session.ID), safeLine(tr.Session.Title), runStatusText(tr.Session.Status, s.lang),
		relativeTime(tr.Session.UpdatedAt, time.Now(), s.lang))
	for _, it := range tr.Interactions {
		s.asked[it.Request.ID] = &it.Request
	}
	s.replay(tr)
	p, err := s.c.Pending(ctx, s.sessionID)
	if err != nil {
		return err
	}
	switch {
	case p.Pending != nil:
		st.Close() // the answer loop watches the session on its own stream
		return s.answerLoop(ctx, p.Pending, tr.LastEventID)
	case tr.Session.Status == string(api.RunRunning):
		s.printf("%s\n", s.lang.pick("任务还在运行，正在跟随（Ctrl-C 停止查看）", "the run is still going; following it (Ctrl-C to stop watching)"))
		return s.follow(ctx, st)
	case p.Last != nil && !s.receipted[p.Last.RequestID]:
		s.receipt(p.Last)
	}
	return nil
}

// replay prints tr's conversation as the live stream showed it: the
// person's messages after "> ", the assistant's text (a reply a stop cut
// short with its stoppedMark), other tools' calls and results, and each
// answered question's receipt after its ToolResult.
func (s *chatSession) replay(tr *api.Transcript) {
	receipts := map[string][]*api.Receipt{}
	for _, it := range tr.Interactions {
		if it.Receipt != nil {
			receipts[it.Request.ToolCallID] = append(receipts[it.Request.ToolCallID], it.Receipt)
		}
	}
	for _, m := range tr.Messages {
		switch m.Role {
		case api.RoleUser:
			s.printf("> %s\n", safeLine(m.Content))
		case api.RoleAssistant:
			if m.Content != "" {
				s.printf("%s", safeText(m.Content))
				s.midLine = !strings.HasSuffix(m.Content, "\n")
				s.endLine()
			}
			if m.Stopped {
				s.printf("%s\n", stoppedMark(s.lang))
			}
			for _, c := range m.ToolCalls {
				if !askuser.IsAskTool(c.Name) {
					s.printf("  → %s %s\n", safeLine(c.Name), clipLine(c.Arguments, 100))
				}
			}
		case api.RoleTool:
			switch {
			case m.IsError:
				s.printf("  ✗ %s: %s\n", safeLine(m.Name), clipLine(m.Content, 200))
			case !askuser.IsAskTool(m.Name):
				s.printf("  ← %s: %s\n", safeLine(m.Name), clipLine(m.Content, 200))
			}
			for _, rc := range receipts[m.ToolCallID] {
				if !s.receipted[rc.RequestID] {
					s.receipt(rc)
				}
			}
		}
	}
}

// follow prints a stream until the run pauses or ends, then answers every
// question it asks, one after another.
func (s *chatSession) follow(ctx context.Context, st *client.Stream) error {
	req, after, err := s.render(ctx, st)
	if err != nil {
		return err
	}
	if req == nil {
		return nil
	}
	return s.answerLoop(ctx, req, after)
}

// render prints a stream's events and returns the question it paused on
// (nil when the run ended or the stream closed early) with the stream's
// last event id. Only ctx's end is an error: a lost stream is reported and
// the REPL goes on.
func (s *chatSession) render(ctx context.Context, st *client.Stream) (*api.InputRequest, int64, error) {
	req, err := s.renderEvents(ctx, st)
	return req, st.LastEventID(), err
}

func (s *chatSession) renderEvents(ctx context.Context, st *client.Stream) (*api.InputRequest, error) {
	defer st.Close()
	for {
		ev, err := st.Next()
		if ev != nil && err != nil {
			continue // an event whose payload this client cannot decode
		}
		if err != nil {
			if ctx.Err() != nil {
				s.endLine()
				return nil, ctx.Err()
			}
			// An answer to one of several questions the run asked at
			// once ends its stream while the run waits on the others
			// (docs/design.md §32): the next of them is asked.
			if s.sessionID != "" {
				if p, perr := s.c.Pending(ctx, s.sessionID); perr == nil && len(p.Requests) > 0 {
					s.endLine()
					return p.Requests[0], nil
				}
			}
			// The server ended the stream (it is shutting down) or the
			// connection broke before the run paused or ended: the run
			// goes on in the server, and its events stay in the log.
			s.printf(s.lang.pick("[连接在任务暂停或结束前断开；%s --session %s 可以继续跟随]\n",
				"[the stream ended before the run paused or finished; %s --session %s follows it]\n"), s.resumeCmd, safeLine(s.sessionID))
			return nil, nil
		}
		switch v := ev.Value.(type) {
		case *api.SessionEvent:
			if v.SessionID != s.sessionID {
				s.sessionID = v.SessionID
				s.printf("[%s %s]\n", s.lang.pick("会话", "session"), safeLine(v.SessionID))
			}
		case *api.MessageDeltaEvent:
			s.open[v.MessageID] += v.Delta
			fmt.Fprint(s.out, safeText(v.Delta))
			s.midLine = !strings.HasSuffix(v.Delta, "\n")
		case *api.ReasoningDeltaEvent:
			s.thinking(v.MessageID)
		case *api.MessageEvent:
			if v.Role != "assistant" {
				continue
			}
			printed, seen := s.open[v.MessageID]
			if v.Reasoning != "" && !seen {
				s.thinking(v.MessageID)
			}
			delete(s.open, v.MessageID)
			if seen && strings.HasPrefix(v.Content, printed) {
				rest := v.Content[len(printed):]
				fmt.Fprint(s.out, safeText(rest))
				if rest != "" {
					s.midLine = !strings.HasSuffix(rest, "\n")
				}
			} else if v.Content != "" {
				s.printf("%s", safeText(v.Content))
				s.midLine = !strings.HasSuffix(v.Content, "\n")
			}
			s.endLine()
			if v.Stopped {
				s.printf("%s\n", stoppedMark(s.lang))
			}
		case *api.ToolCallEvent:
			if !askuser.IsAskTool(v.Name) {
				s.printf("  → %s %s\n", safeLine(v.Name), clipLine(v.Arguments, 100))
			}
		case *api.ToolResultEvent:
			switch {
			case v.IsError:
				s.printf("  ✗ %s: %s\n", safeLine(v.Name), clipLine(v.Content, 200))
			case !askuser.IsAskTool(v.Name):
				s.printf("  ← %s: %s\n", safeLine(v.Name), clipLine(v.Content, 200))
			}
		case *api.InputRequest:
			s.endLine()
			return v, nil
		case *api.Receipt:
			if !s.receipted[v.RequestID] {
				s.receipt(v)
			}
		case *api.ErrorEvent:
			s.printf("%s%s\n", s.lang.pick("错误：", "error: "), runErrorText(v.Code, v.Message, s.lang))
		case *api.DoneEvent:
			s.printf("[%s]\n", s.lang.pick(runStatusText(string(v.Status), s.lang), "run "+runStatusText(string(v.Status), s.lang)))
			return nil, nil
		}
	}
}

// cancelRun is /cancel at the message prompt: POST
// /api/sessions/{id}/cancel.
func (s *chatSession) cancelRun(ctx context.Context) error {
	if s.sessionID == "" {
		s.printf("%s\n", s.lang.pick("还没有可以取消的任务", "nothing to cancel yet"))
		return nil
	}
	status, err := s.c.Cancel(ctx, s.sessionID)
	if err != nil {
		if s.report(err) {
			return nil
		}
		return err
	}
	s.printf("[%s]\n", s.lang.pick("会话", "session ")+runStatusText(status, s.lang))
	return nil
}

// answerLoop shows req, reads an answer, sends it, and follows the
// continuation, asking again after a rejected answer; it keeps going while
// the run asks further questions. A run that asked several questions at
// once (docs/design.md §32) has each asked in call order, and when two or
// more of them are approvals, "approve all" first sends one batch answer.
// after is the id of the session event that asked req (0 when unknown):
// from there the session's stream is watched while the person answers, and
// an answer given elsewhere ends the wait (its receipt is shown, then the
// run's next question).
func (s *chatSession) answerLoop(ctx context.Context, req *api.InputRequest, after int64) error {
	offered := map[string]bool{}
	for req != nil {
		queue := s.waiting(ctx, req)
		req = queue[0]
		if req.SessionID != "" {
			s.sessionID = req.SessionID
		}
		lang := s.lang
		if approvals := approvalsOf(queue); len(approvals) >= 2 && !offered[approvals[0].ID] {
			for _, a := range approvals {
				offered[a.ID] = true
			}
			sent, next, nextAfter, err := s.approveAll(ctx, approvals, after, lang)
			if err != nil {
				return err
			}
			if sent {
				if next == nil {
					return nil
				}
				req, after = next, nextAfter
				continue
			}
		} else if len(queue) > 1 && !offered[req.ID] {
			for _, q := range queue {
				offered[q.ID] = true
			}
			s.printf(lang.pick("（有 %d 个问题在等待，依次回答）\n", "(%d questions are waiting; answering them in turn)\n"), len(queue))
		}
		s.asked[req.ID] = req
		s.show(req, lang)
		if !req.Resumable {
			s.printf("%s\n", lang.pick("服务已重启，这个问题无法继续；请重新发起任务。", "The server restarted and cannot continue this question; start the task again."))
			return nil
		}
		w := s.watch(ctx, req.SessionID, req.ID, after)
		next, nextAfter, err := s.answerOne(ctx, w, req, after, lang)
		w.stop()
		if err != nil || next == nil {
			return err
		}
		req, after = next, nextAfter
	}
	return nil
}

// waiting is every request the session of req waits on, in call order
// (GET /api/interactions/pending's requests), req alone when they cannot
// be read. A request the server no longer lists (answered meanwhile) is
// dropped, except req itself when nothing else is listed.
func (s *chatSession) waiting(ctx context.Context, req *api.InputRequest) []*api.InputRequest {
	if req.SessionID == "" {
		return []*api.InputRequest{req}
	}
	p, err := s.c.Pending(ctx, req.SessionID)
	if err != nil || len(p.Requests) == 0 {
		return []*api.InputRequest{req}
	}
	return p.Requests
}

// approvalsOf is the approvals among reqs.
func approvalsOf(reqs []*api.InputRequest) []*api.InputRequest {
	var out []*api.InputRequest
	for _, r := range reqs {
		if r.Tool == api.ToolApproval {
			out = append(out, r)
		}
	}
	return out
}

// approveAll shows every approval of approvals and offers to approve them
// all with one batch answer (docs/design.md §32). It reports whether it
// sent it, or found one of them resolved elsewhere (409/410 with the
// receipt, shown as an answer seen on the stream is, from the event after);
// then next is the run's next question (nil when the run ended or waits on
// nothing this terminal shows) with the id of its event. Enter (or anything
// but A), or another refusal, answers them one by one instead.
func (s *chatSession) approveAll(ctx context.Context, approvals []*api.InputRequest, after int64, lang chatLang) (bool, *api.InputRequest, int64, error) {
	s.printf(lang.pick("%d 个调用等待批准：\n", "%d calls wait for approval:\n"), len(approvals))
	for _, a := range approvals {
		s.asked[a.ID] = a
		s.show(a, lang)
	}
	l, err := s.line(ctx, lang.pick("全部批准？[A 全部批准 / 回车 逐个决定]: ", "approve all? [A = approve all, Enter = one by one]: "))
	if err != nil {
		return false, nil, 0, err
	}
	switch strings.TrimSpace(l) {
	case "A", "a", "all", "全部":
	default:
		return false, nil, 0, nil
	}
	body := api.ContinueBatchRequest{SessionID: approvals[0].SessionID}
	for _, a := range approvals {
		body.Answers = append(body.Answers, api.ContinueEntry{RequestID: a.ID, Decision: api.DecisionApprove})
	}
	st, err := s.c.ContinueBatch(ctx, body)
	var ce *client.Error
	if errors.As(err, &ce) {
		if ce.Receipt != nil && (ce.Code == string(api.CodeAlreadyResolved) || ce.Code == string(api.CodeInteractionExpired)) {
			// One was resolved elsewhere while the prompt showed: its
			// receipt, then the run's next question (the others).
			next, nextAfter, err := s.elsewhere(ctx, ce.Receipt, after)
			return true, next, nextAfter, err
		}
		// Nothing changed (all or none): say why, then they are asked
		// one by one.
		if ce.Status == http.StatusUnprocessableEntity {
			s.fieldErrors(ce.Details, ce.Message, lang)
		} else {
			s.printf("%s%s\n", lang.pick("错误：", "error: "), refusalText(ce, lang))
		}
		return false, nil, 0, nil
	}
	if err != nil {
		return false, nil, 0, err
	}
	next, after, err := s.render(ctx, st)
	return true, next, after, err
}

// answerOne reads and sends answers to req until one is accepted here or
// req is resolved elsewhere (w), and returns the run's next question (nil
// when there is none) with the id of the event that asked it.
func (s *chatSession) answerOne(ctx context.Context, w *watcher, req *api.InputRequest, after int64, lang chatLang) (*api.InputRequest, int64, error) {
	for {
		var body api.ContinueRequest
		var err error
		if req.Tool == api.ToolApproval {
			body, err = s.collectApproval(w.ctx, req, lang)
		} else if req.Tool == api.ToolElicitation {
			body, err = s.collectElicitation(w.ctx, req, lang)
		} else {
			var ans api.Answer
			ans, err = s.collect(w.ctx, req, lang)
			body = api.ContinueRequest{Selections: ans.Selections, CustomInput: ans.CustomInput, Cancelled: ans.Cancelled, Answers: ans.Answers}
		}
		if rc, id := w.resolved(); rc != nil && ctx.Err() == nil {
			return s.elsewhere(ctx, rc, id)
		}
		if gone := w.refused(); gone != nil && ctx.Err() == nil {
			s.printf("%s%s\n", lang.pick("错误：", "error: "), refusalText(gone, lang))
			return nil, 0, nil
		}
		if errors.Is(err, errCancel) {
			body, err = api.ContinueRequest{Selections: []string{}, Cancelled: true}, nil
		}
		var dc *delegateCmd
		if errors.As(err, &dc) {
			if dc.to == "" {
				s.printf("  ! %s\n", lang.pick("用法：/delegate 人员ID [留言]", "usage: /delegate PERSON-ID [message]"))
				continue
			}
			res, derr := s.c.Delegate(ctx, req.ID, dc.to, dc.message)
			var ce *client.Error
			if errors.As(derr, &ce) && (ce.Status == http.StatusUnprocessableEntity || ce.Status == http.StatusForbidden) {
				s.printf("%s%s\n", lang.pick("错误：", "error: "), refusalText(ce, lang))
				continue
			}
			if derr != nil {
				return nil, 0, derr
			}
			name := res.To.Name
			if name == "" {
				name = res.To.ID
			}
			s.printf("%s\n", lang.pick("→ 已转交给 "+safeLine(name), "→ handed to "+safeLine(name)))
			return nil, 0, nil
		}
		if err != nil {
			if errors.Is(err, errQuit) {
				s.printf("%s\n", lang.pick("问题保留，稍后可以继续回答。", "The question stays open; you can answer it later."))
			}
			return nil, 0, err
		}
		body.SessionID, body.RequestID = req.SessionID, req.ID
		st, err := s.c.Continue(ctx, body)
		var ce *client.Error
		if errors.As(err, &ce) {
			switch {
			case ce.Status == http.StatusUnprocessableEntity:
				s.fieldErrors(ce.Details, ce.Message, lang)
				continue
			case ce.Code == string(api.CodeAlreadyResolved) && ce.Receipt != nil:
				// Answered elsewhere between the last line read and this
				// send: the same as a receipt seen on the stream.
				w.stop()
				if _, id := w.resolved(); id > 0 {
					after = id
				}
				return s.elsewhere(ctx, ce.Receipt, after)
			}
			s.printf("%s%s\n", lang.pick("错误：", "error: "), refusalText(ce, lang))
			if ce.Receipt != nil {
				s.receipt(ce.Receipt)
			}
			return nil, 0, nil
		}
		if err != nil {
			return nil, 0, err
		}
		w.stop()
		return s.render(ctx, st)
	}
}

// fieldErrors prints a rejected answer's details, each worded from its
// field, code and params (detailText), then asks again.
func (s *chatSession) fieldErrors(details []api.FieldError, msg string, lang chatLang) {
	if len(details) == 0 {
		s.printf("  ! %s\n", safeLine(msg))
	}
	for _, d := range details {
		s.printf("  ! %s\n", detailText(d, lang))
	}
	s.printf("%s\n", lang.pick("请重新回答。", "Please answer again."))
}

// show prints the question card, with whom it waits for when a route
// assigned it (docs/design.md §16).
func (s *chatSession) show(req *api.InputRequest, lang chatLang) {
	if w := req.WaitingFor; w != nil {
		names := make([]string, len(w.Names))
		for i, n := range w.Names {
			names[i] = safeLine(n)
		}
		line := lang.pick("等待 "+strings.Join(names, "、"), "waiting for "+strings.Join(names, ", "))
		if w.Quorum > 1 {
			line += lang.pick(fmt.Sprintf("（已批准 %d/%d）", len(w.Approvals), w.Quorum), fmt.Sprintf(" (%d of %d approved)", len(w.Approvals), w.Quorum))
		}
		s.printf("  %s\n", line)
	}
	if req.Tool == api.ToolApproval {
		s.showApproval(req, lang)
		return
	}
	if req.Tool == api.ToolElicitation {
		s.showElicitation(req, lang)
		return
	}
	hint := lang.pick("（/cancel 取消，/quit 稍后再答）", "(/cancel to decline, /quit to answer later)")
	if req.Mode == api.ModeQuestions || req.Tool == api.ToolAskUserBatch {
		s.printf("? %s %s\n", lang.pick(fmt.Sprintf("请回答 %d 个问题", len(req.Questions)), fmt.Sprintf("%d question(s) for you", len(req.Questions))), hint)
		return // each question is shown as it is asked
	}
	s.printf("? %s\n", safeLine(req.Title))
	s.indent(req.Description, "  ")
	s.printOptions(req.Options, lang)
	s.printf("  %s\n", hint)
}

func (s *chatSession) printOptions(opts []api.Option, lang chatLang) {
	for i, o := range opts {
		line := fmt.Sprintf("  %d) %s", i+1, safeLine(o.Label))
		if o.Recommended {
			line += lang.pick(" (推荐)", " (recommended)")
		}
		if o.Description != "" {
			line += " — " + safeLine(o.Description)
		}
		s.printf("%s\n", line)
	}
}

// indent prints multi-line model text, each line escaped and indented.
func (s *chatSession) indent(text, prefix string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		s.printf("%s%s\n", prefix, safeLine(strings.TrimSuffix(l, "\r")))
	}
}

// collect reads one whole answer and checks it locally: the same
// askuser.ValidateAnswer the server runs, except for directory answers
// (only the server knows its workspace).
func (s *chatSession) collect(ctx context.Context, req *api.InputRequest, lang chatLang) (api.Answer, error) {
	for {
		var ans api.Answer
		var err error
		if req.Mode == api.ModeQuestions || req.Tool == api.ToolAskUserBatch {
			ans, err = s.collectQuestions(ctx, req, lang)
		} else {
			ans, err = s.collectForm(ctx, req, lang)
		}
		if err != nil {
			return ans, err
		}
		if req.Mode == api.ModeDirectory {
			return ans, nil
		}
		_, verr := askuser.ValidateAnswer(&req.Prompt, ans, askuser.AnswerOptions{})
		var ae *askuser.AnswerError
		if errors.As(verr, &ae) {
			s.fieldErrors(ae.Details, "", lang)
			continue
		}
		return ans, nil
	}
}

// line reads one answer line; /cancel and /quit are commands at every
// question prompt.
func (s *chatSession) line(ctx context.Context, prompt string) (string, error) {
	l, err := s.read(ctx, prompt)
	if err != nil {
		return "", err
	}
	switch strings.TrimSpace(l) {
	case "/cancel":
		return "", errCancel
	case "/quit", "/exit":
		return "", errQuit
	}
	if rest, ok := strings.CutPrefix(strings.TrimSpace(l), "/delegate"); ok && (rest == "" || rest[0] == ' ') {
		to, msg, _ := strings.Cut(strings.TrimSpace(rest), " ")
		return "", &delegateCmd{to: to, message: strings.TrimSpace(msg)}
	}
	return l, nil
}

// collectForm reads an ask_user answer (docs/design.md §A.3: radio, checkboxes,
// switches, or one input line; "其他说明" with allowCustom).
func (s *chatSession) collectForm(ctx context.Context, req *api.InputRequest, lang chatLang) (api.Answer, error) {
	ans := api.Answer{Selections: []string{}}
	n := len(req.Options)
	var prompt string
	var min, max int
	switch req.Mode {
	case api.ModeSingle:
		min, max = 1, 1
		prompt = lang.pick(fmt.Sprintf("选择一项 (1-%d)", n), fmt.Sprintf("choose one (1-%d)", n))
		if req.AllowCustom {
			min = 0
			prompt = lang.pick(fmt.Sprintf("选择一项 (1-%d，或留空后填写其他说明)", n), fmt.Sprintf("choose one (1-%d, or leave empty and write your own)", n))
		}
	case api.ModeMultiple:
		min, max = 0, n
		prompt = lang.pick(fmt.Sprintf("选择任意项，用逗号分隔 (如 1,%d；可留空)", n), fmt.Sprintf("choose any, comma separated (e.g. 1,%d; may be empty)", n))
	case api.ModeToggle:
		min, max = 1, n
		prompt = lang.pick(fmt.Sprintf("至少选择一项，用逗号分隔 (如 1,%d)", n), fmt.Sprintf("choose at least one, comma separated (e.g. 1,%d)", n))
	default:
		prompt = map[api.Mode]string{
			api.ModeText:      lang.pick("输入回答", "your answer"),
			api.ModeNumber:    numberPrompt(&req.Prompt, lang),
			api.ModeDate:      lang.pick("输入日期 (YYYY-MM-DD)", "a date (YYYY-MM-DD)"),
			api.ModeDirectory: lang.pick("输入工作区内的相对目录", "a directory relative to the workspace"),
		}[req.Mode]
		if prompt == "" {
			prompt = lang.pick("输入回答", "your answer")
		}
		l, err := s.line(ctx, prompt+": ")
		ans.CustomInput = strings.TrimSpace(l)
		return ans, err
	}
	for {
		l, err := s.line(ctx, prompt+": ")
		if err != nil {
			return ans, err
		}
		picks, msg := parsePicks(l, n, min, max, lang)
		if msg != "" {
			s.printf("  ! %s\n", msg)
			continue
		}
		for _, i := range picks {
			ans.Selections = append(ans.Selections, req.Options[i].ID)
		}
		break
	}
	if req.AllowCustom {
		l, err := s.line(ctx, lang.pick("其他说明 (可留空): ", "other notes (may be empty): "))
		if err != nil {
			return ans, err
		}
		ans.CustomInput = strings.TrimSpace(l)
	}
	return ans, nil
}

// numberPrompt asks for a number answer and states its bounds (ask_user
// minimum, maximum, integer) in the words of the page's field hint.
func numberPrompt(p *api.Prompt, lang chatLang) string {
	what := lang.pick("数字", "number")
	if p.Integer {
		what = lang.pick("整数", "whole number")
	}
	num := func(f *float64) string { s, _ := paramNumber(*f); return s }
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		return lang.pick("输入 "+num(p.Minimum)+" 到 "+num(p.Maximum)+" 之间的"+what, "a "+what+" from "+num(p.Minimum)+" to "+num(p.Maximum))
	case p.Minimum != nil:
		return lang.pick("输入不小于 "+num(p.Minimum)+" 的"+what, "a "+what+", at least "+num(p.Minimum))
	case p.Maximum != nil:
		return lang.pick("输入不大于 "+num(p.Maximum)+" 的"+what, "a "+what+", at most "+num(p.Maximum))
	}
	return lang.pick("输入"+what, "a "+what)
}

// collectQuestions reads an AskUser batch (AgentScope AskUser): each
// question with its header and context, its options and an "Other" choice
// for free text; multi_select questions take a comma list.
func (s *chatSession) collectQuestions(ctx context.Context, req *api.InputRequest, lang chatLang) (api.Answer, error) {
	ans := api.Answer{Selections: []string{}, Answers: []api.QuestionAnswer{}}
	for qi, q := range req.Questions {
		s.printf("[%s] %s (%d/%d)\n", safeLine(q.Header), safeLine(q.Question), qi+1, len(req.Questions))
		s.indent(q.Context, "  ")
		for i, o := range q.Options {
			line := fmt.Sprintf("  %d) %s", i+1, safeLine(o.Label))
			if o.Description != "" {
				line += " — " + safeLine(o.Description)
			}
			s.printf("%s\n", line)
			if !q.MultiSelect {
				s.indent(o.Preview, "       ")
			}
		}
		other := len(q.Options) + 1
		s.printf("  %d) %s\n", other, lang.pick("其他 — 自己填写", "Other — write your own"))
		var prompt string
		min, max := 1, 1
		if q.MultiSelect {
			max = other
			prompt = lang.pick(fmt.Sprintf("可多选，用逗号分隔 (如 1,%d)", other), fmt.Sprintf("choose one or more, comma separated (e.g. 1,%d)", other))
		} else {
			prompt = lang.pick(fmt.Sprintf("选择一项 (1-%d)", other), fmt.Sprintf("choose one (1-%d)", other))
		}
		qa := api.QuestionAnswer{Question: q.Question, Selected: []string{}}
		for {
			l, err := s.line(ctx, prompt+": ")
			if err != nil {
				return ans, err
			}
			picks, msg := parsePicks(l, other, min, max, lang)
			if msg != "" {
				s.printf("  ! %s\n", msg)
				continue
			}
			wantOther := false
			for _, i := range picks {
				if i == other-1 {
					wantOther = true
				} else {
					qa.Selected = append(qa.Selected, q.Options[i].Label)
				}
			}
			for wantOther {
				l, err := s.line(ctx, lang.pick("其他: ", "Other: "))
				if err != nil {
					return ans, err
				}
				if qa.Other = strings.TrimSpace(l); qa.Other != "" {
					break
				}
				s.printf("  ! %s\n", lang.pick("请填写内容", "write something"))
			}
			break
		}
		ans.Answers = append(ans.Answers, qa)
	}
	return ans, nil
}

// parsePicks reads a list of option numbers 1..n ("2", "1,3", "1 3",
// "1，3") and returns them as indexes; msg says what is wrong otherwise.
func parsePicks(line string, n, min, max int, lang chatLang) ([]int, string) {
	fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == '，' || r == '、' || unicode.IsSpace(r) })
	var out []int
	seen := map[int]bool{}
	for _, f := range fields {
		i, err := strconv.Atoi(f)
		if err != nil || i < 1 || i > n {
			return nil, lang.pick(fmt.Sprintf("请输入 1 到 %d 之间的数字", n), fmt.Sprintf("enter numbers from 1 to %d", n))
		}
		if seen[i] {
			return nil, lang.pick(fmt.Sprintf("%d 重复了", i), fmt.Sprintf("%d is listed twice", i))
		}
		seen[i] = true
		out = append(out, i-1)
	}
	switch {
	case len(out) < min && min == 1 && max == 1:
		return nil, lang.pick("请选择一项", "choose one")
	case len(out) < min:
		return nil, lang.pick(fmt.Sprintf("至少选择 %d 项", min), fmt.Sprintf("choose at least %d", min))
	case len(out) > max && max == 1:
		return nil, lang.pick("只能选择一项", "choose only one")
	case len(out) > max:
		return nil, lang.pick(fmt.Sprintf("最多选择 %d 项", max), fmt.Sprintf("choose at most %d", max))
	}
	return out, ""
}

// receipt prints a resolved request the way the page's read-only receipt
// shows it (docs/design.md §A.6.3): the chosen labels, the free text, or that it was
// cancelled or expired.
func (s *chatSession) receipt(rc *api.Receipt) {
	s.receipted[rc.RequestID] = true
	req := s.asked[rc.RequestID]
	lang := s.lang
	switch rc.Status {
	case api.StatusCancelled:
		s.printf("✗ %s\n", lang.pick("已取消", "cancelled"))
		return
	case api.StatusExpired:
		s.printf("⌛ %s\n", lang.pick("已超时", "expired"))
		return
	}
	if (req != nil && req.Tool == api.ToolElicitation) || rc.Decision == api.DecisionAccept || rc.Decision == api.DecisionDecline {
		s.elicitationReceipt(rc, req, lang)
		return
	}
	if rc.Decision != "" {
		s.approvalReceipt(rc, lang)
		return
	}
	var parts []string
	for _, id := range rc.Selections {
		label := id
		if req != nil {
			for _, o := range req.Options {
				if o.ID == id {
					label = o.Label
				}
			}
		}
		parts = append(parts, safeLine(label))
	}
	if rc.CustomInput != "" {
		if len(parts) > 0 && req != nil && req.AllowCustom {
			parts = append(parts, lang.pick("其他说明：", "other: ")+safeLine(rc.CustomInput))
		} else {
			parts = append(parts, safeLine(rc.CustomInput))
		}
	}
	s.printf("✓ %s%s\n", lang.pick("已提交：", "answered: "), strings.Join(parts, lang.pick("，", ", ")))
	for _, a := range rc.Answers {
		sel := make([]string, 0, len(a.Selected)+1)
		for _, l := range a.Selected {
			sel = append(sel, safeLine(l))
		}
		if a.Other != "" {
			sel = append(sel, lang.pick("其他：", "Other: ")+safeLine(a.Other))
		}
		s.printf("  %s → %s\n", safeLine(a.Question), strings.Join(sel, lang.pick("，", ", ")))
	}
}

// clipLine is safeLine of s cut to at most n characters.
func clipLine(s string, n int) string {
	if utf8.RuneCountInString(s) > n {
		s = string([]rune(s)[:n]) + "…"
	}
	return safeLine(s)
}

// safeLine escapes every control character of model-written text, line
// breaks included, so it prints as one inert line: C0 and C1 controls and
// DEL as \xNN (\n, \r and \t as themselves escaped), bidirectional and
// other invisible format characters (U+200B–U+200F, U+2028–U+202E,
// U+2060–U+206F, U+FEFF) as \uNNNN, and invalid UTF-8 bytes as \xNN. No
// terminal escape sequence can pass.
func safeLine(s string) string { return escape(s, false) }

// safeText is safeLine that keeps line breaks ("\n") for multi-line text
// such as streamed assistant messages.
func safeText(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || unsafeRune(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n' && keepNewlines:
			b.WriteByte('\n')
		case r == '\t' && keepNewlines:
			b.WriteByte('\t')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			fmt.Fprintf(&b, `\x%02x`, r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// unsafeRune reports control and invisible format characters.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0:
		return true
	case r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e, r >= 0x2060 && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
