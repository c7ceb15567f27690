package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// apiError is the body of every error response (docs/design.md §3).
type apiError struct {
	Error struct {
		Code    string            `json:"code"`
		Message string            `json:"message"`
		Details []api.FieldError  `json:"details"`
		Receipt *api.Receipt      `json:"receipt"`
		Pending *api.InputRequest `json:"pending"`
	} `json:"error"`
}

// pendingView is GET /api/interactions/pending.
type pendingView struct {
	Pending *api.InputRequest `json:"pending"`
	Last    *api.Receipt      `json:"last"`
}

// traceView is GET /api/sessions/{id}/trace.
type traceView struct {
	Trace []struct {
		Kind  string          `json:"kind"`
		RunID string          `json:"runId"`
		Data  json.RawMessage `json:"data"`
	} `json:"trace"`
	Audit []struct {
		RequestID  string          `json:"requestId"`
		ToolCallID string          `json:"toolCallId"`
		RunID      string          `json:"runId"`
		Action     string          `json:"action"`
		Reason     string          `json:"reason"`
		Summary    json.RawMessage `json:"summary"`
	} `json:"audit"`
}

// actions lists the audit actions (with ":reason" when there is one) of
// requestID, in order.
func (tv traceView) actions(requestID string) []string {
	var out []string
	for _, a := range tv.Audit {
		if a.RequestID != requestID {
			continue
		}
		s := a.Action
		if a.Reason != "" {
			s += ":" + a.Reason
		}
		out = append(out, s)
	}
	return out
}

// kinds returns the decoded data of every trace entry of kind.
func (tv traceView) kinds(kind string) []map[string]any {
	var out []map[string]any
	for _, x := range tv.Trace {
		if x.Kind == kind {
			var m map[string]any
			_ = json.Unmarshal(x.Data, &m)
			out = append(out, m)
		}
	}
	return out
}

// transcript is GET /api/sessions/{id}.
type transcript struct {
	Session struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"session"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    string          `json:"content"`
		ToolCallID string          `json:"toolCallId"`
		IsError    bool            `json:"isError"`
		Metadata   json.RawMessage `json:"metadata"`
	} `json:"messages"`
	Interactions []struct {
		Request *api.InputRequest `json:"request"`
		Status  string            `json:"status"`
		Receipt *api.Receipt      `json:"receipt"`
	} `json:"interactions"`
}

// toolResult is the payload of a tool_result event.
type toolResult struct {
	ToolCallID string          `json:"toolCallId"`
	Name       string          `json:"name"`
	Content    string          `json:"content"`
	IsError    bool            `json:"isError"`
	Metadata   json.RawMessage `json:"metadata"`
}

// askContent is the content of an ask_user ToolResult (docs/design.md §3).
type askContent struct {
	Selections  []string `json:"selections"`
	CustomInput string   `json:"customInput"`
	Cancelled   bool     `json:"cancelled"`
	Expired     bool     `json:"expired"`
}

// paused is a run stopped at a question: its session, run, the request as
// the SSE event carried it, and the events of the stream that showed it.
type paused struct {
	sessionID, runID string
	req              api.InputRequest
	raw              map[string]any // the user_input_required payload, as sent
	events           []lubantest.Event
}

// checkSSE asserts what every luban stream must be (docs/design.md §3): 200,
// text/event-stream, no-cache, X-Accel-Buffering: no, no compression, and
// an id on every event, strictly increasing.
func checkSSE(t *testing.T, st *lubantest.Stream, evs []lubantest.Event) {
	t.Helper()
	h := st.Resp.Header
	require.Equal(t, http.StatusOK, st.Resp.StatusCode)
	require.Equal(t, "text/event-stream", h.Get("Content-Type"))
	require.Equal(t, "no-cache", h.Get("Cache-Control"))
	require.Equal(t, "no", h.Get("X-Accel-Buffering"))
	require.Empty(t, h.Get("Content-Encoding"))
	require.False(t, st.Resp.Uncompressed, "the transport had to decompress the stream")
	var last int64
	for _, ev := range evs {
		require.Greater(t, ev.ID, last, "event %q: id %d after %d (every event has an id, strictly increasing)", ev.Name, ev.ID, last)
		require.NotEmpty(t, ev.Name)
		require.True(t, json.Valid(ev.Data), "event %q data is not JSON: %s", ev.Name, ev.Data)
		last = ev.ID
	}
}

// readAll reads a stream to its end and checks it.
func (e *env) readAll(st *lubantest.Stream) []lubantest.Event {
	e.t.Helper()
	evs, err := st.All(waitFor)
	require.NoError(e.t, err, "events so far: %v", lubantest.Names(evs))
	checkSSE(e.t, st, evs)
	return evs
}

// chat posts a message and reads the stream until the run pauses or ends.
func (e *env) chat(sessionID, message string) (string, string, []lubantest.Event) {
	e.t.Helper()
	evs := e.readAll(e.srv.Chat(sessionID, message))
	require.NotEmpty(e.t, evs)
	require.Equal(e.t, "session", evs[0].Name, "a chat stream starts with session: %v", lubantest.Names(evs))
	var se struct{ SessionID, RunID string }
	require.NoError(e.t, evs[0].Decode(&se))
	require.NotEmpty(e.t, se.SessionID)
	require.NotEmpty(e.t, se.RunID)
	e.remember(se.SessionID)
	return se.SessionID, se.RunID, evs
}

// ask posts a message whose run must pause at a question.
func (e *env) ask(sessionID, message string) paused {
	e.t.Helper()
	sid, rid, evs := e.chat(sessionID, message)
	return e.pausedAt(sid, rid, evs)
}

// pausedAt asserts that evs end with user_input_required and decodes it.
func (e *env) pausedAt(sessionID, runID string, evs []lubantest.Event) paused {
	e.t.Helper()
	require.NotEmpty(e.t, evs)
	last := evs[len(evs)-1]
	require.Equal(e.t, "user_input_required", last.Name, "events: %v", lubantest.Names(evs))
	p := paused{sessionID: sessionID, runID: runID, events: evs}
	require.NoError(e.t, last.Decode(&p.req))
	require.NoError(e.t, last.Decode(&p.raw))
	require.NotEmpty(e.t, p.req.ID)
	require.Equal(e.t, sessionID, p.req.SessionID)
	require.Equal(e.t, runID, p.req.RunID)
	require.True(e.t, p.req.Resumable)
	return p
}

// body is a continue body for ask_user.
func body(sessionID, requestID string, selections []string, customInput string) map[string]any {
	if selections == nil {
		selections = []string{}
	}
	return map[string]any{"sessionId": sessionID, "requestId": requestID, "selections": selections, "customInput": customInput, "cancelled": false}
}

// cancelBody is a continue body that cancels.
func cancelBody(sessionID, requestID string) map[string]any {
	return map[string]any{"sessionId": sessionID, "requestId": requestID, "selections": []string{}, "customInput": "", "cancelled": true}
}

// answer posts a continue that must succeed and reads its stream to the
// run's next pause or end.
func (e *env) answer(b map[string]any) []lubantest.Event {
	e.t.Helper()
	resp := e.srv.Continue(b)
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		e.t.Fatalf("continue: %s %s", resp.Status, raw)
	}
	return e.readAll(e.srv.Open(resp, "continue"))
}

// reject posts a continue that must fail with status and code.
func (e *env) reject(b map[string]any, status int, code string) apiError {
	e.t.Helper()
	return e.expectError(e.srv.Continue(b), status, code)
}

// expectError reads an error response and checks its status and code.
func (e *env) expectError(resp *http.Response, status int, code string) apiError {
	e.t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, status, resp.StatusCode, "body: %s", raw)
	require.Contains(e.t, resp.Header.Get("Content-Type"), "application/json")
	var ae apiError
	require.NoError(e.t, json.Unmarshal(raw, &ae), "body: %s", raw)
	require.Equal(e.t, code, ae.Error.Code, "body: %s", raw)
	require.NotEmpty(e.t, ae.Error.Message)
	return ae
}

// get decodes a GET that must answer 200.
func (e *env) get(path string, out any) {
	e.t.Helper()
	require.Equal(e.t, http.StatusOK, e.srv.JSON("GET", path, nil, out), "GET %s", path)
}

func (e *env) pending(sessionID string) pendingView {
	e.t.Helper()
	var v pendingView
	e.get("/api/interactions/pending?sessionId="+sessionID, &v)
	return v
}

func (e *env) trace(sessionID string) traceView {
	e.t.Helper()
	var v traceView
	e.get("/api/sessions/"+sessionID+"/trace", &v)
	return v
}

func (e *env) transcript(sessionID string) transcript {
	e.t.Helper()
	var v transcript
	e.get("/api/sessions/"+sessionID, &v)
	return v
}

// replay subscribes to a session's events after Last-Event-ID after and
// reads until stop says so (the subscription itself never ends).
func (e *env) replay(sessionID string, after int64, stop func(lubantest.Event) bool) []lubantest.Event {
	e.t.Helper()
	st := e.srv.Events(sessionID, after)
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	var evs []lubantest.Event
	for {
		ev, err := st.Next(ctx)
		require.NoError(e.t, err, "replay of %s after %d: got %v", sessionID, after, lubantest.Names(evs))
		evs = append(evs, ev)
		if stop(ev) {
			checkSSE(e.t, st, evs)
			return evs
		}
	}
}

// doneOf stops a replay at the done event of runID.
func doneOf(runID string) func(lubantest.Event) bool {
	return func(ev lubantest.Event) bool {
		if ev.Name != "done" {
			return false
		}
		var d struct{ RunID string }
		_ = ev.Decode(&d)
		return d.RunID == runID
	}
}

// rawContinue posts a continue without the testing helpers, for use from
// several goroutines at once.
func (e *env) rawContinue(ctx context.Context, b map[string]any) (*http.Response, error) {
	j, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", e.srv.URL+"/api/chat/continue", bytes.NewReader(j))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.srv.Token)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// named returns every event named name.
func named(evs []lubantest.Event, name string) []lubantest.Event {
	var out []lubantest.Event
	for _, ev := range evs {
		if ev.Name == name {
			out = append(out, ev)
		}
	}
	return out
}

// one returns the only event named name and fails when there is not exactly one.
func one(t *testing.T, evs []lubantest.Event, name string) lubantest.Event {
	t.Helper()
	got := named(evs, name)
	require.Len(t, got, 1, "want exactly one %q in %v", name, lubantest.Names(evs))
	return got[0]
}

// decode decodes an event's data into a fresh T.
func decode[T any](t *testing.T, ev lubantest.Event) T {
	t.Helper()
	var v T
	require.NoError(t, ev.Decode(&v), "event %q: %s", ev.Name, ev.Data)
	return v
}

// results decodes every tool_result event.
func results(t *testing.T, evs []lubantest.Event) []toolResult {
	t.Helper()
	var out []toolResult
	for _, ev := range named(evs, "tool_result") {
		out = append(out, decode[toolResult](t, ev))
	}
	return out
}

// doneStatus returns the status of the only done event in evs.
func doneStatus(t *testing.T, evs []lubantest.Event) string {
	t.Helper()
	d := decode[struct{ RunID, Status string }](t, one(t, evs, "done"))
	return d.Status
}

// content decodes an ask_user ToolResult content strictly.
func content(t *testing.T, s string) askContent {
	t.Helper()
	var c askContent
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	require.NoError(t, dec.Decode(&c), "ToolResult content: %s", s)
	return c
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// decodeBody decodes a JSON response body and closes it.
func decodeBody(resp *http.Response, out any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(out)
}
