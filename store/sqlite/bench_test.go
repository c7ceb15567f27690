package sqlite_test

// Store benchmarks: one transaction of each kind a run's step
// commits, with the same statements agent/ issues, on a real WAL file.
//
//	go test -run '^$' -bench . -benchmem ./store/sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

type benchBundle struct {
	st  *sqlite.Store
	ctx context.Context
	n   int
}

func setupBench(b *testing.B) *benchBundle {
	b.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"), nil)
	require.NoError(b, err)
	b.Cleanup(func() { st.Close() })
	return &benchBundle{st: st, ctx: context.Background()}
}

var benchRequest = json.RawMessage(`{"id":"ask_x","toolCallId":"call_x","sessionId":"sess_x","runId":"run_x","tool":"ask_user","title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}],"createdAt":"2026-01-01T00:00:00Z","expiresAt":"2026-01-02T00:00:00Z","resumable":false}`)

// start commits what agent.Start commits: session, run, session event, user
// message, message event, session status.
func (bb *benchBundle) start(tb testing.TB) (sess, run string) {
	bb.n++
	sess, run = fmt.Sprintf("sess_%d", bb.n), fmt.Sprintf("run_%d", bb.n)
	now := time.Now()
	require.NoError(tb, bb.st.InTx(bb.ctx, func(tx store.Tx) error {
		if _, err := tx.SessionCreate(bb.ctx, &store.SessionCreateParams{ID: sess, Owner: "bench", Title: "帮我改代码", Now: now}); err != nil {
			return err
		}
		if _, err := tx.RunInsert(bb.ctx, &store.RunInsertParams{ID: run, SessionID: sess, Agent: "default", LeaseOwner: "inst", LeaseUntil: now.Add(time.Minute), Now: now}); err != nil {
			return err
		}
		if _, err := tx.EventAppend(bb.ctx, &store.EventAppendParams{SessionID: sess, Name: "session", Data: json.RawMessage(`{"sessionId":"` + sess + `","runId":"` + run + `"}`), Now: now}); err != nil {
			return err
		}
		if _, err := tx.MessageInsert(bb.ctx, &store.MessageInsertParams{ID: "msg_u" + sess, SessionID: sess, RunID: run, Role: "user", Content: "帮我改代码", Now: now}); err != nil {
			return err
		}
		if _, err := tx.EventAppend(bb.ctx, &store.EventAppendParams{SessionID: sess, Name: "message", Data: json.RawMessage(`{"messageId":"m","role":"user","content":"帮我改代码"}`), Now: now}); err != nil {
			return err
		}
		return tx.SessionSetStatus(bb.ctx, &store.SessionSetStatusParams{ID: sess, Status: "running", Now: now})
	}))
	return sess, run
}

// BenchmarkStepTx measures one committed transaction per kind of step.
func BenchmarkStepTx(b *testing.B) {
	b.Run("start", func(b *testing.B) {
		bb := setupBench(b)
		b.ReportAllocs()
		for b.Loop() {
			bb.start(b)
		}
	})
	b.Run("ask", func(b *testing.B) {
		bb := setupBench(b)
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			sess, run := bb.start(b)
			b.StartTimer()
			now := time.Now()
			err := bb.st.InTx(bb.ctx, func(tx store.Tx) error {
				if _, err := tx.RunPause(bb.ctx, &store.RunPauseParams{ID: run, LeaseOwner: "inst", Now: now}); err != nil {
					return err
				}
				if _, err := tx.InteractionInsert(bb.ctx, &store.InteractionInsertParams{ID: "ask_" + sess, SessionID: sess, RunID: run, ToolCallID: "call_" + sess, Tool: "ask_user", Request: benchRequest, Now: now, ExpiresAt: now.Add(24 * time.Hour)}); err != nil {
					return err
				}
				if _, err := tx.EventAppend(bb.ctx, &store.EventAppendParams{SessionID: sess, Name: "user_input_required", Data: benchRequest, Now: now}); err != nil {
					return err
				}
				if err := tx.AuditInsert(bb.ctx, &store.AuditInsertParams{SessionID: sess, RequestID: "ask_" + sess, ToolCallID: "call_" + sess, RunID: run, Action: "requested", Summary: json.RawMessage(`{"mode":"single"}`), Now: now}); err != nil {
					return err
				}
				if err := tx.TraceInsert(bb.ctx, &store.TraceInsertParams{SessionID: sess, RunID: run, Kind: "interaction", Data: json.RawMessage(`{"action":"requested"}`), Now: now}); err != nil {
					return err
				}
				return tx.SessionSetStatus(bb.ctx, &store.SessionSetStatusParams{ID: sess, Status: "waiting_input", Now: now})
			})
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("event_append_autocommit", func(b *testing.B) {
		bb := setupBench(b)
		sess, _ := bb.start(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := bb.st.EventAppend(bb.ctx, &store.EventAppendParams{SessionID: sess, Name: "message_delta", Data: json.RawMessage(`{"messageId":"m","delta":"好的"}`), Now: time.Now()}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("message_list_4", func(b *testing.B) {
		bb := setupBench(b)
		sess, run := bb.start(b)
		for i := range 3 {
			_, err := bb.st.MessageInsert(bb.ctx, &store.MessageInsertParams{ID: fmt.Sprintf("m%d", i), SessionID: sess, RunID: run, Role: "assistant", Content: "我需要问一下。", Now: time.Now()})
			require.NoError(b, err)
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := bb.st.MessageList(bb.ctx, sess); err != nil {
				b.Fatal(err)
			}
		}
	})
}
