package agent_test

import (
	"context"
	"encoding/json"
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// payloadRun is the RunID field of a decoded payload, "" for a payload
// without one.
func payloadRun(p any) string {
	v := reflect.ValueOf(p)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return ""
	}
	if f := v.FieldByName("RunID"); f.IsValid() && f.Kind() == reflect.String {
		return f.String()
	}
	return ""
}

// Runner.Events reads an event's run from its row, not by decoding its
// data: an event whose data does not decode still carries its run to the
// reader (the SSE stream's ?runId filter ends on it), and a payload's
// runId text does not stand in for the row's.
func TestRunnerEventsRunFromTheRow(t *testing.T) {
	t.Parallel()
	b := setupRace(t, raceDrivers(t)["sqlite"], scriptModel())
	res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
	require.NoError(t, err)
	b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)
	for _, p := range []*store.EventAppendParams{
		{SessionID: res.SessionID, Name: api.EventDone, Data: json.RawMessage(`not json`), RunID: "run_row", Now: time.Now()},
		{SessionID: res.SessionID, Name: api.EventDone, Data: json.RawMessage(`{"runId":"run_data","status":"completed"}`), Now: time.Now()},
	} {
		_, err := b.st.EventAppend(b.ctx, p)
		require.NoError(t, err)
	}
	var runs []string
	for ev, err := range b.runner.Events(b.ctx, res.SessionID, 0) {
		require.NoError(t, err)
		if ev.Name != api.EventDone {
			continue
		}
		runs = append(runs, ev.RunID())
		if len(runs) == 3 {
			break
		}
	}
	require.Equal(t, []string{res.RunID, "run_row", ""}, runs)
}

// BenchmarkEventsDelivery reads a session's log of 500 events through
// Runner.Events: "relay" is what a subscriber costs now (the SSE stream
// relays Data and filters by RunID), "decode" adds the Payload decode that
// every subscriber paid per event before the run id travelled with the
// event. An op is one pass over the 500; the */event metrics are per
// delivered event.
func BenchmarkEventsDelivery(b *testing.B) {
	bb := setupBench(b)
	ctx := context.Background()
	res, err := bb.runner.Start(ctx, agent.StartParams{Owner: "alice", Message: "hi"})
	require.NoError(b, err)
	require.NoError(b, waitFor(ctx, bb.st, res.SessionID, func() (bool, error) {
		run, err := bb.st.RunGet(ctx, res.RunID)
		return err == nil && run.Status == store.RunWaitingInput, err
	}))
	evs, err := bb.st.EventList(ctx, &store.EventListParams{SessionID: res.SessionID})
	require.NoError(b, err)
	for i := len(evs); i < 500; i++ {
		ev := evs[i%len(evs)]
		_, err := bb.st.EventAppend(ctx, &store.EventAppendParams{SessionID: res.SessionID, Name: ev.Name, Data: ev.Data, RunID: ev.RunID, Now: time.Now()})
		require.NoError(b, err)
	}
	const n = 500
	for _, mode := range []string{"relay", "decode"} {
		b.Run(mode, func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				got := 0
				for ev, err := range bb.runner.Events(ctx, res.SessionID, 0) {
					if err != nil {
						b.Fatal(err)
					}
					if mode == "decode" && ev.Payload() == nil {
						b.Fatalf("event %s does not decode", ev.Name)
					}
					if ev.RunID() == "x" {
						b.Fatal("no such run")
					}
					if got++; got == n {
						break
					}
				}
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(b.N*n), "allocs/event")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N*n), "B/event")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/event")
		})
	}
}

// Runner.Events replays a session's log with typed payloads and then follows
// it live; a second reader after a Seq sees exactly the rest.
func TestRunnerEvents(t *testing.T) {
	t.Parallel()
	b := setupRace(t, raceDrivers(t)["sqlite"], scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}))
	res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
	require.NoError(t, err)
	var names []string
	var seqs []int64
	var req *api.InputRequest
	answered := false
	for ev, err := range b.runner.Events(b.ctx, res.SessionID, 0) {
		require.NoError(t, err)
		names = append(names, ev.Name)
		seqs = append(seqs, ev.Seq)
		require.NotNil(t, ev.Payload(), "event %s is typed", ev.Name)
		require.Equal(t, payloadRun(ev.Payload()), ev.RunID(), "event %s: the row's run is the payload's runId", ev.Name)
		switch p := ev.Payload().(type) {
		case *api.SessionEvent:
			require.Equal(t, res.RunID, p.RunID)
			require.Equal(t, res.RunID, ev.RunID())
		case *api.InputRequest:
			req = p
			require.Equal(t, res.RunID, ev.RunID())
			if !answered {
				answered = true
				// Answered while the reader waits: the rest arrives live.
				_, err := b.runner.Resolve(b.ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: p.ID, Answer: api.ContinueRequest{Selections: []string{"b"}}})
				require.NoError(t, err)
			}
		case *api.Receipt:
			require.Equal(t, req.ID, p.RequestID)
			require.Equal(t, []string{"b"}, p.Selections)
		}
		if ev.Name == api.EventDone {
			require.Equal(t, api.RunStatus("completed"), ev.Payload().(*api.DoneEvent).Status)
			break
		}
	}
	require.Equal(t, []string{"session", "message", "message", "tool_call", "user_input_required", "user_input_resolved", "tool_result", "message", "done"}, names)
	for i := 1; i < len(seqs); i++ {
		require.Equal(t, seqs[i-1]+1, seqs[i])
	}
	var rest []string
	for ev, err := range b.runner.Events(b.ctx, res.SessionID, seqs[4]) {
		require.NoError(t, err)
		rest = append(rest, ev.Name)
		if ev.Name == api.EventDone {
			break
		}
	}
	require.Equal(t, names[5:], rest)
}

// Streamed text lasts in the log until its message commits: a reader
// following the run live sees the deltas (message_delta and
// reasoning_delta) and then the message; the message's transaction deletes
// them, so a replay, from the start or from after a delta (Last-Event-ID),
// shows the message alone, byte for byte as the live reader saw it.
func TestStreamedDeltasLastUntilTheMessage(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			seen := make(chan struct{})
			p := model.ProviderFunc{ProviderName: "test:stream", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
				req.OnReasoning("想一想")
				onDelta("从前有座山，")
				// Both batches commit on their timers while the call
				// waits for the reader to have seen them.
				select {
				case <-seen:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				onDelta("山里有座庙。")
				return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "从前有座山，山里有座庙。",
					Reasoning: &model.Reasoning{Text: "想一想，再想"}}, FinishReason: "stop"}, nil
			}}
			b := setupRace(t, newStore, p)
			res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "讲个故事"})
			require.NoError(t, err)
			var live []agent.Event
			var deltaSeq int64
			for ev, err := range b.runner.Events(b.ctx, res.SessionID, 0) {
				require.NoError(t, err)
				live = append(live, ev)
				switch ev.Name {
				case api.EventMessageDelta, api.EventReasoningDelta:
					deltaSeq = ev.Seq
					if n := len(named(live, api.EventMessageDelta)) + len(named(live, api.EventReasoningDelta)); n == 2 {
						close(seen)
					}
				}
				if ev.Name == api.EventDone {
					break
				}
			}
			// The text after the wait streams as a batch of its own only when
			// its 25 ms timer fires before the model call returns (a loaded
			// machine); either way the deltas are the message's text in order.
			deltas := named(live, api.EventMessageDelta)
			require.NotEmpty(t, deltas, "the live reader saw the text stream")
			require.LessOrEqual(t, len(deltas), 2)
			require.Equal(t, "从前有座山，", deltas[0].Payload().(*api.MessageDeltaEvent).Delta)
			if len(deltas) == 2 {
				require.Equal(t, "山里有座庙。", deltas[1].Payload().(*api.MessageDeltaEvent).Delta)
			}
			require.Len(t, named(live, api.EventReasoningDelta), 1)
			msgs := named(live, api.EventMessage)
			require.Len(t, msgs, 2)
			final := msgs[1]
			require.Equal(t, &api.MessageEvent{MessageID: final.Payload().(*api.MessageEvent).MessageID, Role: "assistant",
				Content: "从前有座山，山里有座庙。", Reasoning: "想一想，再想"}, final.Payload(), "the message has the whole text; the rest never streamed")

			replay := func(after int64) []agent.Event {
				var out []agent.Event
				for ev, err := range b.runner.Events(b.ctx, res.SessionID, after) {
					require.NoError(t, err)
					out = append(out, ev)
					if ev.Name == api.EventDone {
						break
					}
				}
				return out
			}
			all := replay(0)
			require.Empty(t, named(all, api.EventMessageDelta), "the message's commit deleted its deltas")
			require.Empty(t, named(all, api.EventReasoningDelta))
			require.Len(t, all, len(live)-len(deltas)-1)
			for _, ev := range all {
				if ev.Seq == final.Seq {
					require.Equal(t, string(final.Data), string(ev.Data), "replayed byte for byte")
				}
			}
			rest := replay(deltaSeq)
			require.Equal(t, api.EventMessage, rest[0].Name, "a reader resuming after a delta gets the message")
			require.Equal(t, final.Seq, rest[0].Seq)
			require.Equal(t, string(final.Data), string(rest[0].Data))
		})
	}
}

// named is the events of evs called name.
func named(evs []agent.Event, name string) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Name == name {
			out = append(out, e)
		}
	}
	return out
}
