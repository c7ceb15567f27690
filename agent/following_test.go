package agent_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store/sqlite"
)

// eventReads is how many reads of a session's event log st made so far.
func eventReads(st *sqlite.Store) int64 {
	var n int64
	for q, c := range st.ReadsByQuery() {
		if strings.Contains(q, "JOIN events e") {
			n += c
		}
	}
	return n
}

// A stream that follows the session from before the start's commit
// (StartParams.Follow) yields the run's events, pause and answer and end
// included, without reading the event log, and they are what the log
// holds, byte for byte; a continuation followed from before the answer
// (Runner.Follow) too.
func TestFollowedStreamReadsNoEvents(t *testing.T) {
	t.Parallel()
	b := setupRace(t, raceDrivers(t)["sqlite"], scriptModel([]model.ToolCall{{Name: "ask_user", Arguments: `{"title":"Which colour?","mode":"single","options":[{"id":"red","label":"Red"},{"id":"blue","label":"Blue"}]}`}}))
	sq := b.st.Store.(*sqlite.Store)

	follow := b.runner.Follow("")
	defer follow.Close()
	res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi", Follow: follow})
	require.NoError(t, err)
	before := eventReads(sq)
	var got []agent.Event
	var requestID string
	for ev, err := range follow.Events(b.ctx, res.SessionID, res.AfterSeq) {
		require.NoError(t, err)
		got = append(got, ev)
		if ev.Name == api.EventUserInputRequired {
			requestID = ev.Payload().(*api.InputRequest).ID
			break
		}
	}
	require.Equal(t, before, eventReads(sq), "the start's and the pause's events were handed, not read")

	cont := b.runner.Follow(res.SessionID)
	defer cont.Close()
	c, err := b.runner.Resolve(b.ctx, agent.ResolveParams{By: "alice", SessionID: res.SessionID, RequestID: requestID,
		Answer: api.ContinueRequest{Selections: []string{"red"}}, Surface: agent.SurfaceContinue})
	require.NoError(t, err)
	before = eventReads(sq)
	for ev, err := range cont.Events(b.ctx, res.SessionID, c.AfterSeq) {
		require.NoError(t, err)
		got = append(got, ev)
		if ev.Name == api.EventDone {
			break
		}
	}
	require.Equal(t, before, eventReads(sq), "the answer's and the end's events were handed, not read")

	var logged []agent.Event
	for ev, err := range b.runner.Events(b.ctx, res.SessionID, res.AfterSeq) {
		require.NoError(t, err)
		logged = append(logged, ev)
		if ev.Name == api.EventDone {
			break
		}
	}
	require.Greater(t, eventReads(sq), before, "Runner.Events reads the log")
	require.Equal(t, len(logged), len(got))
	for i := range logged {
		require.Equal(t, logged[i].Seq, got[i].Seq)
		require.Equal(t, logged[i].Name, got[i].Name)
		require.Equal(t, string(logged[i].Data), string(got[i].Data), "event %d (%s)", i, got[i].Name)
		require.Equal(t, logged[i].RunID(), got[i].RunID())
		require.True(t, logged[i].At.Equal(got[i].At))
	}
}
