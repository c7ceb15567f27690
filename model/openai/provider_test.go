package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakemodel"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/openai"
)

type testBundle struct {
	fake *fakeopenai.Server
	ctx  context.Context
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &testBundle{fake: fakeopenai.New(t), ctx: ctx}
}

// provider builds a Provider against the fake; opts fields left zero get
// test defaults (1ms backoff so retries do not slow the suite).
func (b *testBundle) provider(t *testing.T, opts openai.Options) *openai.Provider {
	t.Helper()
	opts.BaseURL = b.fake.URL()
	if opts.Model == "" {
		opts.Model = "test-model"
	}
	if opts.BaseBackoff == 0 {
		opts.BaseBackoff = time.Millisecond
	}
	p, err := openai.New(opts)
	require.NoError(t, err)
	return p
}

// collect returns an onDelta that records every delta.
func collect() (*[]string, func(string)) {
	var got []string
	return &got, func(s string) { got = append(got, s) }
}

var askSchema = json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`)

func simpleRequest() *model.Request {
	return &model.Request{
		Messages: []model.Message{{Role: model.RoleUser, Content: "你好"}},
		Tools:    []model.ToolSpec{{Name: "ask_user", Description: "ask the user", Parameters: askSchema}},
	}
}

func TestNewRequiresModel(t *testing.T) {
	t.Parallel()
	_, err := openai.New(openai.Options{})
	require.Error(t, err)
	p, err := openai.New(openai.Options{Model: "gpt-4o-mini"})
	require.NoError(t, err)
	require.Equal(t, "openai:gpt-4o-mini", p.Name())
}

func TestText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Text: "Hello, world"})
	p := b.provider(t, openai.Options{APIKey: "sk-test"})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Equal(t, model.RoleAssistant, resp.Message.Role)
	require.Equal(t, "Hello, world", resp.Message.Content)
	require.Empty(t, resp.Message.ToolCalls)
	require.Equal(t, "stop", resp.FinishReason)
	require.Zero(t, resp.Retries)
	require.Greater(t, len(*deltas), 1, "text streams in several deltas")
	require.Equal(t, "Hello, world", strings.Join(*deltas, ""))

	reqs := b.fake.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "Bearer sk-test", reqs[0].Header.Get("Authorization"))
	require.Equal(t, "test-model", reqs[0].Model)
	require.Equal(t, true, reqs[0].Body["stream"])
}

func TestNoAPIKeySendsNoAuthorization(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Text: "ok"})
	p := b.provider(t, openai.Options{})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, "ok", resp.Message.Content)
	require.Empty(t, b.fake.Requests()[0].Header.Get("Authorization"))
}

func TestParallelToolCallsChunkedArgs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	args1 := `{"title":"选择部署环境","mode":"single","options":[{"id":"prod","label":"生产"}]}`
	args2 := `{"questions":[{"question":"Which DB?","header":"DB"}]}`
	b.fake.Push(fakeopenai.Turn{
		ChunkBytes: 3,
		ToolCalls: []fakeopenai.ToolCall{
			{ID: "call_1", Name: "ask_user", Arguments: args1},
			{ID: "call_2", Name: "AskUser", Arguments: args2},
			{ID: "call_3", Name: "ask_user", Arguments: `{}`},
		},
	})
	p := b.provider(t, openai.Options{})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Empty(t, resp.Message.Content, "empty content with tool calls")
	require.Empty(t, *deltas)
	require.Equal(t, "tool_calls", resp.FinishReason)
	require.Equal(t, []model.ToolCall{
		{ID: "call_1", Name: "ask_user", Arguments: args1},
		{ID: "call_2", Name: "AskUser", Arguments: args2},
		{ID: "call_3", Name: "ask_user", Arguments: `{}`},
	}, resp.Message.ToolCalls)
}

func TestChineseSplitMidCharacter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	text := "部署到生产环境吗？🚀 好的"
	args := `{"title":"选一个","customInput":"中文😀"}`
	b.fake.Push(fakeopenai.Turn{
		Text:       text,
		ChunkBytes: 1, // every multibyte character is cut
		ToolCalls:  []fakeopenai.ToolCall{{ID: "c1", Name: "ask_user", Arguments: args}},
	})
	p := b.provider(t, openai.Options{})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Equal(t, text, resp.Message.Content)
	require.Equal(t, args, resp.Message.ToolCalls[0].Arguments)
	require.NotContains(t, resp.Message.Content, "\uFFFD")
	for _, d := range *deltas {
		require.True(t, utf8.ValidString(d), "delta %q is whole characters", d)
	}
	require.Equal(t, text, strings.Join(*deltas, ""))
}

func TestReasoningStaysOutOfText(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Reasoning: "让我想想 secret chain", Text: "答案是 42"})
	p := b.provider(t, openai.Options{})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Equal(t, "答案是 42", resp.Message.Content)
	require.Equal(t, "答案是 42", strings.Join(*deltas, ""))
}

func TestRetryAfter429ThenSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(
		fakeopenai.Turn{Status: http.StatusTooManyRequests, RetryAfter: "0"},
		fakeopenai.Turn{Text: "after rate limit"},
	)
	// A base backoff of an hour: only an honoured Retry-After: 0 lets the
	// retry happen within the call deadline (otherwise Generate fails at once).
	p := b.provider(t, openai.Options{BaseBackoff: time.Hour, CallTimeout: 20 * time.Second})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, "after rate limit", resp.Message.Content)
	require.Equal(t, 1, resp.Retries)
	require.Len(t, b.fake.Requests(), 2)
}

func TestBackoffBeyondDeadlineFailsFast(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Status: http.StatusServiceUnavailable}, fakeopenai.Turn{Text: "never"})
	p := b.provider(t, openai.Options{BaseBackoff: time.Hour, CallTimeout: 20 * time.Second})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorContains(t, err, "would pass the call deadline")
	require.Len(t, b.fake.Requests(), 1)
}

func Test503Exhausted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for range 3 {
		b.fake.Push(fakeopenai.Turn{Status: http.StatusServiceUnavailable})
	}
	b.fake.Push(fakeopenai.Turn{Text: "too late"})
	p := b.provider(t, openai.Options{MaxRetries: 2})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.Error(t, err)
	var apiErr *oai.Error
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, http.StatusServiceUnavailable, apiErr.StatusCode)
	require.Len(t, b.fake.Requests(), 3, "one call and two retries")
}

func TestRetriesDisabled(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Status: http.StatusServiceUnavailable}, fakeopenai.Turn{Text: "unused"})
	p := b.provider(t, openai.Options{MaxRetries: -1})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.Error(t, err)
	require.Len(t, b.fake.Requests(), 1)
}

func TestBadRequestNotRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Status: http.StatusBadRequest, ErrorBody: `{"error":{"message":"bad tools"}}`})
	p := b.provider(t, openai.Options{})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorContains(t, err, "bad tools")
	require.Len(t, b.fake.Requests(), 1)
}

func TestCutStreamRetried(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(
		fakeopenai.Turn{Text: "first attempt text", CutAfterChunks: 3,
			ToolCalls: []fakeopenai.ToolCall{{ID: "x", Name: "ask_user", Arguments: `{"a":1}`}}},
		fakeopenai.Turn{Text: "second", ChunkBytes: 64},
	)
	p := b.provider(t, openai.Options{})
	deltas, on := collect()
	resp, err := p.Generate(b.ctx, simpleRequest(), on)
	require.NoError(t, err)
	require.Equal(t, 1, resp.Retries)
	require.Equal(t, "second", resp.Message.Content, "only the successful attempt's text")
	require.Empty(t, resp.Message.ToolCalls, "nothing of the cut attempt is applied")
	// Deltas of the failed attempt went out before it failed (documented).
	require.Equal(t, []string{"firs", "t at", "second"}, *deltas)
}

func TestNoFinishReasonIsIncomplete(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// The body ends cleanly but no chunk ever said finish_reason.
	b.fake.Push(fakeopenai.Turn{Text: "abcdefgh", NoFinish: true})
	b.fake.Push(fakeopenai.Turn{Text: "abcdefgh", NoFinish: true})
	p := b.provider(t, openai.Options{MaxRetries: 1})
	_, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.ErrorIs(t, err, openai.ErrIncompleteStream)
	require.Len(t, b.fake.Requests(), 2)
}

func TestMissingDoneAcceptedWithFinishReason(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Text: "no done line", NoDone: true})
	p := b.provider(t, openai.Options{})
	resp, err := p.Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, "no done line", resp.Message.Content)
	require.Zero(t, resp.Retries)
}

func TestRequestBodyExact(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Text: "done"})
	p := b.provider(t, openai.Options{})
	req := &model.Request{
		Messages: []model.Message{
			{Role: model.RoleSystem, Content: "You are luban."},
			{Role: model.RoleUser, Content: "部署"},
			{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
				{ID: "call_a", Name: "ask_user", Arguments: `{"title":"环境?","mode":"single"}`},
				{ID: "call_b", Name: "read_file", Arguments: `{"path":"x"}`},
			}},
			{Role: model.RoleTool, ToolCallID: "call_a", Name: "ask_user", Content: `{"selections":["prod"],"customInput":"","cancelled":false}`},
			{Role: model.RoleTool, ToolCallID: "call_b", Name: "read_file", Content: "file body", IsError: true},
			{Role: model.RoleAssistant, Content: "ok"},
		},
		Tools: []model.ToolSpec{
			{Name: "ask_user", Description: "ask", Parameters: askSchema},
			{Name: "AskUser", Description: "batch", Parameters: json.RawMessage(`{"type":"object"}`)},
			{Name: "no_schema"},
			{Name: "array_schema", Description: "not an object", Parameters: json.RawMessage(` [1]`)},
			{Name: "broken_schema", Parameters: json.RawMessage(`{"type":`)},
		},
	}
	_, err := p.Generate(b.ctx, req, nil)
	require.NoError(t, err)
	got := b.fake.Requests()[0]
	require.Equal(t, []string{"ask_user", "AskUser", "no_schema", "array_schema", "broken_schema"}, got.ToolNames)
	require.Equal(t, "test-model", got.Body["model"])
	require.Equal(t, true, got.Body["stream"])
	require.Equal(t, map[string]any{"include_usage": true}, got.Body["stream_options"])

	msgs, err := json.Marshal(got.Body["messages"])
	require.NoError(t, err)
	require.JSONEq(t, `[
		{"role":"system","content":"You are luban."},
		{"role":"user","content":"部署"},
		{"role":"assistant","tool_calls":[
			{"id":"call_a","type":"function","function":{"name":"ask_user","arguments":"{\"title\":\"环境?\",\"mode\":\"single\"}"}},
			{"id":"call_b","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"x\"}"}}]},
		{"role":"tool","tool_call_id":"call_a","content":"{\"selections\":[\"prod\"],\"customInput\":\"\",\"cancelled\":false}"},
		{"role":"tool","tool_call_id":"call_b","content":"file body"},
		{"role":"assistant","content":"ok"}
	]`, string(msgs))

	tools, err := json.Marshal(got.Body["tools"])
	require.NoError(t, err)
	require.JSONEq(t, `[
		{"type":"function","function":{"name":"ask_user","description":"ask","parameters":`+string(askSchema)+`}},
		{"type":"function","function":{"name":"AskUser","description":"batch","parameters":{"type":"object"}}},
		{"type":"function","function":{"name":"no_schema","parameters":{"type":"object","properties":{}}}},
		{"type":"function","function":{"name":"array_schema","description":"not an object","parameters":{"type":"object","properties":{}}}},
		{"type":"function","function":{"name":"broken_schema","parameters":{"type":"object","properties":{}}}}
	]`, string(tools))
}

func TestCallerCancelStopsRetries(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx, cancel := context.WithCancel(b.ctx)
	b.fake.SetHandler(func(*fakeopenai.Request) fakeopenai.Turn {
		cancel() // the caller gives up while the server answers 503
		return fakeopenai.Turn{Status: http.StatusServiceUnavailable}
	})
	p := b.provider(t, openai.Options{MaxRetries: 5, BaseBackoff: time.Hour})
	_, err := p.Generate(ctx, simpleRequest(), nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Len(t, b.fake.Requests(), 1)
}

// Calls one after another reuse one connection: each stream's body is read
// to its end, so the connection goes back to the pool instead of being
// closed and dialed again.
func TestCallsReuseTheConnection(t *testing.T) {
	t.Parallel()
	b := setup(t)
	fakemodel.RequireSequentialReuse(t, 30, func(c *http.Client) func() error {
		p := b.provider(t, openai.Options{HTTPClient: c})
		return func() error {
			b.fake.Push(fakeopenai.Turn{Text: "hello"})
			_, err := p.Generate(b.ctx, simpleRequest(), nil)
			return err
		}
	})
}

// streamServer answers each call with the next of bodies, as an SSE stream.
func streamServer(t *testing.T, bodies ...string) *httptest.Server {
	t.Helper()
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		body := "data: [DONE]\n\n"
		if len(bodies) > 0 {
			body, bodies = bodies[0], bodies[1:]
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

const textChunk = `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"partial"},"finish_reason":null}]}` + "\n\n"

// An error event inside a stream fails the attempt as the SDK's stream
// does (*ssestream.StreamError, its message), and the attempt is retried;
// so is a chunk that is not JSON.
func TestStreamErrorEventFailsTheAttempt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	srv := streamServer(t,
		textChunk+`data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n",
		textChunk+"data: {not json\n\n",
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	p, err := openai.New(openai.Options{BaseURL: srv.URL, Model: "m", MaxRetries: -1})
	require.NoError(t, err)
	_, err = p.Generate(ctx, simpleRequest(), nil)
	var se *ssestream.StreamError
	require.ErrorAs(t, err, &se)
	require.Contains(t, se.Message, "received error while streaming: ")
	require.Contains(t, se.Message, `"overloaded"`)
	_, err = p.Generate(ctx, simpleRequest(), nil)
	require.Error(t, err)
	require.False(t, errors.As(err, &se), "a chunk that is not JSON is not an error event: %v", err)

	srv2 := streamServer(t,
		textChunk+`data: {"error":"overloaded"}`+"\n\n",
		`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
	retried, err := openai.New(openai.Options{BaseURL: srv2.URL, Model: "m", MaxRetries: 2, BaseBackoff: time.Millisecond})
	require.NoError(t, err)
	resp, err := retried.Generate(ctx, simpleRequest(), nil)
	require.NoError(t, err)
	require.Equal(t, 1, resp.Retries)
	require.Equal(t, "ok", resp.Message.Content)
}

// OPENAI_ADMIN_KEY, which the SDK reads from the environment, is never
// sent to the model's endpoint: with no APIKey the request has no
// Authorization at all.
func TestAdminKeyNeverSent(t *testing.T) {
	t.Setenv("OPENAI_ADMIN_KEY", "sk-admin-secret")
	b := setup(t)
	b.fake.Push(fakeopenai.Turn{Text: "ok"}, fakeopenai.Turn{Text: "ok"})
	_, err := b.provider(t, openai.Options{}).Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	_, err = b.provider(t, openai.Options{APIKey: "sk-test"}).Generate(b.ctx, simpleRequest(), nil)
	require.NoError(t, err)
	reqs := b.fake.Requests()
	require.Empty(t, reqs[0].Header.Get("Authorization"))
	require.Equal(t, "Bearer sk-test", reqs[1].Header.Get("Authorization"))
}

// writeCounter counts the writes of the connections it dialed.
type writeCounter struct {
	net.Conn
	writes *atomic.Int64
}

func (c writeCounter) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// A model request goes out in one write, its headers with its body (a
// body net/http does not know to be in memory gets its headers flushed
// alone first).
func TestRequestIsOneWrite(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var writes atomic.Int64
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return writeCounter{Conn: c, writes: &writes}, err
	}}
	t.Cleanup(tr.CloseIdleConnections)
	p := b.provider(t, openai.Options{HTTPClient: &http.Client{Transport: tr}})
	for i := range 3 {
		b.fake.Push(fakeopenai.Turn{Text: "ok"})
		_, err := p.Generate(b.ctx, &model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hi"}}}, nil)
		require.NoError(t, err)
		require.Equal(t, int64(i+1), writes.Load(), "call %d", i+1)
	}
}
