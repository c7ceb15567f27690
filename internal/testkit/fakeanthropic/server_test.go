package fakeanthropic_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeanthropic"
)

type testBundle struct {
	srv *fakeanthropic.Server
	ctx context.Context
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return &testBundle{srv: fakeanthropic.New(t), ctx: ctx}
}

const body = `{"model":"claude-x","max_tokens":100,"stream":true,"system":[{"type":"text","text":"sys"}],` +
	`"messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}],` +
	`"tools":[{"name":"ask_user","input_schema":{"type":"object"}},{"name":"AskUser","input_schema":{"type":"object"}}]}`

func post(t *testing.T, b *testBundle, payload string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(b.ctx, http.MethodPost, b.srv.URL()+"/v1/messages", strings.NewReader(payload))
	require.NoError(t, err)
	req.Header.Set("x-api-key", "k")
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { _ = resp.Body.Close() })
	return resp
}

type event struct{ name, data string }

// events reads the SSE events of a body; it returns the read error too.
func events(r io.Reader) ([]event, error) {
	var out []event
	var cur event
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		case line == "":
			out = append(out, cur)
			cur = event{}
		}
	}
	return out, sc.Err()
}

func names(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.name
	}
	return out
}

func TestStreamWireFormat(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(fakeanthropic.Turn{
		Thinking:   "hm",
		Text:       "好的ok",
		ChunkBytes: 2,
		ToolUses: []fakeanthropic.ToolUse{
			{ID: "toolu_a", Name: "ask_user", Input: `{"t":1}`},
			{ID: "toolu_b", Name: "AskUser"},
		},
	})
	resp := post(t, b, body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream"))
	evs, err := events(resp.Body)
	require.NoError(t, err)
	require.Equal(t, []string{
		"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", // thinking
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", // text, 8 bytes
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop", // toolu_a
		"content_block_start", "content_block_stop", // toolu_b, no input
		"message_delta", "message_stop",
	}, names(evs))

	var text, input []byte
	blocks := map[int]string{}
	for _, e := range evs {
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock struct {
				Type string `json:"type"`
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"content_block"`
			Delta struct {
				Type        string          `json:"type"`
				Text        json.RawMessage `json:"text"`
				PartialJSON json.RawMessage `json:"partial_json"`
				StopReason  string          `json:"stop_reason"`
			} `json:"delta"`
			Message struct {
				Model string `json:"model"`
				Role  string `json:"role"`
			} `json:"message"`
		}
		require.NoError(t, json.Unmarshal([]byte(e.data), &ev), e.data)
		require.Equal(t, e.name, ev.Type, "event name and data type agree")
		switch ev.Type {
		case "message_start":
			require.Equal(t, "claude-x", ev.Message.Model)
			require.Equal(t, "assistant", ev.Message.Role)
		case "content_block_start":
			blocks[ev.Index] = ev.ContentBlock.Type + ":" + ev.ContentBlock.ID + ":" + ev.ContentBlock.Name
		case "content_block_delta":
			switch ev.Delta.Type {
			case "text_delta":
				// Raw JSON strings: strip the quotes; the test text needs no escapes.
				text = append(text, ev.Delta.Text[1:len(ev.Delta.Text)-1]...)
			case "input_json_delta":
				p := strings.ReplaceAll(string(ev.Delta.PartialJSON[1:len(ev.Delta.PartialJSON)-1]), `\"`, `"`)
				input = append(input, p...)
			}
		case "message_delta":
			require.Equal(t, "tool_use", ev.Delta.StopReason)
		}
	}
	require.Equal(t, "好的ok", string(text), "multibyte characters cut in two arrive raw and byte-exact")
	require.Equal(t, `{"t":1}`, string(input))
	require.Equal(t, map[int]string{0: "thinking::", 1: "text::", 2: "tool_use:toolu_a:ask_user", 3: "tool_use:toolu_b:AskUser"}, blocks)

	reqs := b.srv.Requests()
	require.Len(t, reqs, 1)
	require.Equal(t, "claude-x", reqs[0].Model)
	require.Equal(t, "sys", reqs[0].System)
	require.Equal(t, []string{"ask_user", "AskUser"}, reqs[0].ToolNames)
	require.Equal(t, "user", reqs[0].Messages[0]["role"])
	require.Equal(t, "k", reqs[0].Header.Get("X-Api-Key"))
	require.JSONEq(t, body, string(reqs[0].Raw))
}

func TestWriteBytesSplitsTheBody(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(fakeanthropic.Turn{Text: "中文", WriteBytes: 1}, fakeanthropic.Turn{Text: "中文"})
	split := post(t, b, body)
	rawSplit, err := io.ReadAll(split.Body)
	require.NoError(t, err)
	whole := post(t, b, body)
	rawWhole, err := io.ReadAll(whole.Body)
	require.NoError(t, err)
	norm := func(b []byte) string { return strings.ReplaceAll(string(b), "msg_fake2", "msg_fake1") }
	require.Equal(t, norm(rawWhole), norm(rawSplit), "the same bytes, only written differently")
}

func TestErrorStatusRetryAfterAndErrorEvent(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(
		fakeanthropic.Turn{Status: 529, RetryAfter: "7"},
		fakeanthropic.Turn{Text: "x", ErrorEvent: "overloaded_error"},
	)
	resp := post(t, b, body)
	require.Equal(t, 529, resp.StatusCode)
	require.Equal(t, "7", resp.Header.Get("Retry-After"))
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"error","error":{"type":"overloaded_error","message":"fakeanthropic: status 529"}}`, string(raw))

	resp = post(t, b, body)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	evs, err := events(resp.Body)
	require.NoError(t, err)
	last := evs[len(evs)-1]
	require.Equal(t, "error", last.name)
	require.Contains(t, last.data, `"type":"overloaded_error"`)
	require.NotContains(t, names(evs), "message_stop")
}

func TestCutNoStopAndNoMessageStop(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.Push(
		fakeanthropic.Turn{Text: "abcdefgh", CutAfterEvents: 4},
		fakeanthropic.Turn{Text: "abcd", NoStop: true},
		fakeanthropic.Turn{Text: "abcd", NoMessageStop: true},
	)
	evs, err := events(post(t, b, body).Body)
	require.Error(t, err, "a cut stream is an unexpected EOF, not a clean end")
	require.Len(t, evs, 4)

	evs, err = events(post(t, b, body).Body)
	require.NoError(t, err)
	require.Equal(t, "content_block_stop", evs[len(evs)-1].name)

	evs, err = events(post(t, b, body).Body)
	require.NoError(t, err)
	require.Equal(t, "message_delta", evs[len(evs)-1].name)
}

func TestRequestChecks(t *testing.T) {
	t.Parallel()
	b := setup(t)
	resp := post(t, b, body)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode, "no turn queued")

	b.srv.Push(fakeanthropic.Turn{Text: "x"}, fakeanthropic.Turn{Text: "x"})
	resp = post(t, b, `{"model":"m","stream":true,"messages":[]}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "max_tokens is required")
	resp = post(t, b, `{"model":"m","max_tokens":5,"messages":[]}`)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "only streaming")
}

func TestHandlerAndWaitRequests(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.srv.SetHandler(func(r *fakeanthropic.Request) fakeanthropic.Turn {
		return fakeanthropic.Turn{Text: "echo " + r.Model}
	})
	done := make(chan []*fakeanthropic.Request, 1)
	go func() {
		reqs, err := b.srv.WaitRequests(b.ctx, 2)
		if err == nil {
			done <- reqs
		}
		close(done)
	}()
	for range 2 {
		evs, err := events(post(t, b, body).Body)
		require.NoError(t, err)
		require.Equal(t, "message_stop", evs[len(evs)-1].name)
	}
	require.Len(t, <-done, 2)

	short, cancel := context.WithCancel(b.ctx)
	cancel()
	_, err := b.srv.WaitRequests(short, 3)
	require.ErrorIs(t, err, context.Canceled)
}
