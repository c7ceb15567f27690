package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// countingListener counts the writes on the connections it accepted.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, writes: &l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c *countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// A chat's stream and a continue's stream, whose first events are
// committed before they start, go out in at most two writes each: the
// headers with the first batch of events, the last batch with the
// response's end (not the headers flushed alone first, nor the last batch
// flushed before the end is written).
func TestChatStreamWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "luban.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	asks := model.ProviderFunc{ProviderName: "test", Fn: func(_ context.Context, req *model.Request, _ func(string)) (*model.Response, error) {
		if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}, FinishReason: "stop"}, nil
		}
		call := model.ToolCall{ID: "call_1", Name: "ask_user", Arguments: `{"title":"Go?","mode":"single","options":[{"id":"yes","label":"Yes"},{"id":"no","label":"No"}]}`}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{call}}, FinishReason: "tool_calls"}, nil
	}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r, err := agent.New(agent.Options{Store: st, Tools: tool.NewRegistry(), Logger: log, Agents: []*agent.Agent{{Provider: asks, Tools: tool.Allowlist{"ask_user"}}}})
	require.NoError(t, err)
	srv, err := New(Options{Runner: r, Tokens: []string{"t"}, Logger: log})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cl := &countingListener{Listener: ln}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	hs.RegisterOnShutdown(srv.Close)
	go func() { _ = hs.Serve(cl) }()
	t.Cleanup(func() { _ = hs.Close() })
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Serve(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })

	client := &http.Client{}
	post := func(path, body string) (events []string, data map[string]string, writes int64) {
		req, err := http.NewRequest(http.MethodPost, "http://"+ln.Addr().String()+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer t")
		req.Header.Set("Content-Type", "application/json")
		before := cl.writes.Load()
		resp, err := client.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		data = map[string]string{}
		sc := bufio.NewScanner(resp.Body)
		var name string
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = v
				events = append(events, v)
			} else if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				data[name] = v
			}
		}
		require.NoError(t, sc.Err())
		return events, data, cl.writes.Load() - before
	}
	events, data, writes := post("/api/chat", `{"message":"hi"}`)
	require.Equal(t, api.EventUserInputRequired, events[len(events)-1], events)
	require.LessOrEqual(t, writes, int64(2), "writes of the chat's response (events %v)", events)
	var ir struct{ ID, SessionID string }
	require.NoError(t, json.Unmarshal([]byte(data[api.EventUserInputRequired]), &ir))

	events, _, writes = post("/api/chat/continue", `{"sessionId":"`+ir.SessionID+`","requestId":"`+ir.ID+`","selections":["yes"],"customInput":"","cancelled":false}`)
	require.Equal(t, api.EventDone, events[len(events)-1], events)
	require.LessOrEqual(t, writes, int64(2), "writes of the continue's response (events %v)", events)
}
