package agent_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model/openai"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

// brokenStore fails every assistant message with an error that carries what
// a database says about itself.
type brokenStore struct{ store.Store }

var errDatabase = errors.New(`postgres: message insert: ERROR: invalid byte sequence for encoding "UTF8": 0x00 (SQLSTATE 22021) at 10.0.0.7:5432`)

func (s brokenStore) InTx(ctx context.Context, fn func(tx store.Tx) error) error {
	return s.Store.InTx(ctx, func(tx store.Tx) error { return fn(brokenTx{tx}) })
}

type brokenTx struct{ store.Tx }

func (tx brokenTx) MessageInsert(ctx context.Context, p *store.MessageInsertParams) (*store.Message, error) {
	if p.Role == "assistant" {
		return nil, errDatabase
	}
	return tx.Tx.MessageInsert(ctx, p)
}

// A run that fails on a store error ends with error {code: internal_error}
// whose message says nothing of the database (docs/design.md §3: internal errors
// are not explained to clients); the raw error goes to the server log only.
func TestInternalErrorDoesNotLeakTheDatabaseError(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	fake.SetHandler(func(*fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "好"} })
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "luban.db"), nil)
	require.NoError(t, err)
	prov, err := openai.New(openai.Options{BaseURL: fake.URL(), APIKey: "sk-test", Model: "fake"})
	require.NoError(t, err)
	srv := lubantest.Start(t, lubantest.Options{Store: brokenStore{st}, Heartbeat: time.Hour, Provider: prov})
	evs, err := srv.Chat("", "你好").All(30 * time.Second)
	require.NoError(t, err)
	ev, ok := lubantest.Find(evs, "error")
	require.True(t, ok, "events: %v", lubantest.Names(evs))
	var e struct{ Code, Message string }
	require.NoError(t, ev.Decode(&e))
	require.Equal(t, "internal_error", e.Code)
	for _, leak := range []string{"SQLSTATE", "postgres", "10.0.0.7", "message insert"} {
		require.NotContains(t, e.Message, leak)
	}
	require.NotEmpty(t, e.Message)
}
