package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// hookStore orders two transactions explicitly: a hook armed on a write made
// inside a transaction (the driver's) runs while that transaction is open,
// and a hook armed on InTx runs before the next transaction begins (the
// canceller's). Each hook runs once.
type hookStore struct {
	store.Store
	mu       sync.Mutex
	onInsert func(p *store.InteractionInsertParams) // inside the pause's transaction
	onResult func(p *store.MessageInsertParams)     // inside a tool result's transaction
	onTx     func()                                 // before the next InTx
	onActive func()                                 // before the next RunGetActive
	onGet    func()                                 // after the next InteractionGet or InteractionGetState read
	// failed counts the transactions a store failed with ErrLost or
	// ErrDuplicate (a MustWin write that lost, docs/design.md §34).
	failed atomic.Int64
}

func (s *hookStore) InteractionGetState(ctx context.Context, p *store.InteractionGetStateParams) (*store.InteractionState, error) {
	ist, err := s.Store.InteractionGetState(ctx, p)
	if f := s.take(&s.onGet); f != nil {
		f()
	}
	return ist, err
}

func (s *hookStore) RunGetActive(ctx context.Context, sessionID string) (*store.Run, error) {
	if f := s.take(&s.onActive); f != nil {
		f()
	}
	return s.Store.RunGetActive(ctx, sessionID)
}

func (s *hookStore) InteractionGet(ctx context.Context, id string) (*store.Interaction, error) {
	it, err := s.Store.InteractionGet(ctx, id)
	if f := s.take(&s.onGet); f != nil {
		f()
	}
	return it, err
}

func (s *hookStore) take(f *func()) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := *f
	*f = nil
	return g
}

func (s *hookStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	if f := s.take(&s.onTx); f != nil {
		f()
	}
	err := s.Store.InTx(ctx, func(tx store.Tx) error { return fn(hookTx{tx, s}) })
	if errors.Is(err, store.ErrLost) || errors.Is(err, store.ErrDuplicate) {
		s.failed.Add(1)
	}
	return err
}

type hookTx struct {
	store.Tx
	s *hookStore
}

func (t hookTx) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	t.s.mu.Lock()
	f := t.s.onInsert
	t.s.onInsert = nil
	t.s.mu.Unlock()
	if f != nil {
		f(p)
	}
	return t.Tx.InteractionInsert(ctx, p)
}

func (t hookTx) MessageInsert(ctx context.Context, p *store.MessageInsertParams) (*store.Message, error) {
	t.s.mu.Lock()
	f := t.s.onResult
	if p.Role == "tool" && p.Name == "slow" {
		t.s.onResult = nil
	} else {
		f = nil
	}
	t.s.mu.Unlock()
	if f != nil {
		f(p)
	}
	return t.Tx.MessageInsert(ctx, p)
}

// raceDrivers returns a fresh store per driver: SQLite always (a copy of
// the migrated database, lubantest.MigratedDB), PostgreSQL when
// LUBAN_TEST_POSTGRES is set.
func raceDrivers(t *testing.T) map[string]func(t *testing.T) store.Store {
	out := map[string]func(t *testing.T) store.Store{
		"sqlite": func(t *testing.T) store.Store {
			st, err := sqlite.Open(context.Background(), lubantest.MigratedDB(t), nil)
			require.NoError(t, err)
			return st
		},
	}
	if pgtest.Enabled() {
		out["postgres"] = func(t *testing.T) store.Store {
			st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
			require.NoError(t, err)
			return st
		}
	}
	return out
}

type raceBundle struct {
	ctx    context.Context
	st     *hookStore
	runner *agent.Runner
}

// scriptModel answers turn n of a run with turns[n]; past the end it ends
// the run with text.
func scriptModel(turns ...[]model.ToolCall) model.Provider {
	return model.ProviderFunc{ProviderName: "test:script", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		n := 0
		for _, m := range req.Messages {
			if m.Role == model.RoleAssistant {
				n++
			}
		}
		if n >= len(turns) {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}, FinishReason: "stop"}, nil
		}
		calls := make([]model.ToolCall, len(turns[n]))
		for i, c := range turns[n] {
			c.ID = agent.NewID("call")
			calls[i] = c
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "calling", ToolCalls: calls}, FinishReason: "tool_calls"}, nil
	}}
}

func setupRace(t *testing.T, newStore func(t *testing.T) store.Store, p model.Provider) *raceBundle {
	t.Helper()
	raw := newStore(t)
	st := &hookStore{Store: raw}
	reg := tool.NewRegistry()
	require.NoError(t, reg.Register(tool.Func{ToolSpec: model.ToolSpec{Name: "slow", Description: "a tool", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			return api.ToolResult{Content: "slow result"}, nil
		}}, true))
	r, err := agent.New(agent.Options{Store: st, Tools: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Agents: []*agent.Agent{{Provider: p, Tools: tool.Allowlist{api.ToolAskUser, "slow"}}}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(func() {
		cancel()
		r.Shutdown()
		raw.Close()
	})
	return &raceBundle{ctx: ctx, st: st, runner: r}
}

func (b *raceBundle) waitRun(t *testing.T, sessionID, runID string, want store.RunStatus) {
	t.Helper()
	require.NoError(t, waitFor(b.ctx, b.st, sessionID, func() (bool, error) {
		run, err := b.st.RunGet(b.ctx, runID)
		return err == nil && run.Status == want, err
	}))
}

// cancelDuringPause arms the race: the next pause of the run stops inside
// its transaction until Cancel has made its reads and is about to begin its
// own transaction; the pause then commits, and Cancel's transaction runs
// after it. It returns Cancel's status.
func (b *raceBundle) cancelDuringPause(t *testing.T, trigger func() (sessionID, runID string)) (string, string, string) {
	t.Helper()
	pausing, cancelling := make(chan struct{}), make(chan struct{})
	b.st.mu.Lock()
	b.st.onInsert = func(*store.InteractionInsertParams) {
		close(pausing)
		<-cancelling
	}
	b.st.mu.Unlock()
	sessionID, runID := trigger()
	select {
	case <-pausing:
	case <-b.ctx.Done():
		t.Fatal("the run never paused")
	}
	b.st.mu.Lock()
	b.st.onTx = func() {
		close(cancelling)
		b.waitRun(t, sessionID, runID, store.RunWaitingInput)
	}
	b.st.mu.Unlock()
	status, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: sessionID})
	require.NoError(t, err)
	its, err := b.st.InteractionList(b.ctx, sessionID)
	require.NoError(t, err)
	require.NotEmpty(t, its, "the pause committed before the cancel's transaction")
	return status, sessionID, runID
}

// requireNothingOpen checks what a cancelled run must leave: the run
// cancelled, no pending question, every interaction resolved with a receipt
// that a late answer gets as 409, every tool call with exactly one result,
// and a session that takes the next message.
func (b *raceBundle) requireNothingOpen(t *testing.T, status, sessionID, runID string) {
	t.Helper()
	require.Equal(t, string(store.RunCancelled), status)
	run, err := b.st.RunGet(b.ctx, runID)
	require.NoError(t, err)
	require.Equal(t, store.RunCancelled, run.Status)
	_, err = b.st.InteractionGetPending(b.ctx, sessionID)
	require.ErrorIs(t, err, store.ErrNotFound, "the cancelled run left a pending question")
	its, err := b.st.InteractionList(b.ctx, sessionID)
	require.NoError(t, err)
	for _, it := range its {
		require.NotEqual(t, string(api.StatusPending), it.Status, "interaction %s", it.ID)
		_, err := b.runner.Resolve(b.ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: sessionID, RequestID: it.ID,
			Answer: api.ContinueRequest{Selections: []string{"a"}}})
		var already *agent.AlreadyResolvedError
		require.ErrorAs(t, err, &already, "a late answer to %s", it.ID)
	}
	msgs, err := b.st.MessageList(b.ctx, sessionID)
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
	for _, c := range calls {
		require.Equal(t, 1, results[c.ID], "results of tool call %s (%s)", c.ID, c.Name)
	}
	evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: sessionID})
	require.NoError(t, err)
	resolved := 0
	for _, ev := range evs {
		if ev.Name == api.EventUserInputResolved {
			resolved++
		}
	}
	require.Equal(t, len(its), resolved, "one user_input_resolved per interaction")
	next, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", SessionID: sessionID, Message: "again"})
	require.NoError(t, err, "the next message after the cancel")
	b.waitRun(t, sessionID, next.RunID, store.RunCompleted)
}

const raceAsk = `{"title":"pick","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`

// A cancel whose reads come before the pause commits and whose transaction
// comes after it must still resolve the question the pause put.
func TestCancelRacesPause(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupRace(t, newStore, scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}))
			status, sid, rid := b.cancelDuringPause(t, func() (string, string) {
				res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
				require.NoError(t, err)
				return res.SessionID, res.RunID
			})
			b.requireNothingOpen(t, status, sid, rid)
		})
	}
}

// The same race after a tool call of the same turn ran.
func TestCancelRacesPauseAfterTool(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupRace(t, newStore, scriptModel([]model.ToolCall{{Name: "slow", Arguments: `{}`}, {Name: api.ToolAskUser, Arguments: raceAsk}}))
			status, sid, rid := b.cancelDuringPause(t, func() (string, string) {
				res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
				require.NoError(t, err)
				return res.SessionID, res.RunID
			})
			b.requireNothingOpen(t, status, sid, rid)
		})
	}
}

// The same race on a pause that puts two questions of one turn at once
// (docs/design.md §32): the cancel closes both; and a cancel after the
// first of them was answered closes the second, keeping the first's answer.
func TestCancelRacesBatchPause(t *testing.T) {
	t.Parallel()
	two := []model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}, {Name: api.ToolAskUser, Arguments: raceAsk}}
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupRace(t, newStore, scriptModel(two))
			status, sid, rid := b.cancelDuringPause(t, func() (string, string) {
				res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
				require.NoError(t, err)
				return res.SessionID, res.RunID
			})
			b.requireNothingOpen(t, status, sid, rid)
			its, err := b.st.InteractionList(b.ctx, sid)
			require.NoError(t, err)
			require.Len(t, its, 2)

			b = setupRace(t, newStore, scriptModel(two))
			res, its := b.pause(t)
			require.Len(t, its, 2, "both questions are put in one pause")
			done, err := b.runner.Resolve(b.ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[0].ID,
				Answer: api.ContinueRequest{Selections: []string{"a"}}})
			require.NoError(t, err)
			require.True(t, done.Waiting)
			run, err := b.st.RunGet(b.ctx, res.RunID)
			require.NoError(t, err)
			require.Equal(t, store.RunWaitingInput, run.Status, "one of two answered: the run waits")
			st, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: res.SessionID})
			require.NoError(t, err)
			b.requireNothingOpen(t, st, res.SessionID, res.RunID)
			its, err = b.st.InteractionList(b.ctx, res.SessionID)
			require.NoError(t, err)
			require.Equal(t, string(api.StatusAnswered), its[0].Status)
			require.Equal(t, string(api.StatusCancelled), its[1].Status)
		})
	}
}

// A cancel that comes while a tool's result is being committed: the run
// ends cancelled and the call has exactly one result.
func TestCancelRacesToolResult(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupRace(t, newStore, scriptModel([]model.ToolCall{{Name: "slow", Arguments: `{}`}, {Name: api.ToolAskUser, Arguments: raceAsk}}))
			writing, cancelling := make(chan struct{}), make(chan struct{})
			b.st.mu.Lock()
			b.st.onResult = func(*store.MessageInsertParams) {
				close(writing)
				<-cancelling
			}
			b.st.mu.Unlock()
			res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
			require.NoError(t, err)
			<-writing
			b.st.mu.Lock()
			b.st.onTx = func() { close(cancelling) }
			b.st.mu.Unlock()
			status, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: res.SessionID})
			require.NoError(t, err)
			b.requireNothingOpen(t, status, res.SessionID, res.RunID)
		})
	}
}

// Rows that an ended run left pending (a question whose run was cancelled and
// whose call already has a result, as stored before runs closed their
// questions) are closed by the sweeper, and a full batch of them does not
// keep a live question from expiring.
func TestSweeperClosesOrphans(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw := newStore(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			past := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
			req, err := json.Marshal(api.InputRequest{ID: "x", Prompt: api.Prompt{Title: "pick", Mode: "single",
				Options: []api.Option{{ID: "a", Label: "A"}, {ID: "b", Label: "B"}}}})
			require.NoError(t, err)
			const orphans = 101
			require.NoError(t, raw.InTx(ctx, func(tx store.Tx) error {
				for i := range orphans {
					sid, rid, cid, iid := agent.NewID("sess"), agent.NewID("run"), agent.NewID("call"), agent.NewID("ask")
					if _, err := tx.SessionCreate(ctx, &store.SessionCreateParams{ID: sid, Owner: "alice", Title: "orphan", Now: past}); err != nil {
						return err
					}
					if _, err := tx.RunInsert(ctx, &store.RunInsertParams{ID: rid, SessionID: sid, Agent: "default", Now: past}); err != nil {
						return err
					}
					if _, err := tx.RunFinish(ctx, &store.RunFinishParams{ID: rid, To: store.RunCancelled, Now: past}); err != nil {
						return err
					}
					calls := mustMarshal(t, []model.ToolCall{{ID: cid, Name: api.ToolAskUser, Arguments: raceAsk}})
					if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: agent.NewID("msg"), SessionID: sid, RunID: rid, Role: "assistant", ToolCalls: calls, Now: past}); err != nil {
						return err
					}
					if _, err := tx.MessageInsert(ctx, &store.MessageInsertParams{ID: agent.NewID("msg"), SessionID: sid, RunID: rid, Role: "tool", Content: "not run",
						ToolCallID: cid, Name: api.ToolAskUser, IsError: true, Now: past}); err != nil {
						return err
					}
					if _, err := tx.InteractionInsert(ctx, &store.InteractionInsertParams{ID: iid, SessionID: sid, RunID: rid, ToolCallID: cid, Tool: api.ToolAskUser,
						Request: req, Now: past, ExpiresAt: past.Add(time.Duration(i) * time.Millisecond)}); err != nil {
						return err
					}
				}
				return nil
			}))
			r, err := agent.New(agent.Options{Store: raw, Tools: tool.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
				InteractionTTL: time.Millisecond, SweepInterval: 10 * time.Millisecond,
				Agents: []*agent.Agent{{Provider: scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}), Tools: tool.Allowlist{api.ToolAskUser}}}})
			require.NoError(t, err)
			t.Cleanup(func() { r.Shutdown(); raw.Close() })
			res, err := r.Start(ctx, agent.StartParams{Owner: "alice", Message: "hi"})
			require.NoError(t, err)
			go r.Serve(ctx)
			require.NoError(t, waitFor(ctx, raw, res.SessionID, func() (bool, error) {
				run, err := raw.RunGet(ctx, res.RunID)
				return err == nil && run.Status == store.RunExpired, err
			}), "the live question expires")
			left, err := raw.InteractionListExpired(ctx, &store.InteractionListExpiredParams{Now: time.Now().Add(time.Hour), Limit: 1000})
			require.NoError(t, err)
			require.Empty(t, left, "every orphan is closed")
		})
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// A duplicate answer that read the question as pending, while the first
// answer committed and its run went on to the end before the duplicate
// looked at the run: 409 already_resolved with the first answer's receipt,
// not 410 not_resumable (the run is over because it was answered).
func TestDuplicateRacesRunEnd(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupRace(t, newStore, scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}))
			res, its := b.pause(t)
			require.Len(t, its, 1)
			it := its[0]
			answer := func(sel string) error {
				_, err := b.runner.Resolve(b.ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: it.ID,
					Answer: api.ContinueRequest{Selections: []string{sel}}})
				return err
			}
			b.st.mu.Lock()
			b.st.onGet = func() {
				// The duplicate has read the question as pending: the
				// first answer wins and its run completes now.
				require.NoError(t, answer("a"))
				b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)
			}
			b.st.mu.Unlock()
			err := answer("b")
			var already *agent.AlreadyResolvedError
			require.ErrorAs(t, err, &already)
			require.Equal(t, []string{"a"}, already.Receipt.Selections, "the first answer's receipt")
		})
	}
}
