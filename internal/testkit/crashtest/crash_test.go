package crashtest

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

type testBundle struct {
	fake *fakeopenai.Server
	db   string
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{fake: fakeopenai.New(t), db: filepath.Join(t.TempDir(), "luban.db")}
}

// requirePendingSame: after a restart the pending request is the very one
// that was asked (id, toolCallId, options, createdAt, expiresAt, ...) and is
// resumable (issue 5, docs/design.md §A.6.4 "服务重启").
func requirePendingSame(t *testing.T, before, after map[string]any) {
	t.Helper()
	require.NotNil(t, after, "the pending request is gone after the restart")
	require.Equal(t, true, after["resumable"])
	require.Equal(t, jsonOf(before), jsonOf(after))
}

// (a) kill -9 while the run waits for input.
func TestKillWhileWaitingForInput(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := reference(t, askTurn("call_ask_1"), endTurn())
	b.fake.Push(askTurn("call_ask_1"), endTurn())

	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake})
	a, _ := chatUntilAsk(t, p1)
	before := getPending(t, p1, a.SessionID)
	require.Equal(t, jsonOf(a.Raw), jsonOf(before.Pending), "pending equals the streamed request")
	p1.Kill9()

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake})
	after := getPending(t, p2, a.SessionID)
	requirePendingSame(t, before.Pending, after.Pending)
	evs := answer(t, p2, a)
	require.Equal(t, "done", evs[len(evs)-1].Name)

	checkRun(t, p2, a.SessionID, "completed", b.fake)
	got := raws(b.fake.Requests())
	require.Len(t, got, 2)
	require.Equal(t, string(ref[0]), string(got[0]))
	require.Equal(t, string(ref[1]), string(got[1]), "exact resume: the request after the restart is the one a process that never stopped sends")
}

// (b) the process dies right after the question was committed, before its
// event is known to have reached the client.
func TestCrashAfterInteractionCommitted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := reference(t, askTurn("call_ask_1"), endTurn())
	b.fake.Push(askTurn("call_ask_1"), endTurn())

	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Fault: "interaction_committed"})
	seen, last := chatMayDie(p1)
	p1.WaitFault()

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake})
	s := struct{ SessionID string }{sessionAfterCrash(t, seen, p2)}
	pv := getPending(t, p2, s.SessionID)
	require.NotNil(t, pv.Pending)
	require.Equal(t, true, pv.Pending["resumable"])
	require.Equal(t, "call_ask_1", pv.Pending["toolCallId"])

	// Whether the question left before the SIGKILL is a race; either way the
	// client gets it: from the stream it read, or by reconnecting with the
	// last id it saw, which replays exactly what it missed.
	var a ask
	if q, ok := lubantest.Find(seen, "user_input_required"); ok {
		a = decodeAsk(t, q)
	} else {
		missed := p2.API.EventsUntil(s.SessionID, last, "user_input_required", waitEvents)
		lubantest.RequireNext(t, last, missed[0])
		a = decodeAsk(t, missed[len(missed)-1])
	}
	requirePendingSame(t, a.Raw, pv.Pending)

	evs := answer(t, p2, a)
	require.Equal(t, "done", evs[len(evs)-1].Name)
	checkRun(t, p2, a.SessionID, "completed", b.fake)
	got := raws(b.fake.Requests())
	require.Len(t, got, 2)
	require.Equal(t, string(ref[1]), string(got[1]))
}

// (c1) the process dies inside the continue, after the answer was committed
// and before the next model call started: the client's request fails; the
// answer is not lost and the next process makes the model call.
func TestCrashAfterAnswerCommitted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := reference(t, askTurn("call_ask_1"), endTurn())
	b.fake.Push(askTurn("call_ask_1"), endTurn())

	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Fault: "answer_committed"})
	a, evs := chatUntilAsk(t, p1)
	resp, err := p1.Post("/api/chat/continue", continueBody(a.SessionID, a.RequestID))
	if err == nil {
		// Whatever arrived, the process dies before the continuation streams.
		_, _ = p1.API.Open(resp, "p1-continue").All(waitEvents)
	}
	p1.WaitFault()
	require.Len(t, b.fake.Requests(), 1, "no model call before the crash")

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake})
	pv := getPending(t, p2, a.SessionID)
	require.Nil(t, pv.Pending)
	require.NotNil(t, pv.Last, "the receipt survives")
	require.Equal(t, a.RequestID, pv.Last["requestId"])
	require.Equal(t, "answered", pv.Last["status"])
	require.Equal(t, []any{"safe"}, pv.Last["selections"])
	require.Equal(t, "先看测试", pv.Last["customInput"])

	// The run left running by p1 is taken over when its lease expires.
	rest := p2.API.EventsUntil(a.SessionID, lastID(evs), "done", waitEvents)
	names := lubantest.Names(rest)
	require.Equal(t, []string{"user_input_resolved", "tool_result"}, names[:2], "what p1 committed before dying")

	// A client that retries its continue learns it was already taken.
	var dup struct {
		Error struct {
			Code    string         `json:"code"`
			Receipt map[string]any `json:"receipt"`
		} `json:"error"`
	}
	require.Equal(t, http.StatusConflict, p2.API.JSON("POST", "/api/chat/continue", map[string]any{
		"sessionId": a.SessionID, "requestId": a.RequestID, "selections": []string{"implement"}, "customInput": "", "cancelled": false}, &dup))
	require.Equal(t, "already_resolved", dup.Error.Code)
	require.Equal(t, []any{"safe"}, dup.Error.Receipt["selections"])

	checkRun(t, p2, a.SessionID, "completed", b.fake)
	got := raws(b.fake.Requests())
	require.Len(t, got, 2)
	require.Equal(t, string(ref[1]), string(got[1]), "exact resume after a crash inside continue")
}

// (c2) the process dies in the middle of the model call that follows the
// answer: the call is made again by the next process, with the same body.
func TestCrashDuringModelCallAfterAnswer(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := reference(t, askTurn("call_ask_1"), endTurn())
	b.fake.Push(askTurn("call_ask_1"), endTurn(), endTurn())

	// askTurn streams no text: the first delta of the session is the answer's.
	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Fault: "model_stream:1"})
	a, chat := chatUntilAsk(t, p1)
	// The answer is committed before the model call starts, but the SIGKILL
	// may come before the continuation's first bytes: the client keeps the
	// last id it saw, whichever stream it came from.
	last := lastID(chat)
	if resp, err := p1.Post("/api/chat/continue", continueBody(a.SessionID, a.RequestID)); err == nil && resp.StatusCode == http.StatusOK {
		if seen, l := readRest(p1.API.Open(resp, "p1-continue")); l > 0 {
			require.Equal(t, "user_input_resolved", seen[0].Name)
			last = l
		}
	}
	p1.WaitFault()

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake})
	pv := getPending(t, p2, a.SessionID)
	require.Nil(t, pv.Pending)
	require.Equal(t, "answered", pv.Last["status"])
	rest := p2.API.EventsUntil(a.SessionID, last, "done", waitEvents)
	lubantest.RequireNext(t, last, rest[0])

	checkRun(t, p2, a.SessionID, "completed", b.fake)
	got := raws(b.fake.Requests())
	require.Len(t, got, 3, "ask, the interrupted call, the call made again")
	require.Equal(t, string(ref[1]), string(got[1]))
	require.Equal(t, string(ref[1]), string(got[2]), "the call made again is byte-for-byte the interrupted one")
}

// (d) the process dies in the middle of a model stream (third text delta of
// the first call): the next process makes the call again and the run asks,
// waits and ends as if nothing happened.
func TestCrashMidModelStream(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ref := reference(t, talkAskTurn("call_ask_1"), endTurn())
	b.fake.Push(talkAskTurn("call_ask_1"), talkAskTurn("call_ask_1"), endTurn())

	p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Fault: "model_stream:3"})
	seen, last := chatMayDie(p1)
	p1.WaitFault()

	p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake})
	s := struct{ SessionID string }{sessionAfterCrash(t, seen, p2)}
	rest := p2.API.EventsUntil(s.SessionID, last, "user_input_required", waitEvents)
	a := decodeAsk(t, rest[len(rest)-1])
	pv := getPending(t, p2, s.SessionID)
	requirePendingSame(t, a.Raw, pv.Pending)

	evs := answer(t, p2, a)
	require.Equal(t, "done", evs[len(evs)-1].Name)
	checkRun(t, p2, s.SessionID, "completed", b.fake)
	// Streamed text is committed in batches (agent: deltaFlushInterval), so
	// the dead process left at most one abandoned message id in the log —
	// a message_delta without its "message" — and what it committed is a
	// prefix of what the call made again streamed and stored: the page drops
	// it when the new id arrives. Nothing else is half-applied.
	log := p2.API.EventsUntil(s.SessionID, 0, "done", waitEvents)
	deltas, final := map[string]string{}, map[string]string{}
	for _, e := range log {
		var d struct{ MessageID, Role, Delta, Content string }
		require.NoError(t, e.Decode(&d))
		switch e.Name {
		case "message_delta":
			deltas[d.MessageID] += d.Delta
		case "message":
			if d.Role == "assistant" {
				final[d.MessageID] = d.Content
			}
		}
	}
	abandoned := 0
	for id, text := range deltas {
		if _, ok := final[id]; ok {
			continue
		}
		abandoned++
		prefixOfSome := false
		for _, c := range final {
			prefixOfSome = prefixOfSome || strings.HasPrefix(c, text)
		}
		require.True(t, prefixOfSome, "abandoned deltas %q are not a prefix of a stored message", text)
	}
	require.LessOrEqual(t, abandoned, 1)

	got := raws(b.fake.Requests())
	require.Len(t, got, 3)
	require.Equal(t, string(ref[0]), string(got[0]))
	require.Equal(t, string(ref[0]), string(got[1]), "the interrupted call is made again, byte for byte")
	require.Equal(t, string(ref[1]), string(got[2]))
}

// (e) the process dies while a non-idempotent tool runs: the next process
// does not run it again; its ToolResult says it was interrupted. An
// idempotent tool (list_files) is simply run again.
func TestCrashDuringToolCall(t *testing.T) {
	t.Parallel()
	const interrupted = "interrupted: the server stopped while this tool was running; it was not run again because it is not idempotent"
	noteTurn := fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_note_1", Name: "record_note", Arguments: `{"note":"deploy-42"}`}}}
	listTurn := fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_ls_1", Name: "list_files", Arguments: `{}`}}}

	run := func(t *testing.T, first fakeopenai.Turn, fault string) (*testBundle, *proc, string, string) {
		b := setup(t)
		ws := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(ws, "a.txt"), nil, 0o644))
		b.fake.Push(first, endTurn())
		p1 := startProc(t, procOptions{Name: "p1", DB: b.db, Fake: b.fake, Fault: fault, Workspace: ws})
		seen, last := chatMayDie(p1)
		if fault != "" {
			p1.WaitFault()
		}
		if fault == "" {
			require.Equal(t, "done", seen[len(seen)-1].Name)
			return b, p1, sessionAfterCrash(t, seen, p1), ws
		}
		p2 := startProc(t, procOptions{Name: "p2", DB: b.db, Fake: b.fake, Workspace: ws})
		sid := sessionAfterCrash(t, seen, p2)
		p2.API.EventsUntil(sid, last, "done", waitEvents)
		return b, p2, sid, ws
	}
	toolResult := func(tr transcript, id string) (string, bool) {
		for _, m := range tr.Messages {
			if m.Role == "tool" && m.ToolCallID == id {
				return m.Content, m.IsError
			}
		}
		return "", false
	}

	t.Run("not_idempotent_not_rerun", func(t *testing.T) {
		t.Parallel()
		b, p, sid, ws := run(t, noteTurn, "tool_running")
		tr := checkRun(t, p, sid, "completed", b.fake)
		content, isErr := toolResult(tr, "call_note_1")
		require.Equal(t, interrupted, content)
		require.True(t, isErr)
		notes, err := os.ReadFile(filepath.Join(ws, "luban-notes.txt"))
		require.True(t, os.IsNotExist(err), "record_note ran after the restart: %q", notes)
		reqs := b.fake.Requests()
		require.Len(t, reqs, 2)
		lastMsg := reqs[1].Messages[len(reqs[1].Messages)-1]
		require.Equal(t, "tool", lastMsg["role"])
		require.Equal(t, "call_note_1", lastMsg["tool_call_id"])
		require.Equal(t, interrupted, lastMsg["content"])
	})
	t.Run("not_idempotent_without_crash_runs_once", func(t *testing.T) {
		t.Parallel()
		b, p, sid, ws := run(t, noteTurn, "")
		tr := checkRun(t, p, sid, "completed", b.fake)
		content, isErr := toolResult(tr, "call_note_1")
		require.Equal(t, "noted", content)
		require.False(t, isErr)
		notes, err := os.ReadFile(filepath.Join(ws, "luban-notes.txt"))
		require.NoError(t, err)
		require.Equal(t, "deploy-42\n", string(notes))
	})
	t.Run("idempotent_rerun", func(t *testing.T) {
		t.Parallel()
		b, p, sid, _ := run(t, listTurn, "tool_running")
		tr := checkRun(t, p, sid, "completed", b.fake)
		content, isErr := toolResult(tr, "call_ls_1")
		require.Equal(t, "a.txt", content)
		require.False(t, isErr)
	})
}
