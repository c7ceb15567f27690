package agent_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

// readCountingStore counts whole-session message reads made outside a
// transaction (reads inside InTx go through the Tx, not through here).
type readCountingStore struct {
	store.Store
	messageLists atomic.Int64
}

func (s *readCountingStore) InteractionGetState(ctx context.Context, p *store.InteractionGetStateParams) (*store.InteractionState, error) {
	if p.Messages {
		s.messageLists.Add(1)
	}
	return s.Store.InteractionGetState(ctx, p)
}

func (s *readCountingStore) MessageList(ctx context.Context, sessionID string) ([]*store.Message, error) {
	s.messageLists.Add(1)
	return s.Store.MessageList(ctx, sessionID)
}

// A whole cycle in a new session reads the session's messages once: with
// the answered interaction (InteractionGetState), to find its call. The first model turn starts from the rows Start
// committed, the step that puts the question reuses the messages the model
// turn committed, and the resumed model turn the messages the answer's
// transition committed.
func TestCycleMessageReads(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "reads.db"), nil)
	require.NoError(t, err)
	counting := &readCountingStore{Store: st}
	r, err := agent.New(agent.Options{Store: counting, Tools: tool.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Agents: []*agent.Agent{{Provider: zeroModel(), Tools: tool.Allowlist{api.ToolAskUser}}}})
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Shutdown()
		st.Close()
	})
	bb := &benchBundle{runner: r, st: st}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, _, err = bb.pause(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 0, counting.messageLists.Load(), "start → question: no read")

	counting.messageLists.Store(0)
	require.NoError(t, bb.cycle(ctx))
	require.EqualValues(t, 1, counting.messageLists.Load(), "a whole cycle")
}

// Events follows commits of another process on the same SQLite file, which
// wake no subscriber here: it reads the log again every EventPoll.
func TestEventsFollowAnotherProcessOnTheSameFile(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "two.db")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	here, err := sqlite.Open(ctx, db, nil)
	require.NoError(t, err)
	other, err := sqlite.Open(ctx, db, nil)
	require.NoError(t, err)
	r, err := agent.New(agent.Options{Store: here, Tools: tool.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		EventPoll: 20 * time.Millisecond, Agents: []*agent.Agent{{Provider: zeroModel(), Tools: tool.Allowlist{api.ToolAskUser}}}})
	require.NoError(t, err)
	t.Cleanup(func() {
		r.Shutdown()
		here.Close()
		other.Close()
	})
	res, _, err := (&benchBundle{runner: r, st: here}).pause(ctx)
	require.NoError(t, err)
	evs, err := here.EventList(ctx, &store.EventListParams{SessionID: res.SessionID, Limit: 1000})
	require.NoError(t, err)
	last := evs[len(evs)-1].Seq

	// Events from the one before the last: once the last is yielded, the
	// replay's read is done and only a wake-up or the poll reads again.
	got := make(chan agent.Event, 2)
	go func() {
		for ev, err := range r.Events(ctx, res.SessionID, last-1) {
			if err != nil {
				return
			}
			got <- ev
		}
	}()
	select {
	case ev := <-got:
		require.Equal(t, last, ev.Seq)
	case <-ctx.Done():
		t.Fatal("no replay")
	}
	// The other "process" appends an event; nothing in this one is woken.
	require.NoError(t, other.InTx(ctx, func(tx store.Tx) error {
		_, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: res.SessionID, Name: "run_status", Data: []byte(`{"status":"waiting_input"}`)})
		return err
	}))
	select {
	case ev := <-got:
		require.Equal(t, last+1, ev.Seq)
		require.Equal(t, "run_status", ev.Name)
	case <-ctx.Done():
		t.Fatal("the other process's event never reached Events")
	}
}
