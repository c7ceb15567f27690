package agent_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// lockedBuffer is a bytes.Buffer that drivers and the test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The runner's "interaction" and "run ended" lines carry their attributes
// and, to a handler with AddSource, the function and file that log them,
// on every line (the call site's program counter is read once and kept).
func TestInfoLinesNameTheirSource(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, ctx context.Context, raw store.Store) {
		var buf lockedBuffer
		r := batchRunner(t, raw, scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}), func(o *agent.Options) {
			o.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{AddSource: true}))
		})
		defer r.Shutdown()
		b := &raceBundle{ctx: ctx, st: &hookStore{Store: raw}, runner: r}
		for range 2 {
			res, its := b.pause(t)
			require.Len(t, its, 1)
			_, err := r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[0].ID,
				Answer: api.ContinueRequest{Selections: []string{"a"}}})
			require.NoError(t, err)
			b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)
		}
		type line struct {
			Msg    string `json:"msg"`
			Level  string `json:"level"`
			Action string `json:"action"`
			Status string `json:"status"`
			RunID  string `json:"runId"`
			Source struct {
				Function string `json:"function"`
				File     string `json:"file"`
				Line     int    `json:"line"`
			} `json:"source"`
		}
		want := map[string]string{"interaction": "agent.(*Runner).auditRow", "run ended": "agent.(*Runner).finishRun"}
		seen := map[string]int{}
		lines := map[string]int{}
		sc := bufio.NewScanner(strings.NewReader(buf.String()))
		for sc.Scan() {
			var l line
			require.NoError(t, json.Unmarshal(sc.Bytes(), &l), sc.Text())
			fn, ok := want[l.Msg]
			if !ok {
				continue
			}
			seen[l.Msg]++
			require.Equal(t, "INFO", l.Level)
			require.NotEmpty(t, l.RunID, sc.Text())
			require.True(t, strings.HasSuffix(l.Source.Function, fn), "%s: source %s, want %s", l.Msg, l.Source.Function, fn)
			require.True(t, strings.HasSuffix(l.Source.File, "agent/resolve.go"), l.Source.File)
			if n, ok := lines[l.Msg]; ok {
				require.Equal(t, n, l.Source.Line, "one site, one line")
			}
			lines[l.Msg] = l.Source.Line
			if l.Msg == "run ended" {
				require.Equal(t, "completed", l.Status)
			}
		}
		require.Equal(t, map[string]int{"interaction": 4, "run ended": 2}, seen)
	})
}
