package crashtest

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// The conversation every scenario plays: one ask_user question, one answer,
// one final text. Tool call ids and texts come from the fake's script, so the
// model requests of two processes can be compared byte for byte.
const (
	userMessage = "帮我重构 store 包"
	askArgs     = `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}],"allowCustom":true}`
	answerBody  = `"selections":["safe"],"customInput":"先看测试","cancelled":false`
)

// askTurn asks one ask_user question and streams no text, so the first
// "model_stream" fault point of a session is in the model call after it.
func askTurn(id string) fakeopenai.Turn {
	return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: id, Name: "ask_user", Arguments: askArgs}}}
}

// talkAskTurn streams text in many 3-byte chunks, then asks.
func talkAskTurn(id string) fakeopenai.Turn {
	t := askTurn(id)
	t.Text = "Let me look at the package first, then I will ask you one question."
	t.ChunkBytes = 3
	return t
}

// endTurn ends the run.
func endTurn() fakeopenai.Turn {
	return fakeopenai.Turn{Text: "好的，先分析测试，再动手。"}
}

func continueBody(sessionID, requestID string) string {
	return `{"sessionId":"` + sessionID + `","requestId":"` + requestID + `",` + answerBody + `}`
}

// ask is the user_input_required a client saw.
type ask struct {
	SessionID, RunID, RequestID string
	Event                       lubantest.Event
	Raw                         map[string]any
}

func decodeAsk(t *testing.T, ev lubantest.Event) ask {
	t.Helper()
	require.Equal(t, "user_input_required", ev.Name)
	var m map[string]any
	require.NoError(t, ev.Decode(&m))
	a := ask{Event: ev, Raw: m}
	a.SessionID, _ = m["sessionId"].(string)
	a.RunID, _ = m["runId"].(string)
	a.RequestID, _ = m["id"].(string)
	require.NotEmpty(t, a.RequestID)
	return a
}

// readRest reads a stream whose server is about to die: every whole event it
// delivered, and the id of the last one (0 when none).
func readRest(st *lubantest.Stream) ([]lubantest.Event, int64) {
	evs, _ := st.All(waitEvents)
	var last int64
	for _, e := range evs {
		last = e.ID
	}
	return evs, last
}

// chatMayDie starts a session on a process that may die before it answers
// (or before its stream's first write reaches the client) and reads what
// the stream carried: nothing when the POST itself got no answer.
func chatMayDie(p *proc) ([]lubantest.Event, int64) {
	st, err := p.API.TryChat("", userMessage)
	if err != nil {
		return nil, 0
	}
	return readRest(st)
}

func lastID(evs []lubantest.Event) int64 {
	if len(evs) == 0 {
		return 0
	}
	return evs[len(evs)-1].ID
}

// sessionAfterCrash is the session a client started on a process that died
// soon after: from the "session" event when it arrived before the crash,
// else from GET /api/sessions on the next process (its only session), as a
// page would find it.
func sessionAfterCrash(t *testing.T, seen []lubantest.Event, next *proc) string {
	t.Helper()
	if ev, ok := lubantest.Find(seen, "session"); ok {
		var s struct{ SessionID string }
		require.NoError(t, ev.Decode(&s))
		return s.SessionID
	}
	var l struct {
		Sessions []struct{ ID string } `json:"sessions"`
	}
	require.Equal(t, http.StatusOK, next.API.JSON("GET", "/api/sessions", nil, &l))
	require.Len(t, l.Sessions, 1)
	return l.Sessions[0].ID
}

// chatUntilAsk starts a session and reads its stream to the question.
func chatUntilAsk(t *testing.T, p *proc) (ask, []lubantest.Event) {
	t.Helper()
	st := p.API.Chat("", userMessage)
	defer st.Close()
	evs, err := st.Until("user_input_required", waitEvents)
	require.NoError(t, err)
	return decodeAsk(t, evs[len(evs)-1]), evs
}

// answer posts the answer and reads the continuation's SSE to its end.
func answer(t *testing.T, p *proc, a ask) []lubantest.Event {
	t.Helper()
	resp, err := p.Post("/api/chat/continue", continueBody(a.SessionID, a.RequestID))
	require.NoError(t, err)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("continue: %s %s", resp.Status, b)
	}
	evs, err := p.API.Open(resp, p.Name+"-continue").All(waitEvents)
	require.NoError(t, err)
	return evs
}

// pendingView is GET /api/interactions/pending.
type pendingView struct {
	Pending map[string]any `json:"pending"`
	Last    map[string]any `json:"last"`
}

func getPending(t *testing.T, p *proc, sessionID string) pendingView {
	t.Helper()
	var v pendingView
	require.Equal(t, http.StatusOK, p.API.JSON("GET", "/api/interactions/pending?sessionId="+sessionID, nil, &v))
	return v
}

// reference plays turns on a fresh process that never stops, answering every
// question, and returns the raw model request bodies it sent.
func reference(t *testing.T, turns ...fakeopenai.Turn) [][]byte {
	t.Helper()
	fake := fakeopenai.New(t)
	fake.Push(turns...)
	p := startProc(t, procOptions{Name: "ref", DB: filepath.Join(t.TempDir(), "ref.db"), Fake: fake})
	a, _ := chatUntilAsk(t, p)
	for {
		evs := answer(t, p, a)
		last := evs[len(evs)-1]
		if last.Name == "done" {
			break
		}
		a = decodeAsk(t, last)
	}
	p.Term()
	return raws(fake.Requests())
}

func raws(reqs []*fakeopenai.Request) [][]byte {
	out := make([][]byte, len(reqs))
	for i, r := range reqs {
		out[i] = r.Raw
	}
	return out
}

// transcript is the part of GET /api/sessions/{id} the checks read.
type transcript struct {
	Session struct {
		Status string `json:"status"`
	} `json:"session"`
	Messages []struct {
		ID        string `json:"id"`
		Role      string `json:"role"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"toolCalls"`
		ToolCallID string `json:"toolCallId"`
		IsError    bool   `json:"isError"`
	} `json:"messages"`
}

// checkRun checks a session whose only run ended with status want, through
// the API and the fake's recorded requests:
//   - the transcript gives every tool call exactly one ToolResult;
//   - every model request pairs every tool call with exactly one result;
//   - the audit holds one "requested" and one resolution per request;
//   - the event log has ids 1..n without a gap but where an assistant
//     message's transaction deleted the deltas streamed before it (a gap
//     ends at that message), and user_input_required,
//     user_input_resolved, tool_call, tool_result, message and done each
//     appear once per request, call, message and run.
func checkRun(t *testing.T, p *proc, sessionID, want string, fake *fakeopenai.Server) transcript {
	t.Helper()
	var tr transcript
	require.Equal(t, http.StatusOK, p.API.JSON("GET", "/api/sessions/"+sessionID, nil, &tr))
	require.Equal(t, want, tr.Session.Status)
	calls, results := map[string]int{}, map[string]int{}
	for _, m := range tr.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID]++
		}
		if m.Role == "tool" {
			results[m.ToolCallID]++
		}
	}
	for id, n := range calls {
		require.Equal(t, 1, n, "tool call %s appears %d times", id, n)
		require.Equal(t, 1, results[id], "tool call %s has %d ToolResults", id, results[id])
	}
	for id := range results {
		require.Contains(t, calls, id, "ToolResult for unknown call %s", id)
	}

	for i, r := range fake.Requests() {
		open := map[string]int{}
		for _, m := range r.Messages {
			if tcs, ok := m["tool_calls"].([]any); ok {
				for _, tc := range tcs {
					id, _ := tc.(map[string]any)["id"].(string)
					open[id]++
				}
			}
			if m["role"] == "tool" {
				id, _ := m["tool_call_id"].(string)
				open[id]--
				require.Equal(t, 0, open[id], "model request %d: tool call %s has a second or orphan ToolResult", i, id)
			}
		}
		for id, n := range open {
			require.Equal(t, 0, n, "model request %d: tool call %s without a ToolResult", i, id)
		}
	}

	var audit struct {
		Audit []struct {
			RequestID string `json:"requestId"`
			Action    string `json:"action"`
		} `json:"audit"`
	}
	require.Equal(t, http.StatusOK, p.API.JSON("GET", "/api/sessions/"+sessionID+"/trace", nil, &audit))
	requested, resolved := map[string]int{}, map[string]int{}
	for _, a := range audit.Audit {
		switch a.Action {
		case "requested":
			requested[a.RequestID]++
		case "answered", "cancelled", "expired":
			resolved[a.RequestID]++
		}
	}
	for id, n := range requested {
		require.Equal(t, 1, n, "audit: request %s requested %d times", id, n)
		require.Equal(t, 1, resolved[id], "audit: request %s resolved %d times", id, resolved[id])
	}
	require.Len(t, resolved, len(requested))

	evs := p.API.EventsUntil(sessionID, 0, "done", waitEvents)
	seen := map[string]int{}
	for i, e := range evs {
		var d struct {
			ID, RequestID, ToolCallID, MessageID, RunID, Status, Role string
		}
		require.NoError(t, e.Decode(&d))
		prev := int64(0)
		if i > 0 {
			prev = evs[i-1].ID
		}
		if e.Name != "message" || d.Role != "assistant" {
			require.Equal(t, prev+1, e.ID, "event ids must be 1..n without a gap but before an assistant message")
		} else {
			require.Greater(t, e.ID, prev, "event ids increase")
		}
		switch e.Name {
		case "user_input_required":
			seen[e.Name+" "+d.ID]++
		case "user_input_resolved":
			seen[e.Name+" "+d.RequestID]++
		case "tool_call", "tool_result":
			seen[e.Name+" "+d.ToolCallID]++
		case "message":
			seen[e.Name+" "+d.MessageID]++
		case "done":
			seen[e.Name+" "+d.RunID]++
			require.Equal(t, want, d.Status)
		}
	}
	for k, n := range seen {
		require.Equal(t, 1, n, "event %q appears %d times", k, n)
	}
	return tr
}

// jsonOf re-encodes v, for comparing decoded objects in messages.
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
