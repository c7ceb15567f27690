package fakeopenai_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
)

type testBundle struct {
	srv *fakeopenai.Server
	ctx context.Context
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &testBundle{srv: fakeopenai.New(t), ctx: ctx}
}

const body = `{"model":"m1","stream":true,"messages":[{"role":"user","content":"hi"}],` +
	`"tools":[{"type":"function","function":{"name":"ask_user","parameters":{}}},{"type":"function","function":{"name":"AskUser","parameters":{}}}]}`

func post(t *testing.T, b *testBundle, payload string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.srv.URL()+"/chat/completions", strings.NewReader(payload))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

// events reads the data lines of an SSE body; it returns the read error too.
func events(r io.Reader) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out, sc.Err()
}

func TestStreamWireFormat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(fakeopenai.Turn{
		Text:       "好的ok",
		Reasoning:  "think",
		ChunkBytes: 2,
		ToolCalls: []fakeopenai.ToolCall{
			{ID: "call_a", Name: "ask_user", Arguments: `{"t":1}`},
			{ID: "call_b", Name: "AskUser", Arguments: `{}`},
		},
	})
	resp := post(t, b, body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	data, err := events(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "[DONE]", data[len(data)-1])

	var text, reasoning []byte
	args := map[int][]byte{}
	ids := map[int]string{}
	var finish string
	for _, d := range data[:len(data)-1] {
		var c struct {
			Object  string `json:"object"`
			Model   string `json:"model"`
			Choices []struct {
				Delta struct {
					Content   json.RawMessage `json:"content"`
					Reasoning json.RawMessage `json:"reasoning_content"`
					ToolCalls []struct {
						Index    int     `json:"index"`
						ID       *string `json:"id"`
						Function struct {
							Name      *string         `json:"name"`
							Arguments json.RawMessage `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		require.NoError(t, json.Unmarshal([]byte(d), &c), d)
		require.Equal(t, "chat.completion.chunk", c.Object)
		require.Equal(t, "m1", c.Model)
		ch := c.Choices[0]
		if ch.FinishReason != nil {
			finish = *ch.FinishReason
		}
		// Raw JSON strings: strip the quotes; the test texts need no escapes.
		if len(ch.Delta.Content) > 2 {
			text = append(text, ch.Delta.Content[1:len(ch.Delta.Content)-1]...)
		}
		if len(ch.Delta.Reasoning) > 2 {
			reasoning = append(reasoning, ch.Delta.Reasoning[1:len(ch.Delta.Reasoning)-1]...)
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.ID != nil {
				require.NotContains(t, ids, tc.Index, "id sent twice")
				ids[tc.Index] = *tc.ID
				require.NotNil(t, tc.Function.Name)
			} else {
				require.Nil(t, tc.Function.Name, "name only in the first chunk")
			}
			a := tc.Function.Arguments
			require.LessOrEqual(t, len(a)-2, 2*2, "pieces are ChunkBytes long") // quotes escaped at most
			args[tc.Index] = append(args[tc.Index], bytes.ReplaceAll(a[1:len(a)-1], []byte(`\"`), []byte(`"`))...)
		}
	}
	require.Equal(t, "好的ok", string(text), "multibyte characters cut in two arrive raw and byte-exact")
	require.Equal(t, "think", string(reasoning))
	require.Equal(t, map[int]string{0: "call_a", 1: "call_b"}, ids)
	require.Equal(t, `{"t":1}`, string(args[0]))
	require.Equal(t, `{}`, string(args[1]))
	require.Equal(t, "tool_calls", finish)

	reqs := b.srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "m1", reqs[0].Model)
	require.Equal(t, []string{"ask_user", "AskUser"}, reqs[0].ToolNames)
	require.Equal(t, "hi", reqs[0].Messages[0]["content"])
	require.Equal(t, "Bearer k", reqs[0].Header.Get("Authorization"))
	require.JSONEq(t, body, string(reqs[0].Raw))
}

func TestNoTurnQueuedIs500(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp := post(t, b, body)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(raw), "fakeopenai: no turn queued")
}

func TestErrorStatusAndRetryAfter(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(fakeopenai.Turn{Status: http.StatusTooManyRequests, RetryAfter: "7"})
	resp := post(t, b, body)
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Equal(t, "7", resp.Header.Get("Retry-After"))
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"error"`)
}

func TestCutAndNoDone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(fakeopenai.Turn{Text: "abcdefgh", CutAfterChunks: 2}, fakeopenai.Turn{Text: "x", NoDone: true})

	resp := post(t, b, body)
	data, err := events(resp.Body)
	require.Error(t, err, "a cut stream is an unexpected EOF, not a clean end")
	require.Len(t, data, 2)

	resp = post(t, b, body)
	data, err = events(resp.Body)
	require.NoError(t, err)
	require.NotEqual(t, "[DONE]", data[len(data)-1])
	require.Contains(t, data[len(data)-1], `"finish_reason":"stop"`)
}

func TestHandlerAndWaitRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.SetHandler(func(r *fakeopenai.Request) fakeopenai.Turn {
		return fakeopenai.Turn{Text: "echo " + r.Model}
	})
	done := make(chan []*fakeopenai.Request, 1)
	go func() {
		reqs, err := b.srv.WaitRequests(b.ctx, 2)
		if err == nil {
			done <- reqs
		}
		close(done)
	}()
	for range 2 {
		resp := post(t, b, body)
		data, err := events(resp.Body)
		require.NoError(t, err)
		require.Contains(t, strings.Join(data, ""), `"content":"echo"`)
	}
	reqs := <-done
	require.Len(t, reqs, 2)

	short, cancel := context.WithCancel(b.ctx)
	cancel()
	_, err := b.srv.WaitRequests(short, 3)
	require.ErrorIs(t, err, context.Canceled)
}

func TestNonStreamingRejected(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(fakeopenai.Turn{Text: "x"})
	resp := post(t, b, `{"model":"m","messages":[]}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
}
