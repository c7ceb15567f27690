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
	"github.com/lubanhq/luban/askuser"
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

func (s *readCountingStore) MessageList(ctx context.Context, sessionID string) ([]*store.Message, error) {
	s.messageLists.Add(1)
	return s.Store.MessageList(ctx, sessionID)
}

// A whole cycle in a new session reads the session's messages twice:
// finding the answered call, the resumed model turn. The first model turn
// starts from the rows Start committed, and the step that puts the question
// reuses the messages the model turn committed.
func TestCycleMessageReads(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "reads.db"), nil)
	require.NoError(t, err)
	counting := &readCountingStore{Store: st}
	r, err := agent.New(agent.Options{Store: counting, Tools: tool.NewRegistry(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Agents: []*agent.Agent{{Provider: zeroModel(), Tools: tool.Allowlist{askuser.ToolAskUser}}}})
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
	require.EqualValues(t, 2, counting.messageLists.Load(), "a whole cycle")
}
