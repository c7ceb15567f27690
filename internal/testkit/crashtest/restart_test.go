package crashtest

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// apiError is the body of an error answer (docs/design.md §3).
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// With --db memory nothing survives: after a restart the pending request is
// gone with its session, and a continue for it gets 404 session_not_found,
// which the page words as "the session is not found (a server restarted
// without storage forgets it)" (docs/design.md §A.6.4 "仅展示不可续跑").
func TestMemoryRestartIsNotResumable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(askTurn("call_ask_1"))
	p1 := startProc(t, procOptions{Name: "p1", DB: "memory", Fake: b.fake})
	a, _ := chatUntilAsk(t, p1)
	require.Equal(t, true, getPending(t, p1, a.SessionID).Pending["resumable"])
	p1.Kill9()

	p2 := startProc(t, procOptions{Name: "p2", DB: "memory", Fake: b.fake})
	var e apiError
	require.Equal(t, http.StatusNotFound, p2.API.JSON("POST", "/api/chat/continue", map[string]any{
		"sessionId": a.SessionID, "requestId": a.RequestID, "selections": []string{"safe"}, "customInput": "", "cancelled": false}, &e))
	require.Equal(t, "session_not_found", e.Error.Code)
	require.Equal(t, http.StatusNotFound, p2.API.JSON("GET", "/api/interactions/pending?sessionId="+a.SessionID, nil, &e))
	require.Equal(t, "session_not_found", e.Error.Code)
	require.Len(t, b.fake.Requests(), 1, "nothing was resumed")
}

// A stored run whose agent no longer exists is shown honestly: pending with
// resumable false, and a continue gets 410 not_resumable without consuming
// the request. When the agent is back, the same request resumes.
func TestAgentGoneIsNotResumable(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(askTurn("call_ask_1"), endTurn())
	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Agent: "planner"})
	a, _ := chatUntilAsk(t, p1)
	before := getPending(t, p1, a.SessionID).Pending
	p1.Term()

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake, Agent: "coder"})
	pv := getPending(t, p2, a.SessionID)
	require.NotNil(t, pv.Pending)
	require.Equal(t, false, pv.Pending["resumable"])
	require.Equal(t, a.RequestID, pv.Pending["id"])
	var e apiError
	require.Equal(t, http.StatusGone, p2.API.JSON("POST", "/api/chat/continue", map[string]any{
		"sessionId": a.SessionID, "requestId": a.RequestID, "selections": []string{"safe"}, "customInput": "", "cancelled": false}, &e))
	require.Equal(t, "not_resumable", e.Error.Code)
	// The page and the terminal word not_resumable in their language
	// ("服务已重启，请重新发起任务", docs/design.md §4); the message is the English fallback.
	require.Contains(t, e.Error.Message, "cannot be resumed")
	require.NotNil(t, getPending(t, p2, a.SessionID).Pending, "a refused continue consumes nothing")
	p2.Term()

	p3 := startProc(t, procOptions{Name: "p3", DB: b.db, Fake: b.fake, Agent: "planner"})
	requirePendingSame(t, before, getPending(t, p3, a.SessionID).Pending)
	evs := answer(t, p3, a)
	require.Equal(t, "done", evs[len(evs)-1].Name)
	checkRun(t, p3, a.SessionID, "completed", b.fake)
	require.Len(t, b.fake.Requests(), 2)
}

// Event ids keep increasing per session across two restarts (a kill -9 and
// a SIGTERM), and a client reconnecting with an id from before the first
// restart gets exactly the events it missed, byte for byte.
func TestEventIDsAcrossRestarts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(askTurn("call_ask_1"), askTurn("call_ask_2"), endTurn())

	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake})
	a1, live := chatUntilAsk(t, p1)
	p1.Kill9()

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake})
	evs := answer(t, p2, a1)
	require.Equal(t, "user_input_required", evs[len(evs)-1].Name)
	live = append(live, evs...)
	a2 := decodeAsk(t, evs[len(evs)-1])
	require.Equal(t, "call_ask_2", a2.Raw["toolCallId"])
	p2.Term()

	p3 := startProc(t, procOptions{Name: "p3", DB: b.db, Fake: b.fake})
	evs = answer(t, p3, a2)
	require.Equal(t, "done", evs[len(evs)-1].Name)
	live = append(live, evs...)
	for i, e := range live {
		require.Equal(t, int64(i+1), e.ID, "live event %d (%s)", i, e.Name)
	}

	// The log keeps all but the deltas a slow stream committed: they are
	// deleted with their message (docs/design.md §3: ids may skip deleted deltas).
	from := live[1].ID // seen by p1's client, before the first restart
	var kept []lubantest.Event
	for _, e := range live[2:] {
		if e.Name != "message_delta" && e.Name != "reasoning_delta" {
			kept = append(kept, e)
		}
	}
	replay := p3.API.EventsUntil(a1.SessionID, from, "done", waitEvents)
	require.Len(t, replay, len(kept))
	for i, e := range replay {
		want := kept[i]
		require.Equal(t, want.ID, e.ID)
		require.Equal(t, want.Name, e.Name)
		require.Equal(t, string(want.Data), string(e.Data))
	}
	checkRun(t, p3, a1.SessionID, "completed", b.fake)
}

// SIGTERM while a model call is in flight: open streams end cleanly (at an
// event boundary), the process exits 0, the run keeps its checkpoint and the
// next start makes the call again with the same body and finishes the run.
func TestSigtermCheckpointsInFlightRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := reference(t, askTurn("call_ask_1"), endTurn())
	b.fake.Push(askTurn("call_ask_1"))
	inflight, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.fake.SetHandler(func(*fakeopenai.Request) fakeopenai.Turn {
		once.Do(func() { close(inflight) })
		<-release
		return endTurn()
	})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake})
	a, _ := chatUntilAsk(t, p1)
	sub := p1.API.Events(a.SessionID, 0)
	resp, err := p1.Post("/api/chat/continue", continueBody(a.SessionID, a.RequestID))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	cont := p1.API.Open(resp, "p1-continue")
	ctx, cancel := context.WithTimeout(context.Background(), waitEvents)
	defer cancel()
	select {
	case <-inflight:
	case <-ctx.Done():
		t.Fatal("the model call after the answer never started")
	}

	p1.Term()
	contEvs, err := cont.All(waitEvents)
	require.NoError(t, err, "the continue stream ends cleanly")
	subEvs, err := sub.All(waitEvents)
	require.NoError(t, err, "the subscription ends cleanly")
	require.NotContains(t, lubantest.Names(contEvs), "done")
	require.NotContains(t, lubantest.Names(contEvs), "error")
	require.NotContains(t, lubantest.Names(subEvs), "error")
	close(release)

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake})
	rest := p2.API.EventsUntil(a.SessionID, lastID(subEvs), "done", waitEvents)
	lubantest.RequireNext(t, lastID(subEvs), rest[0])
	checkRun(t, p2, a.SessionID, "completed", b.fake)
	got := raws(b.fake.Requests())
	require.Len(t, got, 3)
	require.Equal(t, string(ref[1]), string(got[1]))
	require.Equal(t, string(ref[1]), string(got[2]), "the call made again after SIGTERM is byte-for-byte the one abandoned")
}

// At most one process drives a run: after a crash mid-stream, two processes
// start on the same database; exactly one of them makes the model call
// again, and the other one can take the answer and finish the run.
func TestOneDriverAfterCrash(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.fake.Push(talkAskTurn("call_ask_1"), talkAskTurn("call_ask_1"), endTurn())
	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Fault: "model_stream:2"})
	seen, last := chatMayDie(p1)
	p1.WaitFault()

	// Both start before p1's 1s lease expires (each start takes well under it);
	// their sweepers race for the run and one conditional write wins. Their
	// own leases are long: a live driver whose heartbeats a loaded machine
	// holds back past a 1s lease loses the run to the other one, as the
	// design allows, which is not the race this test is about.
	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake, Lease: "1m"})
	p3 := startProc(t, procOptions{Name: "p3", DB: b.db, Fake: b.fake, Lease: "1m"})
	s := struct{ SessionID string }{sessionAfterCrash(t, seen, p2)}

	rest := p2.API.EventsUntil(s.SessionID, last, "user_input_required", waitEvents)
	a := decodeAsk(t, rest[len(rest)-1])
	require.Len(t, b.fake.Requests(), 2, "one crashed call and exactly one call made again")

	evs := answer(t, p3, a)
	require.Equal(t, "done", evs[len(evs)-1].Name)
	checkRun(t, p3, s.SessionID, "completed", b.fake)
	require.Len(t, b.fake.Requests(), 3)
}
