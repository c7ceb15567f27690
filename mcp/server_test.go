package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/mcptest"
	"github.com/lubanhq/luban/model/openai"
)

const (
	singleArgs = `{"title":"部署到哪个环境？","mode":"single","options":[{"id":"dev","label":"开发"},{"id":"prod","label":"生产","recommended":true}]}`
	batchArgs  = `{"questions":[{"question":"用哪个数据库？","header":"数据库","options":[{"label":"SQLite","description":"嵌入式"},{"label":"PostgreSQL","description":"多副本"}],"multi_select":false}]}`
	// legacyProtocol is the newest protocol without input_required: the
	// client's call is held open until the answer.
	legacyProtocol = "2025-11-25"
	callTimeout    = 30 * time.Second
)

func startLuban(t *testing.T) *lubantest.Server {
	t.Helper()
	p, err := openai.New(openai.Options{BaseURL: fakeopenai.New(t).URL(), Model: "fake-model", MaxRetries: -1})
	require.NoError(t, err)
	return lubantest.Start(t, lubantest.Options{Provider: p})
}

// connect opens an official Go SDK client session to base/mcp with token,
// speaking protocol version (empty: the SDK's newest), as client
// "luban-go-test".
func connect(t *testing.T, base, token, version string, opts *sdk.ClientOptions) (*sdk.ClientSession, <-chan mcptest.Progress) {
	t.Helper()
	return mcptest.Connect(t, base, token, version, "luban-go-test", opts)
}

func text(t *testing.T, res *sdk.CallToolResult) string { t.Helper(); return mcptest.Text(t, res) }

type pendingView struct {
	Pending map[string]any `json:"pending"`
}

// toolMessage returns the ToolResult content luban's transcript holds for
// the session's one tool call.
func toolMessage(t *testing.T, s *lubantest.Server, sessionID string) (string, int) {
	t.Helper()
	var tr struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	require.Equal(t, 200, s.JSON("GET", "/api/sessions/"+sessionID, nil, &tr))
	content, n := "", 0
	for _, m := range tr.Messages {
		if m.Role == "tool" {
			content, n = m.Content, n+1
		}
	}
	return content, n
}

func recv[T any](t *testing.T, ch <-chan T) T { t.Helper(); return mcptest.Recv(t, ch) }

// An older client's ask_user call is held open; the question shows on
// luban like a model's (marked with the client), is answered through
// /api/chat/continue, and the call returns the same ToolResult content.
func TestHeldCallAnsweredOnThePage(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, prog := connect(t, s.URL, s.Token, legacyProtocol, nil)

	done := mcptest.CallAsync(cs, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)}, "tok-1")
	pr := recv(t, prog)
	require.NotEmpty(t, pr.SessionID)

	var pv pendingView
	require.Equal(t, 200, s.JSON("GET", "/api/interactions/pending?sessionId="+pr.SessionID, nil, &pv))
	require.NotNil(t, pv.Pending)
	require.Equal(t, pr.RequestID, pv.Pending["id"])
	require.Equal(t, "ask_user", pv.Pending["tool"])
	require.Equal(t, "部署到哪个环境？", pv.Pending["title"])
	require.Equal(t, map[string]any{"kind": "mcp", "client": "luban-go-test", "clientVersion": "1"}, pv.Pending["source"])
	require.Equal(t, true, pv.Pending["resumable"])

	// Another principal cannot see or answer it.
	resp := s.Request("GET", "/api/interactions/pending?sessionId="+pr.SessionID, nil, "other-token")
	resp.Body.Close()
	require.Equal(t, 404, resp.StatusCode)

	resp = s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": pr.SessionID, "requestId": pr.RequestID,
		"selections": []string{"prod"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode, "%s", b)

	o := recv(t, done)
	require.NoError(t, o.Err)
	require.False(t, o.Res.IsError)
	got := text(t, o.Res)
	want := askuser.AnsweredResult(&api.Prompt{Tool: "ask_user", Title: "部署到哪个环境？", Mode: "single",
		Options: []api.Option{{ID: "dev", Label: "开发"}, {ID: "prod", Label: "生产", Recommended: true}}},
		api.Answer{Selections: []string{"prod"}})
	require.Equal(t, want.Content, got)
	stored, n := toolMessage(t, s, pr.SessionID)
	require.Equal(t, 1, n)
	require.Equal(t, stored, got, "the MCP result is the ToolResult luban stored")
	require.Equal(t, pr.SessionID, o.Res.Meta["sessionId"])
	require.Equal(t, "answered", o.Res.Meta["status"])

	// The run that held the question completed; the trace has the same
	// interaction lifecycle and audit as a model's question.
	evs := s.EventsUntil(pr.SessionID, 0, "done", callTimeout)
	names := lubantest.Names(evs)
	require.Contains(t, names, "user_input_required")
	require.Contains(t, names, "user_input_resolved")
	last := evs[len(evs)-1]
	var d struct{ Status string }
	require.NoError(t, last.Decode(&d))
	require.Equal(t, "completed", d.Status)
	var trace struct {
		Audit []struct {
			Action string `json:"action"`
		} `json:"audit"`
	}
	require.Equal(t, 200, s.JSON("GET", "/api/sessions/"+pr.SessionID+"/trace", nil, &trace))
	var actions []string
	for _, a := range trace.Audit {
		actions = append(actions, a.Action)
	}
	require.Equal(t, []string{"requested", "answered"}, actions)
}

// AskUser works the same way, and a second call with _meta.sessionId reuses
// the session (a new run, a new question in the same session).
func TestHeldAskUserBatchAndSessionReuse(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, prog := connect(t, s.URL, s.Token, legacyProtocol, nil)
	ask := func(args string, sessionID string) (<-chan *sdk.CallToolResult, mcptest.Progress) {
		done := make(chan *sdk.CallToolResult, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			p := &sdk.CallToolParams{Name: "AskUser", Arguments: json.RawMessage(args)}
			p.SetProgressToken("tok")
			if sessionID != "" {
				p.Meta["sessionId"] = sessionID
			}
			res, err := cs.CallTool(ctx, p)
			if err != nil {
				t.Errorf("CallTool: %v", err)
			}
			done <- res
		}()
		return done, recv(t, prog)
	}
	done, pr := ask(batchArgs, "")
	answer := map[string]any{"sessionId": pr.SessionID, "requestId": pr.RequestID, "selections": []string{}, "customInput": "", "cancelled": false,
		"answers": []map[string]any{{"question": "用哪个数据库？", "selected": []string{"PostgreSQL"}, "other": ""}}}
	resp := s.Request("POST", "/api/chat/continue", answer, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	res := recv(t, done)
	require.NotNil(t, res)
	require.False(t, res.IsError)
	require.Contains(t, text(t, res), "PostgreSQL")
	sc, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.Contains(t, string(sc), `"selected":["PostgreSQL"]`)
	s.EventsUntil(pr.SessionID, 0, "done", callTimeout)

	done2, pr2 := ask(batchArgs, pr.SessionID)
	require.Equal(t, pr.SessionID, pr2.SessionID)
	require.NotEqual(t, pr.RequestID, pr2.RequestID)
	resp = s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": pr2.SessionID, "requestId": pr2.RequestID, "cancelled": true}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	res2 := recv(t, done2)
	require.Equal(t, askuser.CancelledResult(&api.Prompt{Tool: "AskUser", Mode: "questions"}).Content, text(t, res2))
	require.Equal(t, "cancelled", res2.Meta["status"])
}

// Invalid arguments never reach a person: an error result says what is
// wrong and nothing is stored.
func TestInvalidArgumentsAreAnErrorResult(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, _ := connect(t, s.URL, s.Token, legacyProtocol, nil)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(`{"title":"x","mode":"single"}`)})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, text(t, res), "invalid arguments for ask_user")
	var list struct {
		Sessions []any `json:"sessions"`
	}
	require.Equal(t, 200, s.JSON("GET", "/api/sessions", nil, &list))
	require.Empty(t, list.Sessions)

	// Someone else's session id is unknown.
	p := &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), Meta: sdk.Meta{"sessionId": "sess_nope"}}
	_, err = cs.CallTool(ctx, p)
	require.ErrorContains(t, err, "session_not_found")
}

// /mcp needs a valid bearer token: 401 with luban's JSON error otherwise.
func TestUnauthenticated(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	for _, tok := range []string{"-", "wrong"} {
		resp := s.Request("POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, tok, "Accept", "application/json, text/event-stream")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 401, resp.StatusCode)
		require.Contains(t, string(b), `"code":"unauthorized"`)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "x"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	_, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.URL + "/mcp", HTTPClient: &http.Client{Transport: mcptest.Bearer{Token: "wrong"}}, MaxRetries: -1}, nil)
	require.Error(t, err)
}

// A 2026-07-28 client gets input_required at once: a URL-mode request for
// /q/{requestId} and a requestState. Retries return input_required while
// pending, then the ToolResult, the same one every time; a forged or
// another principal's requestState is rejected.
func TestInputRequiredFlow(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	require.Len(t, res.InputRequests, 1)
	var el *sdk.ElicitParams
	for _, ir := range res.InputRequests {
		el, _ = ir.(*sdk.ElicitParams)
	}
	require.NotNil(t, el)
	require.Equal(t, "url", el.Mode)
	sessionID, _ := res.Meta["sessionId"].(string)
	requestID, _ := res.Meta["requestId"].(string)
	require.Equal(t, s.URL+"/q/"+requestID, el.URL)
	require.Equal(t, requestID, el.ElicitationID)
	state := res.RequestState
	require.NotEmpty(t, state)

	var pv pendingView
	require.Equal(t, 200, s.JSON("GET", "/api/interactions/pending?sessionId="+sessionID, nil, &pv))
	require.Equal(t, map[string]any{"kind": "mcp", "client": "luban-go-test", "clientVersion": "1"}, pv.Pending["source"])

	retry := func(cs *sdk.ClientSession, st string) (*sdk.CallToolResult, error) {
		// No inputResponses: a host polling (an accept would hold the call).
		return retryWith(ctx, cs, st, "")
	}
	again, err := retry(cs, state)
	require.NoError(t, err)
	require.True(t, again.NeedsInput(), "still pending")
	require.Equal(t, requestID, again.Meta["requestId"])

	// Forged: one character of the signature changed.
	forged := state[:len(state)-1] + map[bool]string{true: "A", false: "B"}[state[len(state)-1] != 'A']
	_, err = retry(cs, forged)
	require.ErrorContains(t, err, "invalid requestState")
	body, _, _ := strings.Cut(state, ".")
	_, err = retry(cs, body+".")
	require.ErrorContains(t, err, "invalid requestState")
	// Another principal's client.
	other, _ := connect(t, s.URL, "other-token", "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	_, err = retry(other, state)
	require.ErrorContains(t, err, "invalid requestState")

	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": requestID,
		"selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)

	first, err := retry(cs, state)
	require.NoError(t, err)
	require.False(t, first.NeedsInput())
	second, err := retry(cs, state)
	require.NoError(t, err)
	require.Equal(t, text(t, first), text(t, second), "exactly once: every retry gets the one answer")
	stored, n := toolMessage(t, s, sessionID)
	require.Equal(t, 1, n)
	require.Equal(t, stored, text(t, first))
	require.Contains(t, stored, "dev")
}

// The Go SDK's own multi round-trip loop: its elicitation handler (the
// host showing the URL to its user) is where the person answers on luban's
// page; the SDK retries with the requestState and gets the answer.
func TestInputRequiredWithTheSDKLoop(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	var urls []string
	cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			urls = append(urls, req.Params.URL)
			id := req.Params.URL[strings.LastIndex(req.Params.URL, "/")+1:]
			// Find the session through the caller's sessions (the page's view).
			var list struct {
				Sessions []struct{ ID string } `json:"sessions"`
			}
			if s.JSON("GET", "/api/sessions", nil, &list) != 200 || len(list.Sessions) == 0 {
				t.Error("no session")
				return &sdk.ElicitResult{Action: "cancel"}, nil
			}
			resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": list.Sessions[0].ID, "requestId": id,
				"selections": []string{"prod"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
			resp.Body.Close()
			if resp.StatusCode != 202 {
				t.Errorf("continue: %s", resp.Status)
			}
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.Contains(t, text(t, res), "prod")
	require.Len(t, urls, 1)
	require.True(t, strings.HasPrefix(urls[0], s.URL+"/q/ask_"), urls[0])
}

// modernCall asks ask_user as a 2026-07-28 client whose SDK loop is off and
// returns the input_required result's requestState, session and request.
func modernCall(t *testing.T, cs *sdk.ClientSession) (state, sessionID, requestID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	sessionID, _ = res.Meta["sessionId"].(string)
	requestID, _ = res.Meta["requestId"].(string)
	require.NotEmpty(t, res.RequestState)
	return res.RequestState, sessionID, requestID
}

func retryWith(ctx context.Context, cs *sdk.ClientSession, state, action string) (*sdk.CallToolResult, error) {
	p := &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), RequestState: state}
	if action != "" {
		p.InputResponses = sdk.InputResponseMap{"luban": &sdk.ElicitResult{Action: action}}
	}
	return cs.CallTool(ctx, p)
}

// A decline or cancel the host's user gives to the URL-mode request cancels
// the question on luban (receipt cancelled, the cancelled ToolResult);
// every later retry gets that same result, whatever it carries.
func TestInputRequiredDeclineAndCancel(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"decline", "cancel"} {
		t.Run(action, func(t *testing.T) {
			t.Parallel()
			s := startLuban(t)
			cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
			state, sessionID, requestID := modernCall(t, cs)
			ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
			defer cancel()
			res, err := retryWith(ctx, cs, state, action)
			require.NoError(t, err)
			require.False(t, res.NeedsInput())
			want := askuser.CancelledResult(&api.Prompt{Tool: "ask_user", Mode: "single"}).Content
			require.Equal(t, want, text(t, res))
			require.Equal(t, "cancelled", res.Meta["status"])

			var pv struct {
				Pending map[string]any `json:"pending"`
				Last    map[string]any `json:"last"`
			}
			require.Equal(t, 200, s.JSON("GET", "/api/interactions/pending?sessionId="+sessionID, nil, &pv))
			require.Nil(t, pv.Pending)
			require.Equal(t, requestID, pv.Last["requestId"])
			require.Equal(t, "cancelled", pv.Last["status"])

			// The page can no longer answer it, and a later accept retry
			// gets the same cancelled result.
			resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": requestID,
				"selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
			resp.Body.Close()
			require.Equal(t, 409, resp.StatusCode)
			for _, a := range []string{"accept", "", action} {
				again, err := retryWith(ctx, cs, state, a)
				require.NoError(t, err)
				require.Equal(t, want, text(t, again))
			}
			_, n := toolMessage(t, s, sessionID)
			require.Equal(t, 1, n)
		})
	}
}

// A decline after the person answered on the page changes nothing: the
// first resolution stands.
func TestDeclineAfterAnswerKeepsTheAnswer(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	state, sessionID, requestID := modernCall(t, cs)
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": requestID,
		"selections": []string{"prod"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := retryWith(ctx, cs, state, "decline")
	require.NoError(t, err)
	require.Equal(t, "answered", res.Meta["status"])
	require.Contains(t, text(t, res), "prod")
}

// The SDK's automatic loop with a host whose elicitation handler returns
// accept at once (it showed the URL; the person has not answered yet): the
// retry is held until the person answers on luban, so the handler runs
// once and the loop never reaches the SDK's limit of 10 rounds.
func TestSDKLoopRetryIsHeldUntilAnswered(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	asked := make(chan string, 4)
	cs, prog := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked <- req.Params.URL
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	})
	done := mcptest.CallAsync(cs, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)}, "mrtr")
	u := recv(t, asked)
	// The held retry announces itself with a progress notification naming
	// the question.
	pr := recv(t, prog)
	require.Equal(t, s.URL+"/q/"+pr.RequestID, u)
	select {
	case o := <-done:
		t.Fatalf("the retry returned before the answer: %+v %v", o.Res, o.Err)
	default:
	}
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": pr.SessionID, "requestId": pr.RequestID,
		"selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	o := recv(t, done)
	require.NoError(t, o.Err)
	require.Equal(t, "answered", o.Res.Meta["status"])
	require.Contains(t, text(t, o.Res), "dev")
	require.Empty(t, asked, "the host was asked once")
}

// clock is a test clock the runner and the MCP server share.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// A requestState past its question's expiresAt is rejected, even once the
// question has expired: no result, an error naming the cause.
func TestExpiredRequestState(t *testing.T) {
	t.Parallel()
	p, err := openai.New(openai.Options{BaseURL: fakeopenai.New(t).URL(), Model: "fake-model", MaxRetries: -1})
	require.NoError(t, err)
	c := &clock{t: time.Now()}
	s := lubantest.Start(t, lubantest.Options{Provider: p, Now: c.now, TTL: time.Hour})
	cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	state, sessionID, _ := modernCall(t, cs)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := retryWith(ctx, cs, state, "")
	require.NoError(t, err)
	require.True(t, res.NeedsInput(), "valid before expiresAt")

	c.add(time.Hour + time.Second)
	for _, action := range []string{"", "accept", "decline"} {
		_, err = retryWith(ctx, cs, state, action)
		require.ErrorContains(t, err, "expired requestState")
	}
	// The decline above did nothing: the question expires (the page's
	// read of it, past expiresAt), it is not cancelled.
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": res.Meta["requestId"],
		"selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 410, resp.StatusCode)
}

// An older client comes back to a question with _meta.requestId (named in
// every progress notification and result): the held wait while pending,
// the one result once resolved, never a second question; another
// principal's client cannot.
func TestRequestIDNamesTheSameQuestion(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, prog := connect(t, s.URL, s.Token, legacyProtocol, nil)
	call := func(cs *sdk.ClientSession, m sdk.Meta) (*sdk.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		defer cancel()
		p := &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs), Meta: m}
		p.SetProgressToken("t")
		return cs.CallTool(ctx, p)
	}
	first := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := call(cs, sdk.Meta{})
		if err != nil {
			t.Errorf("first call: %v", err)
		}
		first <- res
	}()
	pr := recv(t, prog)
	other, _ := connect(t, s.URL, "other-token", legacyProtocol, nil)
	_, err := call(other, sdk.Meta{"requestId": pr.RequestID})
	require.ErrorContains(t, err, "interaction_not_found")

	second := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := call(cs, sdk.Meta{"requestId": pr.RequestID})
		if err != nil {
			t.Errorf("second call: %v", err)
		}
		second <- res
	}()
	require.Equal(t, pr.RequestID, recv(t, prog).RequestID)
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": pr.SessionID, "requestId": pr.RequestID,
		"selections": []string{"prod"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	a, b := recv(t, first), recv(t, second)
	require.NotNil(t, a)
	require.NotNil(t, b)
	require.Equal(t, text(t, a), text(t, b))
	c, err := call(cs, sdk.Meta{"requestId": pr.RequestID})
	require.NoError(t, err)
	require.Equal(t, text(t, a), text(t, c))
	_, n := toolMessage(t, s, pr.SessionID)
	require.Equal(t, 1, n)
	var list struct {
		Sessions []any `json:"sessions"`
	}
	require.Equal(t, 200, s.JSON("GET", "/api/sessions", nil, &list))
	require.Len(t, list.Sessions, 1)
}

// GET /api/interactions/{id} (what the /q/{requestId} page reads) gives the
// owner the question, then its receipt; another principal gets 404.
func TestInteractionByRequestID(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	_, sessionID, requestID := modernCall(t, cs)
	var v struct {
		Request map[string]any `json:"request"`
		Status  string         `json:"status"`
		Receipt map[string]any `json:"receipt"`
	}
	require.Equal(t, 200, s.JSON("GET", "/api/interactions/"+requestID, nil, &v))
	require.Equal(t, "pending", v.Status)
	require.Nil(t, v.Receipt)
	require.Equal(t, requestID, v.Request["id"])
	require.Equal(t, sessionID, v.Request["sessionId"])
	require.Equal(t, "部署到哪个环境？", v.Request["title"])
	for _, c := range []struct{ path, token string }{{"/api/interactions/" + requestID, "other-token"}, {"/api/interactions/ask_nope", ""}} {
		resp := s.Request("GET", c.path, nil, c.token)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, 404, resp.StatusCode)
		require.Contains(t, string(b), `"code":"interaction_not_found"`)
	}
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": requestID,
		"selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
	require.Equal(t, 200, s.JSON("GET", "/api/interactions/"+requestID, nil, &v))
	require.Equal(t, "answered", v.Status)
	require.Equal(t, []any{"dev"}, v.Receipt["selections"])
}

// Exactly once under a race: retries declining, retries held on accept and
// the page's answer, all at once. One of the two resolutions wins; every
// retry returns that one, and luban stored one ToolResult.
func TestConcurrentRetriesGetOneResult(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	state, sessionID, requestID := modernCall(t, cs)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	var wg sync.WaitGroup
	results := make(chan string, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := retryWith(ctx, cs, state, map[bool]string{true: "decline", false: "accept"}[i%2 == 0])
			if err != nil {
				t.Errorf("retry: %v", err)
				return
			}
			results <- text(t, res)
		}()
	}
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": requestID,
		"selections": []string{"prod"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Contains(t, []int{202, 409}, resp.StatusCode, "answered, or a decline came first")
	wg.Wait()
	close(results)
	stored, n := toolMessage(t, s, sessionID)
	require.Equal(t, 1, n)
	got := 0
	for r := range results {
		require.Equal(t, stored, r)
		got++
	}
	require.Equal(t, 8, got)
}

// A session an MCP call created keeps the default agent (a message sent in
// it later runs that agent), the same in the session list and in the
// transcript; the question's own run is agent "@external" (no model), as
// the inbox shows (docs/mcp.md).
func TestMCPSessionShowsItsAgent(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs, _ := connect(t, s.URL, s.Token, "", &sdk.ClientOptions{MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)})
	require.NoError(t, err)
	sessionID, _ := res.Meta["sessionId"].(string)
	require.NotEmpty(t, sessionID)

	var agents api.AgentList
	require.Equal(t, 200, s.JSON("GET", "/api/agents", nil, &agents))
	def := agents.Agents[0].Name
	require.NotEmpty(t, def)
	var list api.SessionList
	require.Equal(t, 200, s.JSON("GET", "/api/sessions", nil, &list))
	require.Len(t, list.Sessions, 1)
	require.Equal(t, sessionID, list.Sessions[0].ID)
	require.Equal(t, def, list.Sessions[0].Agent, "the list names the agent the session keeps")
	var tr api.Transcript
	require.Equal(t, 200, s.JSON("GET", "/api/sessions/"+sessionID, nil, &tr))
	require.Equal(t, def, tr.Session.Agent, "the transcript names the same agent")
	var inbox api.InteractionList
	require.Equal(t, 200, s.JSON("GET", "/api/interactions?status=pending", nil, &inbox))
	require.Len(t, inbox.Interactions, 1)
	require.Equal(t, "@external", inbox.Interactions[0].Agent, "the question's run has no model")
}

// dropper is an http.RoundTripper for the official Go SDK client that cuts
// the first tools/call response stream right after its first progress
// notification (the connection closes, as a proxy's idle timeout would) and
// records the stream's opening bytes and every Last-Event-ID it is sent.
type dropper struct {
	token string
	mu    sync.Mutex
	head  string   // the first bytes of the cut stream
	ids   []string // the Last-Event-ID of each GET
	cut   bool
}

func (d *dropper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+d.token)
	if r.Method == http.MethodGet {
		d.mu.Lock()
		d.ids = append(d.ids, r.Header.Get("Last-Event-ID"))
		d.mu.Unlock()
	}
	isCall := false
	if r.Method == http.MethodPost && r.GetBody != nil {
		if b, err := r.GetBody(); err == nil {
			raw, _ := io.ReadAll(b)
			isCall = strings.Contains(string(raw), `"tools/call"`)
		}
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil || !isCall {
		return resp, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return resp, nil
	}
	d.cut = true
	resp.Body = &cutBody{d: d, rc: resp.Body}
	return resp, nil
}

// cutBody passes a stream through until one whole event naming
// notifications/progress has been read, then closes it.
type cutBody struct {
	d    *dropper
	rc   io.ReadCloser
	seen strings.Builder
	done bool
}

func (c *cutBody) Read(p []byte) (int, error) {
	if c.done {
		return 0, io.EOF
	}
	n, err := c.rc.Read(p)
	c.seen.Write(p[:n])
	s := c.seen.String()
	if i := strings.Index(s, "notifications/progress"); i >= 0 {
		if j := strings.Index(s[i:], "\n\n"); j >= 0 {
			end := i + j + 2
			keep := n - (len(s) - end)
			c.done = true
			c.d.mu.Lock()
			c.d.head = s[:end]
			c.d.mu.Unlock()
			_ = c.rc.Close()
			return keep, nil
		}
	}
	return n, err
}

func (c *cutBody) Close() error { return c.rc.Close() }

// A held call whose response stream drops (after its first progress
// notification) is resumed by the official Go SDK client with a GET and
// Last-Event-ID, after the stream's "retry" delay, and gets the answer given
// while it was cut off (docs/design.md §27).
func TestDroppedHeldCallResumesWithLastEventID(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	d := &dropper{token: s.Token}
	c := sdk.NewClient(&sdk.Implementation{Name: "luban-go-test", Version: "1"}, &sdk.ClientOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.URL + "/mcp", HTTPClient: &http.Client{Transport: d}, MaxRetries: 3},
		&sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	done := mcptest.CallAsync(cs, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)}, "tok-drop")
	var pv pendingView
	require.Eventually(t, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.head != ""
	}, callTimeout, 20*time.Millisecond, "the stream is cut after its first progress notification")
	d.mu.Lock()
	head := d.head
	d.mu.Unlock()
	require.True(t, strings.HasPrefix(head, "retry: 2000\n\n"), "the stream announces its reconnection delay first: %q", head)
	require.Contains(t, head, "\nid: ", "every event carries an id: %q", head)

	// The question is pending while the client is cut off; it is answered
	// on luban's side.
	var sid, rid string
	for _, line := range strings.Split(head, "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, "notifications/progress") {
			var n struct {
				Params struct {
					Meta map[string]string `json:"_meta"`
				} `json:"params"`
			}
			require.NoError(t, json.Unmarshal([]byte(data), &n))
			sid, rid = n.Params.Meta["sessionId"], n.Params.Meta["requestId"]
		}
	}
	require.NotEmpty(t, rid)
	require.Equal(t, 200, s.JSON("GET", "/api/interactions/pending?sessionId="+sid, nil, &pv))
	require.Equal(t, rid, pv.Pending["id"])
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sid, "requestId": rid,
		"selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode, "%s", b)

	o := recv(t, done)
	require.NoError(t, o.Err, "the dropped call resumes and returns its result")
	require.Equal(t, "answered", o.Res.Meta["status"])
	require.Contains(t, text(t, o.Res), "开发")
	d.mu.Lock()
	defer d.mu.Unlock()
	require.NotEmpty(t, d.ids, "the client came back with a GET")
	require.NotEmpty(t, d.ids[len(d.ids)-1], "with Last-Event-ID")
}
