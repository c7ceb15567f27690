package server

// SSE benchmarks: encoding a session's event log as SSE frames
// (read from SQLite, written and flushed), the path every
// user_input_required takes to the page.
//
//	go test -run '^$' -bench . -benchmem ./server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
	"github.com/lubanhq/luban/tool"
)

type sseBundle struct {
	srv     *Server
	session string
	last    int64
}

// setupSSE stores a session whose log holds events: a card's worth of
// user_input_required payloads and small deltas.
func setupSSE(b *testing.B, events int) *sseBundle {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "sse.db"), nil)
	require.NoError(b, err)
	b.Cleanup(func() { st.Close() })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	noModel := model.ProviderFunc{ProviderName: "bench", Fn: func(context.Context, *model.Request, func(string)) (*model.Response, error) {
		return nil, io.EOF
	}}
	r, err := agent.New(agent.Options{Store: st, Tools: tool.NewRegistry(), Logger: log, Agents: []*agent.Agent{{Provider: noModel}}})
	require.NoError(b, err)
	srv, err := New(Options{Runner: r, Tokens: []string{"t"}, Logger: log})
	require.NoError(b, err)
	_, err = st.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_bench", Owner: "t", Now: time.Now()})
	require.NoError(b, err)
	card := json.RawMessage(`{"id":"ask_x","toolCallId":"call_x","sessionId":"sess_bench","runId":"run_x","tool":"ask_user","title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}],"createdAt":"2026-01-01T00:00:00Z","expiresAt":"2026-01-02T00:00:00Z","resumable":true}`)
	var last int64
	require.NoError(b, st.InTx(ctx, func(tx store.Tx) error {
		for i := range events {
			name, data := api.EventMessageDelta, json.RawMessage(`{"messageId":"msg_x","delta":"我需要问一下。"}`)
			if i%2 == 1 {
				name, data = api.EventUserInputRequired, card
			}
			ev, err := tx.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_bench", Name: name, Data: data, Now: time.Now()})
			if err != nil {
				return err
			}
			last = ev.Seq
		}
		return nil
	}))
	return &sseBundle{srv: srv, session: "sess_bench", last: last}
}

func benchStream(b *testing.B, events int) {
	bb := setupSSE(b, events)
	stop := func(ev agent.Event) bool { return ev.Seq == bb.last }
	req := httptest.NewRequest("GET", "/api/sessions/"+bb.session+"/events", nil)
	rec := httptest.NewRecorder()
	bb.srv.stream(rec, req, bb.session, 0, true, stop, nil)
	require.Equal(b, events, strings.Count(rec.Body.String(), "\nevent: "))
	b.ReportAllocs()
	b.SetBytes(int64(rec.Body.Len()))
	for b.Loop() {
		rec := httptest.NewRecorder()
		bb.srv.stream(rec, req, bb.session, 0, true, stop, nil)
	}
}

// BenchmarkSSEStream replays a session's log as SSE: 2 events (what a
// continue streams before the run pauses again) and 200 (a page refresh
// with Last-Event-ID 0 on a long session).
func BenchmarkSSEStream(b *testing.B) {
	b.Run("2_events", func(b *testing.B) { benchStream(b, 2) })
	b.Run("200_events", func(b *testing.B) { benchStream(b, 200) })
}

// BenchmarkRequest is one authenticated request through everything a
// request passes (ServeHTTP: the body's bounds, the observation, the
// routing, requireAuth) to a handler that reads nothing: GET /api/info.
func BenchmarkRequest(b *testing.B) {
	bb := setupSSE(b, 0)
	req := httptest.NewRequest("GET", "/api/info", nil)
	req.Header.Set("Authorization", "Bearer t")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		bb.srv.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatal(rec.Code, rec.Body.String())
		}
	}
}
