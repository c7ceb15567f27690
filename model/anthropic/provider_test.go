package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
	"github.com/lubanhq/luban/internal/testkit/fakemodel"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/anthropic"
)

type testBundle struct {
	fake *fakeanthropic.Server
	ctx  context.Context
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &testBundle{fake: fakeanthropic.New(t), ctx: ctx}
}

// provider builds a Provider against the fake; opts fields left zero get
// test defaults (1ms backoff so retries do not slow the suite).
func (b *testBundle) provider(t *testing.T, opts anthropic.Options) *anthropic.Provider {
	t.Helper()
	opts.BaseURL = b.fake.URL()
	if opts.Model == "" {
		opts.Model = "claude-test"
	}
	if opts.BaseBackoff == 0 {
		opts.BaseBackoff = time.Millisecond
	}
	p, err := anthropic.New(opts)
	require.NoError(t, err)
	return p
}

func collect() (*[]string, func(string)) {
	var got []string
	return &got, func(s string) { got = append(got, s) }
}

var askSchema = json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}`)

func simpleRequest() *model.Request {
	return &model.Request{
		Messages: []model.Message{{Role: model.RoleUser, Content: "你好"}},
		Tools:    []model.ToolSpec{{Name: "ask_user", Description: "ask the user", Parameters: askSchema}},
	}
}

func TestNewRequiresModel(t *testing.T) {
	t.Parallel()
	_, err := anthropic.New(anthropic.Options{})
	require.Error(t, err)
	p, err := anthropic.New(anthropic.Options{Model: "claude-sonnet-4-5"})
	require.NoError(t, err)
	require.Equal(t, "anthropic:claude-sonnet-4-5", p.Name())
}

func TestText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Text: "Hello, world"})
	p := b.provider(t, anthropic.Options{APIKey: "sk-ant-test", MaxTokens: 777})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Equal(t, model.RoleAssistant, resp.Message.Role)
	require.Equal(t, "Hello, world", resp.Message.Content)
	require.Empty(t, resp.Message.ToolCalls)
	require.Equal(t, "end_turn", resp.FinishReason)
	require.Zero(t, resp.Retries)
	require.Greater(t, len(*deltas), 1, "text streams in several deltas")
	require.Equal(t, "Hello, world", strings.Join(*deltas, ""))

	reqs := b.fake.Requests()
	require.Len(t, reqs, 1)
	// anthropic-sdk-go/v2 sends the key as a bearer token.
	require.Equal(t, "Bearer sk-ant-test", reqs[0].Header.Get("Authorization"))
	require.NotEmpty(t, reqs[0].Header.Get("Anthropic-Version"))
	require.Equal(t, "claude-test", reqs[0].Model)
	require.Equal(t, true, reqs[0].Body["stream"])
	require.EqualValues(t, 777, reqs[0].Body["max_tokens"])
}

func TestEnvironmentIgnored(t *testing.T) {
	// Not parallel: it sets process environment. The provider must use only
	// its Options, never ANTHROPIC_* picked up behind the caller's back.
	b := setup(t)
	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	b.fake.Push(fakeanthropic.Turn{Text: "ok"})
	p := b.provider(t, anthropic.Options{})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, "ok", resp.Message.Content)
	require.Empty(t, b.fake.Requests()[0].Header.Get("X-Api-Key"))
	require.Empty(t, b.fake.Requests()[0].Header.Get("Authorization"))
}

func TestParallelToolUsesChunkedInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	in1 := `{"title":"选择部署环境","mode":"single","options":[{"id":"prod","label":"生产"}]}`
	in2 := `{"questions":[{"question":"Which DB?","header":"DB"}]}`
	b.fake.Push(fakeanthropic.Turn{
		ChunkBytes: 3,
		ToolUses: []fakeanthropic.ToolUse{
			{ID: "toolu_1", Name: "ask_user", Input: in1},
			{ID: "toolu_2", Name: "AskUser", Input: in2},
			{ID: "toolu_3", Name: "list_files"}, // no input deltas at all
		},
	})
	p := b.provider(t, anthropic.Options{})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Empty(t, resp.Message.Content, "no text block with tool calls")
	require.Empty(t, *deltas)
	require.Equal(t, "tool_use", resp.FinishReason)
	require.Equal(t, []model.ToolCall{
		{ID: "toolu_1", Name: "ask_user", Arguments: in1},
		{ID: "toolu_2", Name: "AskUser", Arguments: in2},
		{ID: "toolu_3", Name: "list_files", Arguments: `{}`},
	}, resp.Message.ToolCalls)
}

func TestChineseSplitMidCharacter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		chunk, writeSize int
	}{
		{"deltas cut inside characters", 1, 0},
		{"socket writes of one byte", 5, 1},
		{"socket writes of seven bytes", 2, 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			text := "部署到生产环境吗？🚀 好的"
			in := `{"title":"选一个","customInput":"中文😀"}`
			b.fake.Push(fakeanthropic.Turn{
				Text:       text,
				ChunkBytes: tc.chunk,
				WriteBytes: tc.writeSize,
				ToolUses:   []fakeanthropic.ToolUse{{ID: "toolu_c1", Name: "ask_user", Input: in}},
			})
			p := b.provider(t, anthropic.Options{})
			deltas, on := collect()
			resp, err := p.Generate(b.ctx, simpleRequest(), on)
			require.NoError(t, err)
			require.Equal(t, text, resp.Message.Content)
			require.Equal(t, in, resp.Message.ToolCalls[0].Arguments)
			require.NotContains(t, resp.Message.Content, "\uFFFD")
			for _, d := range *deltas {
				require.True(t, utf8.ValidString(d), "delta %q is whole characters", d)
			}
			require.Equal(t, text, strings.Join(*deltas, ""))
		})
	}
}

func TestThinkingStaysOutOfText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Thinking: "让我想想 secret chain", Text: "答案是 42"})
	p := b.provider(t, anthropic.Options{})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Equal(t, "答案是 42", resp.Message.Content)
	require.Equal(t, "答案是 42", strings.Join(*deltas, ""))
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusTooManyRequests, 529} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.fake.Push(
				fakeanthropic.Turn{Status: status, RetryAfter: "0"},
				fakeanthropic.Turn{Text: "after the wait"},
			)
			// A base backoff of an hour: only an honoured retry-after: 0 lets the
			// retry happen within the call deadline (otherwise Generate fails at once).
			p := b.provider(t, anthropic.Options{BaseBackoff: time.Hour, CallTimeout: 20 * time.Second})
			resp, err := p.Generate(b.ctx, simpleRequest(), nil)
			require.NoError(t, err)
			require.Equal(t, "after the wait", resp.Message.Content)
			require.Equal(t, 1, resp.Retries)
			require.Len(t, b.fake.Requests(), 2)
		})
	}
}

func TestBackoffBeyondDeadlineFailsFast(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Status: 529}, fakeanthropic.Turn{Text: "never"})
	p := b.provider(t, anthropic.Options{BaseBackoff: time.Hour, CallTimeout: 20 * time.Second})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorContains(t, err, "would pass the call deadline")
	require.Len(t, b.fake.Requests(), 1)
}

func TestOverloadedExhaustedReportsRetries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 3 {
		b.fake.Push(fakeanthropic.Turn{Status: 529})
	}
	b.fake.Push(fakeanthropic.Turn{Text: "too late"})
	p := b.provider(t, anthropic.Options{MaxRetries: 2})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.Error(t, err)
	var apiErr *sdk.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, 529, apiErr.StatusCode)
	require.EqualValues(t, "overloaded_error", apiErr.Type())
	var ce *model.CallError
	require.True(t, errors.As(err, &ce))
	require.Equal(t, 2, ce.Retries)
	require.Len(t, b.fake.Requests(), 3, "one call and two retries")
}

func TestRetriesDisabled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Status: http.StatusInternalServerError}, fakeanthropic.Turn{Text: "unused"})
	p := b.provider(t, anthropic.Options{MaxRetries: -1})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.Error(t, err)
	require.Len(t, b.fake.Requests(), 1)
}

func TestBadRequestNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Status: http.StatusBadRequest,
		ErrorBody: `{"type":"error","error":{"type":"invalid_request_error","message":"tools.0: bad schema"}}`})
	p := b.provider(t, anthropic.Options{})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorContains(t, err, "tools.0: bad schema")
	require.Len(t, b.fake.Requests(), 1)
}

func TestErrorEventMidStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(
		fakeanthropic.Turn{Text: "half", ErrorEvent: "overloaded_error",
			ToolUses: []fakeanthropic.ToolUse{{ID: "toolu_x", Name: "ask_user", Input: `{"title":"x"}`}}},
		fakeanthropic.Turn{Text: "whole"},
	)
	p := b.provider(t, anthropic.Options{})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, 1, resp.Retries)
	require.Equal(t, "whole", resp.Message.Content)
	require.Empty(t, resp.Message.ToolCalls, "nothing of the failed attempt is applied")

	// An error event that says the request is wrong is not retried.
	b.fake.Push(fakeanthropic.Turn{Text: "x", ErrorEvent: "invalid_request_error"}, fakeanthropic.Turn{Text: "unused"})
	_, err = p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorContains(t, err, "invalid_request_error")
	require.Len(t, b.fake.Requests(), 3)
}

func TestCutStreamRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(
		// message_start, ping, block start, two text deltas: then the cut.
		fakeanthropic.Turn{Text: "first attempt text", CutAfterEvents: 5,
			ToolUses: []fakeanthropic.ToolUse{{ID: "x", Name: "ask_user", Input: `{"a":1}`}}},
		fakeanthropic.Turn{Text: "second", ChunkBytes: 64},
	)
	p := b.provider(t, anthropic.Options{})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Equal(t, 1, resp.Retries)
	require.Equal(t, "second", resp.Message.Content, "only the successful attempt's text")
	require.Empty(t, resp.Message.ToolCalls, "nothing of the cut attempt is applied")
	require.Equal(t, []string{"firs", "t at", "second"}, *deltas)
}

func TestNoStopReasonIsIncomplete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Text: "abcdefgh", NoStop: true}, fakeanthropic.Turn{Text: "abcdefgh", NoStop: true})
	p := b.provider(t, anthropic.Options{MaxRetries: 1})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorIs(t, err, anthropic.ErrIncompleteStream)
	var ce *model.CallError
	require.True(t, errors.As(err, &ce))
	require.Equal(t, 1, ce.Retries)
	require.Len(t, b.fake.Requests(), 2)
}

func TestMissingMessageStopAcceptedWithStopReason(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Text: "no message_stop", NoMessageStop: true})
	p := b.provider(t, anthropic.Options{})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, "no message_stop", resp.Message.Content)
	require.Zero(t, resp.Retries)
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b.fake.SetHandler(func(*fakeanthropic.Request) fakeanthropic.Turn {
		<-release // the server hangs until the test ends
		return fakeanthropic.Turn{Text: "late"}
	})
	p := b.provider(t, anthropic.Options{CallTimeout: 200 * time.Millisecond, MaxRetries: 5})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, b.ctx.Err(), "the call's own timeout ended it, not the test's")
}

func TestCallerCancelStopsRetries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(b.ctx)
	b.fake.SetHandler(func(*fakeanthropic.Request) fakeanthropic.Turn {
		cancel() // the caller gives up while the server answers 529
		return fakeanthropic.Turn{Status: 529}
	})
	p := b.provider(t, anthropic.Options{MaxRetries: 5, BaseBackoff: time.Hour})
	_, err := p.Generate(ctx, simpleRequest(), nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, b.fake.Requests(), 1)
}

func TestRequestBodyExact(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeanthropic.Turn{Text: "done"})
	p := b.provider(t, anthropic.Options{})
	req := &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are luban."},
			{Role: model.RoleUser, Content: "部署"},
			{Role: model.RoleAssistant, Content: "我先问一下。", ToolCalls: []model.ToolCall{
				{ID: "toolu_a", Name: "ask_user", Arguments: `{"title":"环境?","mode":"single"}`},
				{ID: "toolu_b", Name: "read_file", Arguments: `{"path":"x"}`},
				{ID: "toolu_c", Name: "ask_user", Arguments: `{"title":`},
			}},
			{Role: model.RoleTool, ToolCallID: "toolu_a", Name: "ask_user", Content: `{"selections":["prod"],"customInput":"","cancelled":false}`},
			{Role: model.RoleTool, ToolCallID: "toolu_b", Name: "read_file", Content: "file body", IsError: true},
			{Role: model.RoleTool, ToolCallID: "toolu_c", Name: "ask_user", Content: "invalid arguments", IsError: true},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "toolu_d", Name: "ask_user", Arguments: `{"title":"再确认"}`}}},
			{Role: model.RoleTool, ToolCallID: "toolu_d", Name: "ask_user", Content: ""},
			{Role: model.RoleUser, Content: "继续"},
			{Role: model.RoleAssistant, Content: "ok"},
		},
		Tools: []model.ToolSpec{
			{Name: "ask_user", Description: "ask", Parameters: askSchema},
			{Name: "AskUser", Parameters: json.RawMessage(`{"type":"object"}`)},
		},
	}
	_, err := p.Generate(b.ctx, req, nil)
	require.NoError(t, err)
	got := b.fake.Requests()[0]
	require.Equal(t, []string{"ask_user", "AskUser"}, got.ToolNames)
	require.Equal(t, "You are luban.", got.System)

	msgs, err := json.Marshal(got.Body["messages"])
	require.NoError(t, err)
	require.JSONEq(t, `[
		{"role":"user","content":[{"type":"text","text":"部署"}]},
		{"role":"assistant","content":[
			{"type":"text","text":"我先问一下。"},
			{"type":"tool_use","id":"toolu_a","name":"ask_user","input":{"title":"环境?","mode":"single"}},
			{"type":"tool_use","id":"toolu_b","name":"read_file","input":{"path":"x"}},
			{"type":"tool_use","id":"toolu_c","name":"ask_user","input":{}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_a","content":[{"type":"text","text":"{\"selections\":[\"prod\"],\"customInput\":\"\",\"cancelled\":false}"}]},
			{"type":"tool_result","tool_use_id":"toolu_b","is_error":true,"content":[{"type":"text","text":"file body"}]},
			{"type":"tool_result","tool_use_id":"toolu_c","is_error":true,"content":[{"type":"text","text":"invalid arguments"}]}]},
		{"role":"assistant","content":[{"type":"tool_use","id":"toolu_d","name":"ask_user","input":{"title":"再确认"}}]},
		{"role":"user","content":[
			{"type":"tool_result","tool_use_id":"toolu_d"},
			{"type":"text","text":"继续"}]},
		{"role":"assistant","content":[{"type":"text","text":"ok"}]}
	]`, string(msgs))

	tools, err := json.Marshal(got.Body["tools"])
	require.NoError(t, err)
	require.JSONEq(t, `[
		{"name":"ask_user","description":"ask","input_schema":`+string(askSchema)+`},
		{"name":"AskUser","input_schema":{"type":"object","properties":{}}}
	]`, string(tools))
}

// Calls one after another reuse one connection: each stream's body is read
// to its end, so the connection goes back to the pool instead of being
// closed and dialed again.
func TestCallsReuseTheConnection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fakemodel.RequireSequentialReuse(t, 30, func(c *http.Client) func() error {
		p := b.provider(t, anthropic.Options{HTTPClient: c})
		return func() error {
			b.fake.Push(fakeanthropic.Turn{Text: "hello"})
			_, err := p.Generate(b.ctx, simpleRequest(), nil)
			return err
		}
	})
}
