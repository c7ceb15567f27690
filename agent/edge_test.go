package agent_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// A cancel that finds the run already completed answers "completed", not the
// status the session had when the cancel began.
func TestCancelAfterCompletionSaysCompleted(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			p := model.ProviderFunc{ProviderName: "test:wait", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}, FinishReason: "stop"}, nil
			}}
			b := setupRace(t, newStore, p)
			res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
			require.NoError(t, err)
			b.st.mu.Lock()
			b.st.onActive = func() {
				close(release)
				b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)
			}
			b.st.mu.Unlock()
			status, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: res.SessionID})
			require.NoError(t, err)
			require.Equal(t, string(store.RunCompleted), status)
		})
	}
}

// A duplicate of an answer that was read before the answer committed and is
// handled after expiresAt is a duplicate (409 with the answer's receipt), not
// an expiry.
func TestDuplicateAroundExpiryIsAlreadyResolved(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw := newStore(t)
			st := &hookStore{Store: raw}
			var clock atomic.Pointer[time.Time]
			start := time.Now().UTC()
			clock.Store(&start)
			r, err := agent.New(agent.Options{Store: st, Tools: tool.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				InteractionTTL: time.Hour, Now: func() time.Time { return *clock.Load() },
				Agents: []*agent.Agent{{Provider: scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}), Tools: tool.Allowlist{api.ToolAskUser}}}})
			require.NoError(t, err)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			t.Cleanup(func() { cancel(); r.Shutdown(); raw.Close() })
			res, err := r.Start(ctx, agent.StartParams{Owner: "alice", Message: "hi"})
			require.NoError(t, err)
			b := &raceBundle{ctx: ctx, st: st, runner: r}
			b.waitRun(t, res.SessionID, res.RunID, store.RunWaitingInput)
			it, err := raw.InteractionGetPending(ctx, res.SessionID)
			require.NoError(t, err)
			var first error
			st.mu.Lock()
			st.onGet = func() {
				_, first = r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: it.ID, Answer: api.ContinueRequest{Selections: []string{"a"}}})
				late := it.ExpiresAt.Add(time.Second)
				clock.Store(&late)
			}
			st.mu.Unlock()
			_, err = r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: it.ID, Answer: api.ContinueRequest{Selections: []string{"b"}}})
			require.NoError(t, first)
			var already *agent.AlreadyResolvedError
			require.ErrorAs(t, err, &already)
			require.Equal(t, api.StatusAnswered, already.Receipt.Status)
			require.Equal(t, []string{"a"}, already.Receipt.Selections)
		})
	}
}

// Rejected arguments of a megabyte are stored, streamed and sent back to the
// model bounded; the trace names their whole length and hash, the tool is
// not run, and the model gets an error result that says why.
func TestHugeRejectedArgumentsAreBounded(t *testing.T) {
	t.Parallel()
	huge := `{"title":"` + strings.Repeat("长", 350_000)
	var mu sync.Mutex
	var requests []*model.Request
	p := model.ProviderFunc{ProviderName: "test:huge", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		mu.Lock()
		requests = append(requests, req)
		mu.Unlock()
		if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}, FinishReason: "stop"}, nil
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{
			{ID: "call_ask", Name: api.ToolAskUser, Arguments: huge},
			{ID: "call_slow", Name: "slow", Arguments: huge},
		}}, FinishReason: "tool_calls"}, nil
	}}
	b := setupRace(t, raceDrivers(t)["sqlite"], p)
	res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
	require.NoError(t, err)
	b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)

	msgs, err := b.st.MessageList(b.ctx, res.SessionID)
	require.NoError(t, err)
	var stored []model.ToolCall
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			require.NoError(t, json.Unmarshal(m.ToolCalls, &stored))
		}
		if m.Role == "tool" {
			results[m.ToolCallID] = m.Content
		}
	}
	require.Len(t, stored, 2)
	for _, c := range stored {
		require.Less(t, len(c.Arguments), 2<<10, "stored arguments of %s", c.Name)
		require.True(t, strings.HasPrefix(huge, strings.SplitN(c.Arguments, "\n", 2)[0]), "the stored form begins with the arguments")
		require.Contains(t, c.Arguments, "1050010 bytes")
	}
	require.Contains(t, results["call_ask"], "invalid arguments for ask_user: ")
	require.Contains(t, results["call_ask"], "too large")
	require.Contains(t, results["call_ask"], "1050010 bytes")
	require.Contains(t, results["call_slow"], "invalid arguments for slow: the arguments are not valid JSON")
	require.NotContains(t, results["call_slow"], "slow result", "the tool was not run")

	evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: res.SessionID})
	require.NoError(t, err)
	for _, ev := range evs {
		require.Less(t, len(ev.Data), 4<<10, "event %s", ev.Name)
	}
	trace, err := b.st.TraceList(b.ctx, res.SessionID)
	require.NoError(t, err)
	sum := sha256.Sum256([]byte(huge))
	calls := 0
	for _, e := range trace {
		if e.Kind == "tool_call" {
			var d struct {
				Bytes  int    `json:"argumentsBytes"`
				Sha256 string `json:"argumentsSha256"`
			}
			require.NoError(t, json.Unmarshal(e.Data, &d))
			require.Equal(t, len(huge), d.Bytes)
			require.Equal(t, hex.EncodeToString(sum[:]), d.Sha256)
			calls++
		}
	}
	require.Equal(t, 2, calls)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, requests, 2)
	for _, m := range requests[1].Messages {
		for _, c := range m.ToolCalls {
			require.Less(t, len(c.Arguments), 2<<10, "arguments sent back to the model")
		}
	}
}
