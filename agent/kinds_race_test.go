package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// remoteFunc is a tool served by an "MCP server": a tool.Remote, so the run
// hands its calls an Elicitor.
type remoteFunc struct{ tool.Func }

func (remoteFunc) Server() string { return "seats" }

const seatSchema = `{"type":"object","properties":{"seat":{"type":"string","enum":["aisle","window"]}},"required":["seat"]}`

// kindCase is one interaction kind of docs/design.md §15: how a question of
// that kind is put, and an answer a person would give to it.
type kindCase struct {
	name   string
	answer api.ContinueRequest
	// ask puts the question; it returns the session and run that wait.
	ask func(t *testing.T, kb *kindBundle) (sessionID, runID string)
}

type kindBundle struct {
	ctx    context.Context
	st     store.Store
	runner *agent.Runner
	clock  atomic.Pointer[time.Time]
}

func (kb *kindBundle) now() time.Time { return *kb.clock.Load() }

func (kb *kindBundle) pending(t *testing.T, sessionID string) *store.Interaction {
	t.Helper()
	var it *store.Interaction
	require.NoError(t, waitFor(kb.ctx, kb.st, sessionID, func() (bool, error) {
		var err error
		it, err = kb.st.InteractionGetPending(kb.ctx, sessionID)
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}))
	return it
}

var kindCases = []kindCase{
	{name: "ask", answer: api.ContinueRequest{Selections: []string{"a"}}, ask: func(t *testing.T, kb *kindBundle) (string, string) {
		res, err := kb.runner.Start(kb.ctx, agent.StartParams{Owner: "alice", Message: "ask me", Agent: "asker"})
		require.NoError(t, err)
		return res.SessionID, res.RunID
	}},
	{name: "approval", answer: api.ContinueRequest{Decision: api.DecisionApprove}, ask: func(t *testing.T, kb *kindBundle) (string, string) {
		res, err := kb.runner.Start(kb.ctx, agent.StartParams{Owner: "alice", Message: "deploy", Agent: "approver"})
		require.NoError(t, err)
		return res.SessionID, res.RunID
	}},
	{name: "elicitation", answer: api.ContinueRequest{Decision: api.DecisionAccept, Content: json.RawMessage(`{"seat":"aisle"}`)}, ask: func(t *testing.T, kb *kindBundle) (string, string) {
		res, err := kb.runner.Start(kb.ctx, agent.StartParams{Owner: "alice", Message: "book", Agent: "booker"})
		require.NoError(t, err)
		return res.SessionID, res.RunID
	}},
	{name: "host-question", answer: api.ContinueRequest{Selections: []string{"a"}}, ask: func(t *testing.T, kb *kindBundle) (string, string) {
		req, err := kb.runner.Ask(kb.ctx, agent.AskParams{Owner: "alice", Tool: api.ToolAskUser, Arguments: json.RawMessage(raceAsk),
			Source: &api.InputSource{Kind: api.SourceMCP, Client: "race-host"}})
		require.NoError(t, err)
		return req.SessionID, req.RunID
	}},
}

func setupKinds(t *testing.T, newStore func(t *testing.T) store.Store) *kindBundle {
	t.Helper()
	st := newStore(t)
	kb := &kindBundle{st: st}
	start := time.Now().UTC()
	kb.clock.Store(&start)
	reg := tool.NewRegistry()
	require.NoError(t, reg.Register(tool.Func{ToolSpec: model.ToolSpec{Name: "slow", Description: "a tool", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			return api.ToolResult{Content: "slow result"}, nil
		}}, true))
	require.NoError(t, reg.Register(remoteFunc{tool.Func{ToolSpec: model.ToolSpec{Name: "book", Description: "books a seat", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			a, err := tool.ElicitorFrom(ctx).Elicit(ctx, tool.Elicitation{Server: "seats", Mode: "form", Message: "which seat?", RequestedSchema: json.RawMessage(seatSchema)})
			if err != nil {
				return api.ToolResult{}, err
			}
			return api.ToolResult{Content: "booked: " + a.Action}, nil
		}}}, true))
	r, err := agent.New(agent.Options{Store: st, Tools: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		InteractionTTL: time.Hour, LeaseDuration: 1000 * time.Hour, SweepInterval: time.Hour, ToolStopWait: 10 * time.Millisecond, Now: kb.now,
		Agents: []*agent.Agent{
			{Name: "asker", Provider: scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}), Tools: tool.Allowlist{api.ToolAskUser}},
			{Name: "approver", Provider: scriptModel([]model.ToolCall{{Name: "slow", Arguments: `{}`}}), Tools: tool.Allowlist{"slow"},
				Approval: approval.Policy{Rules: []approval.Rule{{Pattern: "slow", Decision: approval.Always}}}},
			{Name: "booker", Provider: scriptModel([]model.ToolCall{{Name: "book", Arguments: `{}`}}), Tools: tool.Allowlist{"book"}},
		}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(func() {
		cancel()
		r.Shutdown()
		st.Close()
	})
	kb.ctx, kb.runner = ctx, r
	return kb
}

// racer is one surface trying to resolve the question.
type racer struct {
	surface string
	err     error
	receipt *api.Receipt
}

// TestEveryKindResolvesOnceUnderRaces races, for each kind of interaction
// (ask, approval, an MCP server's elicitation, an MCP host's question), the
// surfaces that resolve it: answers through continue, AG-UI, /mcp and the
// inbox at once, with a cancel of the run and an expiry (the clock passes
// expiresAt, the sweeper runs) in some rounds. Whoever wins, the question
// is resolved exactly once: one user_input_resolved event, one resolution
// in the audit trail, at most one racer told it succeeded (with the stored
// status), every other told why not with a typed error, the run ended or
// continued once, and every tool call with exactly one result.
func TestEveryKindResolvesOnceUnderRaces(t *testing.T) {
	t.Parallel()
	for driver, newStore := range raceDrivers(t) {
		for _, kc := range kindCases {
			t.Run(driver+"/"+kc.name, func(t *testing.T) {
				t.Parallel()
				kb := setupKinds(t, newStore)
				for round := 0; round < 6; round++ {
					t.Run(fmt.Sprint(round), func(t *testing.T) { raceOneQuestion(t, kb, kc, round%3) })
				}
			})
		}
	}
}

// raceOneQuestion puts one question of kc and races its resolutions: the
// four answer surfaces, plus a cancel (extra ≥ 1) and an expiry (extra 2).
func raceOneQuestion(t *testing.T, kb *kindBundle, kc kindCase, extra int) {
	sessionID, runID := kc.ask(t, kb)
	it := kb.pending(t, sessionID)

	surfaces := []string{agent.SurfaceContinue, agent.SurfaceAGUI, agent.SurfaceMCP, agent.SurfaceInbox}
	racers := make([]*racer, len(surfaces))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range surfaces {
		racers[i] = &racer{surface: s}
		wg.Add(1)
		go func(rc *racer) {
			defer wg.Done()
			<-start
			sid := sessionID
			if rc.surface == agent.SurfaceMCP || rc.surface == agent.SurfaceInbox {
				sid = "" // these surfaces name only the request
			}
			res, err := kb.runner.Resolve(kb.ctx, agent.ResolveParams{By: "alice", SessionID: sid, RequestID: it.ID, Answer: kc.answer, Surface: rc.surface})
			rc.err = err
			if err == nil {
				rc.receipt = res.Receipt
			}
		}(racers[i])
	}
	if extra >= 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, err := kb.runner.Cancel(kb.ctx, agent.CancelParams{Owner: "alice", SessionID: sessionID})
			require.NoError(t, err)
		}()
	}
	if extra == 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			late := it.ExpiresAt.Add(time.Second)
			kb.clock.Store(&late)
			kb.runner.Sweep(kb.ctx)
		}()
	}
	close(start)
	wg.Wait()

	// The run ends (completed after the answer, cancelled, expired).
	require.NoError(t, waitFor(kb.ctx, kb.st, sessionID, func() (bool, error) {
		run, err := kb.st.RunGet(kb.ctx, runID)
		return err == nil && run.Status.Terminal(), err
	}))
	cur, err := kb.st.InteractionGet(kb.ctx, it.ID)
	require.NoError(t, err)
	require.NotEqual(t, string(api.StatusPending), cur.Status)
	t.Logf("%s resolved %s", kc.name, cur.Status)

	wins := 0
	for _, rc := range racers {
		if rc.err == nil {
			wins++
			require.Equal(t, api.Status(cur.Status), rc.receipt.Status, "the winner's receipt is the stored resolution (%s)", rc.surface)
			continue
		}
		var dup *agent.AlreadyResolvedError
		var exp *agent.InteractionExpiredError
		if !errors.As(rc.err, &dup) && !errors.As(rc.err, &exp) && !errors.Is(rc.err, agent.ErrNotResumable) {
			t.Fatalf("%s: unexpected error %v", rc.surface, rc.err)
		}
	}
	require.LessOrEqual(t, wins, 1, "at most one surface resolved it")
	if cur.Status == string(api.StatusAnswered) {
		require.Equal(t, 1, wins, "an answer won, and its surface was told")
	}

	evs, err := kb.st.EventList(kb.ctx, &store.EventListParams{SessionID: sessionID, Limit: 1000})
	require.NoError(t, err)
	resolved := 0
	for _, ev := range evs {
		if ev.Name != api.EventUserInputResolved {
			continue
		}
		var rc api.Receipt
		require.NoError(t, json.Unmarshal(ev.Data, &rc))
		if rc.RequestID == it.ID {
			resolved++
			require.Equal(t, api.Status(cur.Status), rc.Status)
		}
	}
	require.Equal(t, 1, resolved, "one user_input_resolved event")

	audit, err := kb.st.AuditList(kb.ctx, sessionID)
	require.NoError(t, err)
	resolutions := 0
	for _, a := range audit {
		if a.RequestID != it.ID {
			continue
		}
		switch api.Status(a.Action) {
		case api.StatusAnswered, api.StatusCancelled, api.StatusExpired, api.StatusNotResumable:
			resolutions++
			require.Equal(t, cur.Status, a.Action)
		}
	}
	require.Equal(t, 1, resolutions, "one resolution in the audit trail")

	msgs, err := kb.st.MessageList(kb.ctx, sessionID)
	require.NoError(t, err)
	results := map[string]int{}
	var calls []model.ToolCall
	for _, m := range msgs {
		if m.Role == "tool" {
			results[m.ToolCallID]++
		}
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			var cs []model.ToolCall
			require.NoError(t, json.Unmarshal(m.ToolCalls, &cs))
			calls = append(calls, cs...)
		}
	}
	require.NotEmpty(t, calls)
	for _, c := range calls {
		require.Equal(t, 1, results[c.ID], "results of tool call %s (%s)", c.ID, c.Name)
	}
}
