package agent_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
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
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// answerPathMaxCalls bounds what an ask_user answer's path costs from
// Runner.Resolve to the resumed model request, counted by
// TestAnswerPathStoreCalls (docs/design.md §15): one read of the
// interaction with its session, run and messages, then one transaction
// (RunResume, InteractionResolve, RowsInsert); the driver continues from
// the state the transaction committed.
const answerPathMaxCalls = 6

// callCounter counts store calls per method name while on.
type callCounter struct {
	on atomic.Bool
	mu sync.Mutex
	n  map[string]int
}

func (c *callCounter) hit(name string) {
	if !c.on.Load() {
		return
	}
	c.mu.Lock()
	c.n[name]++
	c.mu.Unlock()
}

// stop ends the count and returns it.
func (c *callCounter) stop() map[string]int {
	c.on.Store(false)
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.n))
	for k, v := range c.n {
		out[k] = v
	}
	return out
}

// countingStore counts every Executor call made on the store or on a
// transaction it opens, and each InTx; the People methods, Subscribe and
// the rest pass through uncounted.
type countingStore struct {
	store.Store
	c *callCounter
}

func (s *countingStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	s.c.hit("InTx")
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(countingTx{Tx: tx, c: s.c}) })
}

type countingTx struct {
	store.Tx
	c *callCounter
}

func (s *countingStore) AuditInsert(ctx context.Context, p *store.AuditInsertParams) error {
	s.c.hit("AuditInsert")
	return s.Store.AuditInsert(ctx, p)
}

func (s *countingStore) AuditList(ctx context.Context, sessionID string) ([]*store.AuditEntry, error) {
	s.c.hit("AuditList")
	return s.Store.AuditList(ctx, sessionID)
}

func (s *countingStore) EventAppend(ctx context.Context, p *store.EventAppendParams) (*store.Event, error) {
	s.c.hit("EventAppend")
	return s.Store.EventAppend(ctx, p)
}

func (s *countingStore) EventDelete(ctx context.Context, p *store.EventDeleteParams) (int64, error) {
	s.c.hit("EventDelete")
	return s.Store.EventDelete(ctx, p)
}

func (s *countingStore) EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error) {
	s.c.hit("EventList")
	return s.Store.EventList(ctx, p)
}

func (s *countingStore) InteractionGet(ctx context.Context, id string) (*store.Interaction, error) {
	s.c.hit("InteractionGet")
	return s.Store.InteractionGet(ctx, id)
}

func (s *countingStore) InteractionGetByToolCall(ctx context.Context, sessionID, toolCallID string) (*store.Interaction, error) {
	s.c.hit("InteractionGetByToolCall")
	return s.Store.InteractionGetByToolCall(ctx, sessionID, toolCallID)
}

func (s *countingStore) InteractionGetLastResolved(ctx context.Context, sessionID string) (*store.Interaction, error) {
	s.c.hit("InteractionGetLastResolved")
	return s.Store.InteractionGetLastResolved(ctx, sessionID)
}

func (s *countingStore) InteractionGetPending(ctx context.Context, sessionID string) (*store.Interaction, error) {
	s.c.hit("InteractionGetPending")
	return s.Store.InteractionGetPending(ctx, sessionID)
}

func (s *countingStore) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	s.c.hit("InteractionInsert")
	return s.Store.InteractionInsert(ctx, p)
}

func (s *countingStore) InteractionList(ctx context.Context, sessionID string) ([]*store.Interaction, error) {
	s.c.hit("InteractionList")
	return s.Store.InteractionList(ctx, sessionID)
}

func (s *countingStore) InteractionListExpired(ctx context.Context, p *store.InteractionListExpiredParams) ([]*store.Interaction, error) {
	s.c.hit("InteractionListExpired")
	return s.Store.InteractionListExpired(ctx, p)
}

func (s *countingStore) InteractionResolve(ctx context.Context, p *store.InteractionResolveParams) (bool, error) {
	s.c.hit("InteractionResolve")
	return s.Store.InteractionResolve(ctx, p)
}

func (s *countingStore) InteractionGetState(ctx context.Context, p *store.InteractionGetStateParams) (*store.InteractionState, error) {
	s.c.hit("InteractionGetState")
	return s.Store.InteractionGetState(ctx, p)
}

func (s *countingStore) RowsInsert(ctx context.Context, p *store.RowsInsertParams) (*store.RowsInserted, error) {
	s.c.hit("RowsInsert")
	return s.Store.RowsInsert(ctx, p)
}

func (s *countingStore) InteractionResolveRun(ctx context.Context, p *store.InteractionResolveRunParams) ([]*store.Interaction, error) {
	s.c.hit("InteractionResolveRun")
	return s.Store.InteractionResolveRun(ctx, p)
}

func (s *countingStore) MessageInsert(ctx context.Context, p *store.MessageInsertParams) (*store.Message, error) {
	s.c.hit("MessageInsert")
	return s.Store.MessageInsert(ctx, p)
}

func (s *countingStore) MessageList(ctx context.Context, sessionID string) ([]*store.Message, error) {
	s.c.hit("MessageList")
	return s.Store.MessageList(ctx, sessionID)
}

func (s *countingStore) RunCheckpoint(ctx context.Context, p *store.RunCheckpointParams) (bool, error) {
	s.c.hit("RunCheckpoint")
	return s.Store.RunCheckpoint(ctx, p)
}

func (s *countingStore) RunFinish(ctx context.Context, p *store.RunFinishParams) (bool, error) {
	s.c.hit("RunFinish")
	return s.Store.RunFinish(ctx, p)
}

func (s *countingStore) RunGet(ctx context.Context, id string) (*store.Run, error) {
	s.c.hit("RunGet")
	return s.Store.RunGet(ctx, id)
}

func (s *countingStore) RunGetActive(ctx context.Context, sessionID string) (*store.Run, error) {
	s.c.hit("RunGetActive")
	return s.Store.RunGetActive(ctx, sessionID)
}

func (s *countingStore) RunInsert(ctx context.Context, p *store.RunInsertParams) (*store.Run, error) {
	s.c.hit("RunInsert")
	return s.Store.RunInsert(ctx, p)
}

func (s *countingStore) RunLease(ctx context.Context, p *store.RunLeaseParams) (bool, error) {
	s.c.hit("RunLease")
	return s.Store.RunLease(ctx, p)
}

func (s *countingStore) RunListRecoverable(ctx context.Context, p *store.RunListRecoverableParams) ([]*store.Run, error) {
	s.c.hit("RunListRecoverable")
	return s.Store.RunListRecoverable(ctx, p)
}

func (s *countingStore) RunPause(ctx context.Context, p *store.RunPauseParams) (bool, error) {
	s.c.hit("RunPause")
	return s.Store.RunPause(ctx, p)
}

func (s *countingStore) RunResume(ctx context.Context, p *store.RunResumeParams) (bool, error) {
	s.c.hit("RunResume")
	return s.Store.RunResume(ctx, p)
}

func (s *countingStore) SessionCreate(ctx context.Context, p *store.SessionCreateParams) (*store.Session, error) {
	s.c.hit("SessionCreate")
	return s.Store.SessionCreate(ctx, p)
}

func (s *countingStore) SessionGet(ctx context.Context, id string) (*store.Session, error) {
	s.c.hit("SessionGet")
	return s.Store.SessionGet(ctx, id)
}

func (s *countingStore) SessionList(ctx context.Context, p *store.SessionListParams) ([]*store.Session, error) {
	s.c.hit("SessionList")
	return s.Store.SessionList(ctx, p)
}

func (s *countingStore) SessionSetStatus(ctx context.Context, p *store.SessionSetStatusParams) error {
	s.c.hit("SessionSetStatus")
	return s.Store.SessionSetStatus(ctx, p)
}

func (s *countingStore) TraceInsert(ctx context.Context, p *store.TraceInsertParams) error {
	s.c.hit("TraceInsert")
	return s.Store.TraceInsert(ctx, p)
}

func (s *countingStore) TraceList(ctx context.Context, sessionID string) ([]*store.TraceEntry, error) {
	s.c.hit("TraceList")
	return s.Store.TraceList(ctx, sessionID)
}

func (t countingTx) AuditInsert(ctx context.Context, p *store.AuditInsertParams) error {
	t.c.hit("AuditInsert")
	return t.Tx.AuditInsert(ctx, p)
}

func (t countingTx) AuditList(ctx context.Context, sessionID string) ([]*store.AuditEntry, error) {
	t.c.hit("AuditList")
	return t.Tx.AuditList(ctx, sessionID)
}

func (t countingTx) EventAppend(ctx context.Context, p *store.EventAppendParams) (*store.Event, error) {
	t.c.hit("EventAppend")
	return t.Tx.EventAppend(ctx, p)
}

func (t countingTx) EventDelete(ctx context.Context, p *store.EventDeleteParams) (int64, error) {
	t.c.hit("EventDelete")
	return t.Tx.EventDelete(ctx, p)
}

func (t countingTx) EventList(ctx context.Context, p *store.EventListParams) ([]*store.Event, error) {
	t.c.hit("EventList")
	return t.Tx.EventList(ctx, p)
}

func (t countingTx) InteractionGet(ctx context.Context, id string) (*store.Interaction, error) {
	t.c.hit("InteractionGet")
	return t.Tx.InteractionGet(ctx, id)
}

func (t countingTx) InteractionGetByToolCall(ctx context.Context, sessionID, toolCallID string) (*store.Interaction, error) {
	t.c.hit("InteractionGetByToolCall")
	return t.Tx.InteractionGetByToolCall(ctx, sessionID, toolCallID)
}

func (t countingTx) InteractionGetLastResolved(ctx context.Context, sessionID string) (*store.Interaction, error) {
	t.c.hit("InteractionGetLastResolved")
	return t.Tx.InteractionGetLastResolved(ctx, sessionID)
}

func (t countingTx) InteractionGetPending(ctx context.Context, sessionID string) (*store.Interaction, error) {
	t.c.hit("InteractionGetPending")
	return t.Tx.InteractionGetPending(ctx, sessionID)
}

func (t countingTx) InteractionInsert(ctx context.Context, p *store.InteractionInsertParams) (*store.Interaction, error) {
	t.c.hit("InteractionInsert")
	return t.Tx.InteractionInsert(ctx, p)
}

func (t countingTx) InteractionList(ctx context.Context, sessionID string) ([]*store.Interaction, error) {
	t.c.hit("InteractionList")
	return t.Tx.InteractionList(ctx, sessionID)
}

func (t countingTx) InteractionListExpired(ctx context.Context, p *store.InteractionListExpiredParams) ([]*store.Interaction, error) {
	t.c.hit("InteractionListExpired")
	return t.Tx.InteractionListExpired(ctx, p)
}

func (t countingTx) InteractionResolve(ctx context.Context, p *store.InteractionResolveParams) (bool, error) {
	t.c.hit("InteractionResolve")
	return t.Tx.InteractionResolve(ctx, p)
}

func (t countingTx) InteractionGetState(ctx context.Context, p *store.InteractionGetStateParams) (*store.InteractionState, error) {
	t.c.hit("InteractionGetState")
	return t.Tx.InteractionGetState(ctx, p)
}

func (t countingTx) RowsInsert(ctx context.Context, p *store.RowsInsertParams) (*store.RowsInserted, error) {
	t.c.hit("RowsInsert")
	return t.Tx.RowsInsert(ctx, p)
}

func (t countingTx) InteractionResolveRun(ctx context.Context, p *store.InteractionResolveRunParams) ([]*store.Interaction, error) {
	t.c.hit("InteractionResolveRun")
	return t.Tx.InteractionResolveRun(ctx, p)
}

func (t countingTx) MessageInsert(ctx context.Context, p *store.MessageInsertParams) (*store.Message, error) {
	t.c.hit("MessageInsert")
	return t.Tx.MessageInsert(ctx, p)
}

func (t countingTx) MessageList(ctx context.Context, sessionID string) ([]*store.Message, error) {
	t.c.hit("MessageList")
	return t.Tx.MessageList(ctx, sessionID)
}

func (t countingTx) RunCheckpoint(ctx context.Context, p *store.RunCheckpointParams) (bool, error) {
	t.c.hit("RunCheckpoint")
	return t.Tx.RunCheckpoint(ctx, p)
}

func (t countingTx) RunFinish(ctx context.Context, p *store.RunFinishParams) (bool, error) {
	t.c.hit("RunFinish")
	return t.Tx.RunFinish(ctx, p)
}

func (t countingTx) RunGet(ctx context.Context, id string) (*store.Run, error) {
	t.c.hit("RunGet")
	return t.Tx.RunGet(ctx, id)
}

func (t countingTx) RunGetActive(ctx context.Context, sessionID string) (*store.Run, error) {
	t.c.hit("RunGetActive")
	return t.Tx.RunGetActive(ctx, sessionID)
}

func (t countingTx) RunInsert(ctx context.Context, p *store.RunInsertParams) (*store.Run, error) {
	t.c.hit("RunInsert")
	return t.Tx.RunInsert(ctx, p)
}

func (t countingTx) RunLease(ctx context.Context, p *store.RunLeaseParams) (bool, error) {
	t.c.hit("RunLease")
	return t.Tx.RunLease(ctx, p)
}

func (t countingTx) RunListRecoverable(ctx context.Context, p *store.RunListRecoverableParams) ([]*store.Run, error) {
	t.c.hit("RunListRecoverable")
	return t.Tx.RunListRecoverable(ctx, p)
}

func (t countingTx) RunPause(ctx context.Context, p *store.RunPauseParams) (bool, error) {
	t.c.hit("RunPause")
	return t.Tx.RunPause(ctx, p)
}

func (t countingTx) RunResume(ctx context.Context, p *store.RunResumeParams) (bool, error) {
	t.c.hit("RunResume")
	return t.Tx.RunResume(ctx, p)
}

func (t countingTx) SessionCreate(ctx context.Context, p *store.SessionCreateParams) (*store.Session, error) {
	t.c.hit("SessionCreate")
	return t.Tx.SessionCreate(ctx, p)
}

func (t countingTx) SessionGet(ctx context.Context, id string) (*store.Session, error) {
	t.c.hit("SessionGet")
	return t.Tx.SessionGet(ctx, id)
}

func (t countingTx) SessionList(ctx context.Context, p *store.SessionListParams) ([]*store.Session, error) {
	t.c.hit("SessionList")
	return t.Tx.SessionList(ctx, p)
}

func (t countingTx) SessionSetStatus(ctx context.Context, p *store.SessionSetStatusParams) error {
	t.c.hit("SessionSetStatus")
	return t.Tx.SessionSetStatus(ctx, p)
}

func (t countingTx) TraceInsert(ctx context.Context, p *store.TraceInsertParams) error {
	t.c.hit("TraceInsert")
	return t.Tx.TraceInsert(ctx, p)
}

func (t countingTx) TraceList(ctx context.Context, sessionID string) ([]*store.TraceEntry, error) {
	t.c.hit("TraceList")
	return t.Tx.TraceList(ctx, sessionID)
}

// answerPathCalls pauses a run on an ask_user question, then counts the
// store calls the runner makes from Continue with the answer until the
// model is asked again, per method name.
func answerPathCalls(t *testing.T, st store.Store) map[string]int {
	c := &callCounter{n: map[string]int{}}
	counted := make(chan map[string]int, 1)
	var once sync.Once
	provider := model.ProviderFunc{ProviderName: "count", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
			once.Do(func() { counted <- c.stop() })
		}
		return zeroModel().Generate(ctx, req, onDelta)
	}}
	// No sweep and no lease renewal falls inside the counted window.
	r, err := agent.New(agent.Options{Store: &countingStore{Store: st, c: c}, SweepInterval: time.Hour, LeaseDuration: time.Hour, Tools: tool.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Agents: []*agent.Agent{{Provider: provider, Tools: tool.Allowlist{api.ToolAskUser}}}})
	require.NoError(t, err)
	t.Cleanup(r.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	bb := &benchBundle{runner: r, st: st}
	res, it, err := bb.pause(ctx)
	require.NoError(t, err)
	require.NoError(t, waitFor(ctx, st, res.SessionID, func() (bool, error) {
		run, err := st.RunGet(ctx, res.RunID)
		return err == nil && run.Status == store.RunWaitingInput, err
	}))
	// The driver that paused the run has let go of it: the answer starts a
	// new driver from the state its transition committed.
	for r.Driving(res.RunID) {
		runtime.Gosched()
	}
	c.on.Store(true)
	_, err = r.Resolve(ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "bench", SessionID: res.SessionID, RequestID: it.ID, Answer: api.ContinueRequest{Selections: []string{"safe"}}})
	require.NoError(t, err)
	select {
	case n := <-counted:
		require.NoError(t, waitFor(ctx, st, res.SessionID, func() (bool, error) {
			run, err := st.RunGet(ctx, res.RunID)
			return err == nil && run.Status.Terminal(), err
		}))
		return n
	case <-ctx.Done():
		t.Fatal("the model was not asked again after the answer")
		return nil
	}
}

// TestAnswerPathStoreCalls reports the store calls of an ask_user answer's
// path (Runner.Resolve to the resumed model request) per method, on
// SQLite and, with LUBAN_TEST_POSTGRES, on PostgreSQL; the total may not
// grow past answerPathMaxCalls.
func TestAnswerPathStoreCalls(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, st store.Store) {
		n := answerPathCalls(t, st)
		total, names := 0, make([]string, 0, len(n))
		for k, v := range n {
			total += v
			names = append(names, k)
		}
		slices.Sort(names)
		var b strings.Builder
		for _, k := range names {
			fmt.Fprintf(&b, " %s=%d", k, n[k])
		}
		t.Logf("answer path: %d store calls:%s", total, b.String())
		require.LessOrEqual(t, total, answerPathMaxCalls, "store calls of an ask_user answer before the model request:%s", b.String())
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "calls.db"), nil)
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		check(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		check(t, st)
	})
}
