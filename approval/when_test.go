package approval_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
	"github.com/lubanhq/luban/tool"
	"github.com/lubanhq/luban/when"
)

// refunds calls refund twice: 20, then 1500.
const refunds = `{"name": "refunds",
  "turns": [
    {"toolCalls": [{"name": "refund", "arguments": {"amount": 20}}]},
    {"toolCalls": [{"name": "refund", "arguments": {"amount": 1500}}]}],
  "final": "done: {{results}}"}`

// TestApprovalWhenEndToEnd: "ask only when the amount is over 1,000" is
// one rule (docs/design.md §16): the refund of 20 runs without a question,
// the refund of 1500 waits for a person's approval and runs once approved.
func TestApprovalWhenEndToEnd(t *testing.T) {
	t.Parallel()
	over, err := when.Compile(`tool == "refund" && args.amount > 1000 && agent == "payments" && owner != "" && session != ""`)
	require.NoError(t, err)
	policy := approval.Policy{Ordered: true, Rules: []approval.Rule{{Pattern: "refund", Decision: approval.Always, When: over}}}
	check := func(t *testing.T, mod func(o *lubantest.Options)) {
		var mu sync.Mutex
		var paid []float64
		refund := &tool.Func{ToolSpec: model.ToolSpec{Name: "refund", Description: "refund an amount",
			Parameters: json.RawMessage(`{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`)},
			Fn: func(_ context.Context, args json.RawMessage) (api.ToolResult, error) {
				var a struct{ Amount float64 }
				if err := json.Unmarshal(args, &a); err != nil {
					return api.ToolResult{}, err
				}
				mu.Lock()
				paid = append(paid, a.Amount)
				mu.Unlock()
				return api.ToolResult{Content: "refunded"}, nil
			}}
		sc, err := scripted.Parse([]byte(refunds))
		require.NoError(t, err)
		o := lubantest.Options{Provider: scripted.New(sc), AgentName: "payments", Tools: []tool.Tool{refund}, Approval: policy}
		if mod != nil {
			mod(&o)
		}
		s := lubantest.Start(t, o)
		resp := s.Request("POST", "/api/chat", map[string]any{"message": "refund the two orders"}, "")
		require.Equal(t, 200, resp.StatusCode)
		st := s.Open(resp, "chat")
		evs, err := st.Until(api.EventUserInputRequired, 15*time.Second)
		st.Close()
		require.NoError(t, err)
		var results int
		for _, e := range evs {
			if e.Name == api.EventToolResult {
				results++
			}
		}
		require.Equal(t, 1, results, "the refund of 20 ran without a question")
		mu.Lock()
		require.Equal(t, []float64{20}, paid)
		mu.Unlock()
		ev, _ := lubantest.Find(evs, api.EventUserInputRequired)
		var req api.InputRequest
		require.NoError(t, ev.Decode(&req))
		require.Equal(t, "refund", req.ToolName)
		require.JSONEq(t, `{"amount": 1500}`, string(req.Arguments))

		resp = s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": req.SessionID, "requestId": req.ID, "decision": "approve"}, "")
		require.Equal(t, 200, resp.StatusCode)
		st = s.Open(resp, "continue")
		_, err = st.Until(api.EventDone, 15*time.Second)
		st.Close()
		require.NoError(t, err)
		mu.Lock()
		require.Equal(t, []float64{20, 1500}, paid, "the approved refund ran once")
		mu.Unlock()
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		check(t, nil)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pgtest.Skip(t)
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		check(t, func(o *lubantest.Options) { o.Store = st })
	})
}
