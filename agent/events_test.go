package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
)

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
		require.NotNil(t, ev.Payload, "event %s is typed", ev.Name)
		switch p := ev.Payload.(type) {
		case *api.SessionEvent:
			require.Equal(t, res.RunID, p.RunID)
			require.Equal(t, res.RunID, ev.RunID())
		case *api.InputRequest:
			req = p
			require.Equal(t, res.RunID, ev.RunID())
			if !answered {
				answered = true
				// Answered while the reader waits: the rest arrives live.
				_, err := b.runner.Continue(b.ctx, agent.ContinueParams{Owner: "alice", SessionID: res.SessionID, RequestID: p.ID, Answer: api.Answer{Selections: []string{"b"}}})
				require.NoError(t, err)
			}
		case *api.Receipt:
			require.Equal(t, req.ID, p.RequestID)
			require.Equal(t, []string{"b"}, p.Selections)
		}
		if ev.Name == api.EventDone {
			require.Equal(t, api.RunStatus("completed"), ev.Payload.(*api.DoneEvent).Status)
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
			require.Equal(t, "从前有座山，", deltas[0].Payload.(*api.MessageDeltaEvent).Delta)
			if len(deltas) == 2 {
				require.Equal(t, "山里有座庙。", deltas[1].Payload.(*api.MessageDeltaEvent).Delta)
			}
			require.Len(t, named(live, api.EventReasoningDelta), 1)
			msgs := named(live, api.EventMessage)
			require.Len(t, msgs, 2)
			final := msgs[1]
			require.Equal(t, &api.MessageEvent{MessageID: final.Payload.(*api.MessageEvent).MessageID, Role: "assistant",
				Content: "从前有座山，山里有座庙。", Reasoning: "想一想，再想"}, final.Payload, "the message has the whole text; the rest never streamed")

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
