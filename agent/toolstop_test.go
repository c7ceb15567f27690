package agent_test

import (
	"context"
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

// traceHookStore is a hookStore that can also run a hook before the next
// store-level TraceList read (the driver's check for an interrupted call,
// made just before a tool that is not idempotent starts), and one once the
// next tool_started marker is committed (just before the tool runs).
type traceHookStore struct {
	*hookStore
	onTraceList func()
	onStarted   func()
}

func (s *traceHookStore) started() {
	s.mu.Lock()
	f := s.onStarted
	s.onStarted = nil
	s.mu.Unlock()
	if f != nil {
		f()
	}
}

func (s *traceHookStore) TraceInsert(ctx context.Context, p *store.TraceInsertParams) error {
	err := s.hookStore.TraceInsert(ctx, p)
	if err == nil && p.Kind == "tool_started" {
		s.started()
	}
	return err
}

func (s *traceHookStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	var marked bool
	err := s.hookStore.InTx(ctx, func(tx store.Tx) error {
		marked = false
		return fn(markTx{Tx: tx, marked: &marked})
	})
	if err == nil && marked {
		s.started()
	}
	return err
}

// markTx notes a tool_started marker written in its transaction.
type markTx struct {
	store.Tx
	marked *bool
}

func (t markTx) TraceInsert(ctx context.Context, p *store.TraceInsertParams) error {
	err := t.Tx.TraceInsert(ctx, p)
	if err == nil && p.Kind == "tool_started" {
		*t.marked = true
	}
	return err
}

func (s *traceHookStore) TraceList(ctx context.Context, sessionID string) ([]*store.TraceEntry, error) {
	s.mu.Lock()
	f := s.onTraceList
	s.onTraceList = nil
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return s.hookStore.TraceList(ctx, sessionID)
}

// actTool is a tool that is not idempotent and takes effect whatever its
// context says (a write, a payment): it reports that it started, waits for
// release and then counts its effect.
type actTool struct {
	started chan struct{}
	release chan struct{}
	effects atomic.Int32
	once    sync.Once
	freed   sync.Once
}

// free lets the tool return (once; later calls do nothing).
func (a *actTool) free() { a.freed.Do(func() { close(a.release) }) }

func newActTool() *actTool {
	return &actTool{started: make(chan struct{}), release: make(chan struct{})}
}

func (a *actTool) register(t *testing.T, reg *tool.Registry) {
	t.Helper()
	require.NoError(t, reg.Register(tool.Func{ToolSpec: model.ToolSpec{Name: "act", Description: "takes effect", Parameters: json.RawMessage(`{"type":"object"}`)},
		Fn: func(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
			a.once.Do(func() { close(a.started) })
			<-a.release
			a.effects.Add(1)
			return api.ToolResult{Content: "acted"}, nil
		}}, false))
}

type toolStopBundle struct {
	ctx    context.Context
	st     *traceHookStore
	runner *agent.Runner
	act    *actTool
}

// cancelAt sets hook (one of the store's hooks) to cancel session sid
// when it fires, once; the returned channel gets the cancel's error.
func (b *toolStopBundle) cancelAt(hook *func(), sid string) <-chan error {
	cancelled := make(chan error, 1)
	b.st.mu.Lock()
	*hook = func() {
		_, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: sid})
		cancelled <- err
	}
	b.st.mu.Unlock()
	return cancelled
}

// waitCancel waits for the cancel cancelAt made and requires it to succeed.
func (b *toolStopBundle) waitCancel(t *testing.T, cancelled <-chan error) {
	t.Helper()
	select {
	case err := <-cancelled:
		require.NoError(t, err)
	case <-b.ctx.Done():
		t.Fatal("the cancel never ran")
	}
}

func setupToolStop(t *testing.T, newStore func(t *testing.T) store.Store, wait time.Duration) *toolStopBundle {
	t.Helper()
	raw := newStore(t)
	st := &traceHookStore{hookStore: &hookStore{Store: raw}}
	reg := tool.NewRegistry()
	act := newActTool()
	act.register(t, reg)
	r, err := agent.New(agent.Options{Store: st, Tools: reg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), ToolStopWait: wait,
		Agents: []*agent.Agent{{Provider: scriptModel([]model.ToolCall{{Name: "act", Arguments: `{}`}}), Tools: tool.Allowlist{"act"}}}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(func() {
		cancel()
		act.free()
		r.Shutdown()
		raw.Close()
	})
	return &toolStopBundle{ctx: ctx, st: st, runner: r, act: act}
}

// actResult returns the ToolResult stored for the act call of the session
// (the transcript's tool message) and the session's assistant messages.
func (b *toolStopBundle) actResult(t *testing.T, sessionID string) (*api.MessageView, int) {
	t.Helper()
	tr, err := b.runner.Transcript(b.ctx, "alice", sessionID)
	require.NoError(t, err)
	var res *api.MessageView
	assistants := 0
	for i, m := range tr.Messages {
		if m.Role == api.RoleTool && m.Name == "act" {
			require.Nil(t, res, "one result per call")
			res = &tr.Messages[i]
		}
		if m.Role == api.RoleAssistant {
			assistants++
		}
	}
	require.NotNil(t, res, "the act call has no result")
	return res, assistants
}

// A cancel while a tool runs never records a tool that ran as "not run"
// (docs/design.md §18): a tool that returns within ToolStopWait gets its real
// result and the run ends without another model call; one that does not
// gets a result saying it was interrupted and may have taken effect; and a
// cancel that commits before the tool starts keeps it from starting, so
// its "not run" is true.
func TestCancelWhileToolRuns(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			t.Run("returns_in_time", func(t *testing.T) {
				t.Parallel()
				b := setupToolStop(t, newStore, 10*time.Second)
				res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "do it"})
				require.NoError(t, err)
				select {
				case <-b.act.started:
				case <-b.ctx.Done():
					t.Fatal("the tool never started")
				}
				go func() {
					// The tool returns while the cancel waits for it.
					for !b.runner.StopRequested(res.RunID) && b.ctx.Err() == nil {
						time.Sleep(time.Millisecond)
					}
					b.act.free()
				}()
				status, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: res.SessionID})
				require.NoError(t, err)
				require.Equal(t, string(store.RunCancelled), status)
				m, assistants := b.actResult(t, res.SessionID)
				require.Equal(t, "acted", m.Content)
				require.False(t, m.IsError)
				require.Equal(t, int32(1), b.act.effects.Load())
				require.Equal(t, 1, assistants, "no model call after the cancel")
			})
			t.Run("still_running", func(t *testing.T) {
				t.Parallel()
				b := setupToolStop(t, newStore, 200*time.Millisecond)
				res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "do it"})
				require.NoError(t, err)
				select {
				case <-b.act.started:
				case <-b.ctx.Done():
					t.Fatal("the tool never started")
				}
				status, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: res.SessionID})
				require.NoError(t, err)
				require.Equal(t, string(store.RunCancelled), status)
				b.act.free() // it takes effect after all
				m, _ := b.actResult(t, res.SessionID)
				require.Equal(t, "interrupted: the run ended (cancelled) while act was running; it may have taken effect", m.Content)
				require.True(t, m.IsError)
				// The late result does not replace it, nor does the run go on.
				require.Eventually(t, func() bool { return b.act.effects.Load() == 1 }, 5*time.Second, 10*time.Millisecond)
				b.runner.Shutdown()
				m, assistants := b.actResult(t, res.SessionID)
				require.True(t, strings.HasPrefix(m.Content, "interrupted: "), m.Content)
				require.Equal(t, 1, assistants)
				run, err := b.st.RunGet(b.ctx, res.RunID)
				require.NoError(t, err)
				require.Equal(t, store.RunCancelled, run.Status)
			})
			t.Run("cancelled_as_it_starts", func(t *testing.T) {
				t.Parallel()
				b := setupToolStop(t, newStore, 200*time.Millisecond)
				sid := agent.NewID("sess")
				// The marker is committed and the tool about to run: the
				// cancel commits first, the tool runs all the same.
				cancelled := b.cancelAt(&b.st.onStarted, sid)
				b.act.free()
				res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "do it", SessionID: sid, CreateSession: true})
				require.NoError(t, err)
				b.waitCancel(t, cancelled)
				require.Eventually(t, func() bool { return b.act.effects.Load() == 1 }, 5*time.Second, 10*time.Millisecond)
				b.runner.Shutdown()
				m, _ := b.actResult(t, res.SessionID)
				require.Equal(t, "interrupted: the run ended (cancelled) while act was running; it may have taken effect", m.Content)
			})
			t.Run("cancelled_before_it_starts", func(t *testing.T) {
				t.Parallel()
				b := setupToolStop(t, newStore, 200*time.Millisecond)
				sid := agent.NewID("sess")
				// The driver is about to start the tool: a cancel commits
				// first.
				cancelled := b.cancelAt(&b.st.onTraceList, sid)
				res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "do it", SessionID: sid, CreateSession: true})
				require.NoError(t, err)
				b.act.free()
				b.waitCancel(t, cancelled)
				b.runner.Shutdown()
				m, _ := b.actResult(t, res.SessionID)
				require.Equal(t, "not run: the run ended (cancelled) before this tool call was handled", m.Content)
				require.Zero(t, b.act.effects.Load(), "a tool whose result says not run did not run")
			})
		})
	}
}
