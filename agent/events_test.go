package agent_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
)

// Runner.Events replays a session's log with typed payloads and then follows
// it live; a second reader after a Seq sees exactly the rest.
func TestRunnerEvents(t *testing.T) {
	t.Parallel()
	b := setupRace(t, raceDrivers(t)["sqlite"], scriptModel([]model.ToolCall{{Name: askuser.ToolAskUser, Arguments: raceAsk}}))
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
				_, err := b.runner.Continue(b.ctx, agent.ContinueParams{Owner: "alice", SessionID: res.SessionID, RequestID: p.ID, Answer: askuser.Answer{Selections: []string{"b"}}})
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
