//go:build lubantest

package crashtest

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// An answer that arrives while the driver that paused the run is still
// finishing (here: from the "interaction_committed" hook, which runs on the
// driver's goroutine right after the pause was committed) must resume the
// run at once, not after the lease expires. The lease is an hour long, so
// without the fix the run would sit in "running" until the deadline.
func TestAnswerWhileDriverFinishes(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), waitEvents)
	defer cancel()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "luban.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })

	var calls atomic.Int32
	provider := model.ProviderFunc{ProviderName: "inprocess", Fn: func(ctx context.Context, req *model.Request, _ func(string)) (*model.Response, error) {
		if calls.Add(1) == 1 {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant,
				ToolCalls: []model.ToolCall{{ID: "call_ask_1", Name: "ask_user", Arguments: askArgs}}}, FinishReason: "tool_calls"}, nil
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}, FinishReason: "stop"}, nil
	}}
	var r *agent.Runner
	var sessionID string
	answered := make(chan error, 1)
	opts := agent.Options{Store: st, Tools: tool.NewRegistry(), LeaseDuration: time.Hour, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Agents: []*agent.Agent{{Provider: provider, Tools: tool.Allowlist{"ask_user"}}}}
	agent.InjectFault(&opts, func(point string) {
		if point != "interaction_committed" {
			return
		}
		pv, err := r.Pending(ctx, "owner", sessionID)
		if err == nil {
			_, err = r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "owner", SessionID: sessionID, RequestID: pv.Pending.ID,
				Answer: api.ContinueRequest{Selections: []string{"safe"}}})
		}
		answered <- err
	})
	r, err = agent.New(opts)
	require.NoError(t, err)
	t.Cleanup(r.Shutdown)

	// The session id is needed inside the hook, which runs after Start
	// returned (the run is driven in its own goroutine): create the session
	// first with a run that ends at once, then start the real one in it.
	sessionID = startQuiet(t, ctx, r, st, &calls)
	res, err := r.Start(ctx, agent.StartParams{Owner: "owner", SessionID: sessionID, Message: userMessage})
	require.NoError(t, err)
	select {
	case err := <-answered:
		require.NoError(t, err)
	case <-ctx.Done():
		t.Fatal("the question was never asked")
	}
	require.Equal(t, "completed", waitDone(t, ctx, st, sessionID, res.RunID))
}

// startQuiet creates a session for owner whose first run completes without
// a question, and returns its id.
func startQuiet(t *testing.T, ctx context.Context, r *agent.Runner, st store.Store, calls *atomic.Int32) string {
	t.Helper()
	calls.Store(1) // the provider answers "ok": the run completes at once
	res, err := r.Start(ctx, agent.StartParams{Owner: "owner", Message: "hello"})
	require.NoError(t, err)
	require.Equal(t, "completed", waitDone(t, ctx, st, res.SessionID, res.RunID))
	calls.Store(0)
	return res.SessionID
}

// waitDone waits on the store's event log for run's done event and returns
// its status.
func waitDone(t *testing.T, ctx context.Context, st store.Store, sessionID, runID string) string {
	t.Helper()
	wake, unsubscribe := st.Subscribe(sessionID)
	defer unsubscribe()
	var after int64
	for {
		evs, err := st.EventList(ctx, &store.EventListParams{SessionID: sessionID, AfterSeq: after})
		require.NoError(t, err)
		for _, ev := range evs {
			after = ev.Seq
			if ev.Name != api.EventDone {
				continue
			}
			var d api.DoneEvent
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			if d.RunID == runID {
				return string(d.Status)
			}
		}
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("run %s did not end: %v", runID, ctx.Err())
		}
	}
}
