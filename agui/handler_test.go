package agui_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/aguitest"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model/openai"
	"github.com/lubanhq/luban/tool"
)

const (
	singleArgs = `{"title":"部署到哪个环境？","mode":"single","options":[{"id":"dev","label":"开发"},{"id":"prod","label":"生产","recommended":true}]}`
	// streamTimeout bounds one POST /api/agui: the stream ends by itself
	// when the run pauses or ends.
	streamTimeout = 30 * time.Second
)

// captured collects every raw AG-UI response of this package's tests;
// TestMain's last test validates them all with @ag-ui/core.
var captured = struct {
	sync.Mutex
	m map[string][]byte
}{m: map[string][]byte{}}

type testBundle struct {
	t     *testing.T
	srv   *lubantest.Server
	model *fakeopenai.Server
	off   atomic.Int64 // clock offset
	n     int
}

func setup(t *testing.T, mods ...func(o *lubantest.Options)) *testBundle {
	t.Helper()
	b := &testBundle{t: t, model: fakeopenai.New(t)}
	p, err := openai.New(openai.Options{BaseURL: b.model.URL(), Model: "fake-model", MaxRetries: -1})
	require.NoError(t, err)
	o := lubantest.Options{Provider: p, Now: func() time.Time { return time.Now().Add(time.Duration(b.off.Load())) }}
	for _, m := range mods {
		m(&o)
	}
	b.srv = lubantest.Start(t, o)
	return b
}

func askTurn(id string) fakeopenai.Turn {
	return fakeopenai.Turn{Text: "先问一下。", ToolCalls: []fakeopenai.ToolCall{{ID: id, Name: "ask_user", Arguments: singleArgs}}}
}

// event is one decoded AG-UI event.
type event map[string]any

func (e event) str(k string) string { s, _ := e[k].(string); return s }

// post sends a RunAgentInput with token ("" = the test token) and reads the
// whole SSE answer.
func (b *testBundle) post(token string, in map[string]any) (int, []event) {
	b.t.Helper()
	body, err := json.Marshal(in)
	require.NoError(b.t, err)
	ctx, cancel := context.WithTimeout(context.Background(), streamTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.srv.URL+"/api/agui", bytes.NewReader(body))
	require.NoError(b.t, err)
	if token == "" {
		token = b.srv.Token
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(b.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(b.t, err, "the stream must end by itself")
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, []event{{"body": string(raw)}}
	}
	require.Equal(b.t, "text/event-stream", resp.Header.Get("Content-Type"))
	b.n++
	captured.Lock()
	captured.m[fmt.Sprintf("%s-%d", b.t.Name(), b.n)] = raw
	captured.Unlock()
	var evs []event
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data: ") {
			var e event
			require.NoError(b.t, json.Unmarshal([]byte(line[len("data: "):]), &e), "frame %q", line)
			evs = append(evs, e)
		}
	}
	return resp.StatusCode, evs
}

func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.str("type")
	}
	return out
}

func last(t *testing.T, evs []event) event {
	t.Helper()
	require.NotEmpty(t, evs)
	return evs[len(evs)-1]
}

// interruptOf returns the one interrupt of a RUN_FINISHED interrupt outcome.
func interruptOf(t *testing.T, e event) map[string]any {
	t.Helper()
	require.Equal(t, "RUN_FINISHED", e.str("type"), "%v", e)
	oc := e["outcome"].(map[string]any)
	require.Equal(t, "interrupt", oc["type"])
	its := oc["interrupts"].([]any)
	require.Len(t, its, 1)
	return its[0].(map[string]any)
}

func outcome(t *testing.T, e event) string {
	t.Helper()
	require.Equal(t, "RUN_FINISHED", e.str("type"), "%v", e)
	return e["outcome"].(map[string]any)["type"].(string)
}

func userMsg(id, text string) map[string]any {
	return map[string]any{"id": id, "role": "user", "content": text}
}

func input(thread, run string, msgs []map[string]any, resume ...map[string]any) map[string]any {
	if msgs == nil {
		msgs = []map[string]any{}
	}
	// What @ag-ui/client 1.0's HttpAgent sends: protocolVersion "1.0".
	in := map[string]any{"threadId": thread, "runId": run, "protocolVersion": "1.0", "messages": msgs, "tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{}}
	if len(resume) > 0 {
		in["resume"] = resume
	}
	return in
}

func resolved(id string, payload any) map[string]any {
	return map[string]any{"interruptId": id, "status": "resolved", "payload": payload}
}

// transcript is GET /api/sessions/{id}.
func (b *testBundle) transcript(id string) api.Transcript {
	b.t.Helper()
	var tr api.Transcript
	require.Equal(b.t, http.StatusOK, b.srv.JSON("GET", "/api/sessions/"+id, nil, &tr))
	return tr
}

// toolResults counts the ToolResults of call in a transcript.
func toolResults(tr api.Transcript, call string) int {
	n := 0
	for _, m := range tr.Messages {
		if m.Role == api.RoleTool && m.ToolCallID == call {
			n++
		}
	}
	return n
}

func testAskInterruptResumeSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_a"), fakeopenai.Turn{Text: "好的，部署到生产。"})
	thread := "thread-ask-1"
	msgs := []map[string]any{userMsg("u1", "帮我部署")}
	_, evs := b.post("", input(thread, "r1", msgs))
	var text strings.Builder
	var kept []event // the events with the text deltas folded into one
	for _, e := range evs {
		if e.str("type") == "TEXT_MESSAGE_CONTENT" {
			require.Equal(t, evs[1].str("messageId"), e.str("messageId"))
			text.WriteString(e.str("delta"))
			if kept[len(kept)-1].str("type") == "TEXT_MESSAGE_CONTENT" {
				continue
			}
		}
		kept = append(kept, e)
	}
	require.Equal(t, "先问一下。", text.String())
	evs = kept
	require.Equal(t, []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
		"TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"}, types(evs))
	require.Equal(t, thread, evs[0].str("threadId"))
	require.Equal(t, "r1", evs[0].str("runId"))
	require.Equal(t, "ask_user", evs[4].str("toolCallName"))
	require.Equal(t, evs[1].str("messageId"), evs[4].str("parentMessageId"))
	require.JSONEq(t, singleArgs, evs[5].str("delta"))
	in := interruptOf(t, last(t, evs))
	require.Equal(t, "input_required", in["reason"])
	require.Equal(t, "部署到哪个环境？", in["message"])
	require.Equal(t, "call_a", in["toolCallId"])
	require.NotEmpty(t, in["expiresAt"])
	_, err := time.Parse(time.RFC3339, in["expiresAt"].(string))
	require.NoError(t, err)
	req := in["metadata"].(map[string]any)["inputRequest"].(map[string]any)
	require.Equal(t, in["id"], req["id"])
	require.Equal(t, thread, req["sessionId"])
	sch := in["responseSchema"].(map[string]any)
	sel := sch["properties"].(map[string]any)["selections"].(map[string]any)
	require.Equal(t, []any{"dev", "prod"}, sel["items"].(map[string]any)["enum"])
	require.EqualValues(t, 1, sel["maxItems"])

	// The client sends everything again, now with the resume.
	msgs = append(msgs, map[string]any{"id": "a1", "role": "assistant", "content": "先问一下。",
		"toolCalls": []any{map[string]any{"id": "call_a", "type": "function", "function": map[string]any{"name": "ask_user", "arguments": singleArgs}}}})
	_, evs = b.post("", input(thread, "r2", msgs, resolved(in["id"].(string), map[string]any{"selections": []string{"prod"}})))
	require.Equal(t, "RUN_STARTED", evs[0].str("type"))
	require.Equal(t, "r2", evs[0].str("runId"))
	var result event
	for _, e := range evs {
		if e.str("type") == "TOOL_CALL_RESULT" {
			result = e
		}
	}
	require.NotNil(t, result, "%v", types(evs))
	require.Equal(t, "call_a", result.str("toolCallId"))
	var content struct {
		Selections []string `json:"selections"`
		Cancelled  bool     `json:"cancelled"`
	}
	require.NoError(t, json.Unmarshal([]byte(result.str("content")), &content))
	require.Equal(t, []string{"prod"}, content.Selections)
	require.False(t, content.Cancelled)
	require.Equal(t, "success", outcome(t, last(t, evs)))
	require.Contains(t, types(evs), "TEXT_MESSAGE_CONTENT")

	tr := b.transcript(thread)
	require.Equal(t, 1, toolResults(tr, "call_a"))
	var users []string
	for _, m := range tr.Messages {
		if m.Role == api.RoleUser {
			users = append(users, m.Content)
		}
	}
	require.Equal(t, []string{"帮我部署"}, users, "history sent again is not added twice")

	// The model saw the answer as the ToolResult of the original call.
	reqs := b.model.Requests()
	require.Len(t, reqs, 2)
	require.Contains(t, string(reqs[1].Raw), `call_a`)

	// A second turn: the whole history again plus one new user message.
	b.model.Push(fakeopenai.Turn{Text: "已完成。"})
	msgs = append(msgs, map[string]any{"id": "t1", "role": "tool", "toolCallId": "call_a", "content": result.str("content")},
		map[string]any{"id": "a2", "role": "assistant", "content": "好的，部署到生产。"}, userMsg("u2", "谢谢"))
	_, evs = b.post("", input(thread, "r3", msgs))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	users = nil
	for _, m := range b.transcript(thread).Messages {
		if m.Role == api.RoleUser {
			users = append(users, m.Content)
		}
	}
	require.Equal(t, []string{"帮我部署", "谢谢"}, users)

	// The same input again (its last message is not new): no run starts;
	// the thread's state is reported.
	msgs = append(msgs, map[string]any{"id": "a3", "role": "assistant", "content": "已完成。"})
	_, evs = b.post("", input(thread, "r4", msgs))
	require.Equal(t, []string{"RUN_STARTED", "RUN_FINISHED"}, types(evs))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	require.Len(t, b.model.Requests(), 3, "no model call")
}

func testInvalidAnswerKeepsInterruptOpen(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_i"), fakeopenai.Turn{Text: "好。"})
	_, evs := b.post("", input("thread-invalid", "r1", []map[string]any{userMsg("u1", "部署")}))
	id := interruptOf(t, last(t, evs))["id"].(string)

	_, evs = b.post("", input("thread-invalid", "r2", nil, resolved(id, map[string]any{"selections": []string{"dev", "prod"}})))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "invalid_answer", evs[0].str("code"))
	require.NotEmpty(t, evs[0]["metadata"].(map[string]any)["details"])
	// A payload that is no answer object at all.
	_, evs = b.post("", input("thread-invalid", "r2b", []map[string]any{}, resolved(id, "prod")))
	require.Equal(t, "invalid_answer", evs[0].str("code"))
	details := evs[0]["metadata"].(map[string]any)["details"].([]any)
	require.Len(t, details, 1)
	d := details[0].(map[string]any)
	require.Equal(t, "payload", d["field"])
	require.Equal(t, "invalid_type", d["code"])
	require.Equal(t, map[string]any{"expected": "object", "got": "string"}, d["params"])
	require.NotContains(t, evs[0].str("message"), "Go value", "JSON types, not Go types")

	var p api.PendingResponse
	require.Equal(t, http.StatusOK, b.srv.JSON("GET", "/api/interactions/pending?sessionId=thread-invalid", nil, &p))
	require.NotNil(t, p.Pending, "the interrupt stays open")
	require.Equal(t, id, p.Pending.ID)

	_, evs = b.post("", input("thread-invalid", "r3", []map[string]any{}, resolved(id, map[string]any{"selections": []string{"dev"}})))
	require.Equal(t, "success", outcome(t, last(t, evs)))
}

func testReplayedResume(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_r"), fakeopenai.Turn{Text: "完成。"})
	_, evs := b.post("", input("thread-replay", "r1", []map[string]any{userMsg("u1", "部署")}))
	id := interruptOf(t, last(t, evs))["id"].(string)
	in := input("thread-replay", "r2", []map[string]any{}, resolved(id, map[string]any{"selections": []string{"dev"}}))
	_, first := b.post("", in)
	require.Contains(t, types(first), "TOOL_CALL_RESULT")
	require.Equal(t, "success", outcome(t, last(t, first)))

	for i := range 2 {
		in["runId"] = fmt.Sprintf("r-replay-%d", i)
		_, evs = b.post("", in)
		require.Equal(t, []string{"RUN_STARTED", "RUN_FINISHED"}, types(evs), "a replay sends no second ToolResult")
		require.Equal(t, "success", outcome(t, last(t, evs)), "the run's own outcome")
	}
	// A replayed cancel of the answered interrupt changes nothing either.
	_, evs = b.post("", input("thread-replay", "r5", []map[string]any{}, map[string]any{"interruptId": id, "status": "cancelled"}))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	require.Equal(t, 1, toolResults(b.transcript("thread-replay"), "call_r"))
	require.Len(t, b.model.Requests(), 2)
}

func testReplayWhileNextQuestionWaits(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_1"), askTurn("call_2"))
	_, evs := b.post("", input("thread-two", "r1", []map[string]any{userMsg("u1", "部署")}))
	first := interruptOf(t, last(t, evs))["id"].(string)
	res := resolved(first, map[string]any{"selections": []string{"dev"}})
	_, evs = b.post("", input("thread-two", "r2", []map[string]any{}, res))
	second := interruptOf(t, last(t, evs))
	require.NotEqual(t, first, second["id"])
	require.Equal(t, "call_2", second["toolCallId"])
	// Replaying the first answer reports the open second interrupt.
	_, evs = b.post("", input("thread-two", "r3", []map[string]any{}, res))
	require.Equal(t, []string{"RUN_STARTED", "RUN_FINISHED"}, types(evs))
	require.Equal(t, second["id"], interruptOf(t, last(t, evs))["id"])
	require.Equal(t, 1, toolResults(b.transcript("thread-two"), "call_1"))
}

func testCancelResume(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_c"))
	_, evs := b.post("", input("thread-cancel", "r1", []map[string]any{userMsg("u1", "部署")}))
	id := interruptOf(t, last(t, evs))["id"].(string)
	_, evs = b.post("", input("thread-cancel", "r2", []map[string]any{}, map[string]any{"interruptId": id, "status": "cancelled"}))
	require.Equal(t, "cancelled", outcome(t, last(t, evs)))
	var result event
	for _, e := range evs {
		if e.str("type") == "TOOL_CALL_RESULT" {
			result = e
		}
	}
	require.NotNil(t, result)
	require.JSONEq(t, `{"selections":[],"customInput":"","cancelled":true}`, result.str("content"))
	require.Len(t, b.model.Requests(), 1, "a cancel stops the run with no further model turn")
	// Asking about the thread now reports the cancelled outcome.
	_, evs = b.post("", input("thread-cancel", "r3", []map[string]any{}))
	require.Equal(t, "cancelled", outcome(t, last(t, evs)))
}

// A client before 1.0 (no protocolVersion: @ag-ui/client 0.0.x, the one
// CopilotKit's runtime pins) never gets the cancelled outcome its schema
// rejects: a declined question ends the run in RUN_FINISHED without an
// outcome, metadata.luban.outcome "cancelled" (docs/design.md §21 "Clients
// before 1.0"). internal/testkit/copilotkittest drives the same through the
// CopilotKit runtime and validates with @ag-ui/core 0.0.59.
func testLegacyClientCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_lc"))
	legacy := func(in map[string]any) map[string]any {
		delete(in, "protocolVersion")
		return in
	}
	_, evs := b.post("", legacy(input("thread-legacy", "r1", []map[string]any{userMsg("u1", "部署")})))
	id := interruptOf(t, last(t, evs))["id"].(string)
	_, evs = b.post("", legacy(input("thread-legacy", "r2", []map[string]any{}, map[string]any{"interruptId": id, "status": "cancelled"})))
	end := last(t, evs)
	require.Equal(t, "RUN_FINISHED", end.str("type"), "%v", types(evs))
	require.NotContains(t, end, "outcome")
	require.Equal(t, map[string]any{"luban": map[string]any{"outcome": "cancelled"}}, end["metadata"])
	// Asked again, the thread reports the same clean end.
	_, evs = b.post("", legacy(input("thread-legacy", "r3", []map[string]any{})))
	require.NotContains(t, last(t, evs), "outcome")
	// A 1.0 client asking about the same thread gets the cancelled outcome.
	_, evs = b.post("", input("thread-legacy", "r4", []map[string]any{}))
	require.Equal(t, "cancelled", outcome(t, last(t, evs)))
}

// confirmTool is a front-end tool as RunAgentInput.tools offers it.
var confirmTool = map[string]any{"name": "confirm_deploy", "description": "Ask the person to confirm.",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}}}

func frontendTurn(id string) fakeopenai.Turn {
	return fakeopenai.Turn{Text: "请确认。", ToolCalls: []fakeopenai.ToolCall{{ID: id, Name: "confirm_deploy", Arguments: `{"env":"prod"}`}}}
}

func withTools(in map[string]any, tools ...map[string]any) map[string]any {
	in["tools"] = tools
	return in
}

// pendingTool checks that evs end in the RUN_FINISHED of a front-end tool
// call left to the client and returns its interrupt (metadata.luban.frontendTool).
func pendingTool(t *testing.T, evs []event, call string) map[string]any {
	t.Helper()
	end := last(t, evs)
	require.Equal(t, "RUN_FINISHED", end.str("type"), "%v", types(evs))
	require.Equal(t, map[string]any{"type": "success", "pendingToolCallIds": []any{call}}, end["outcome"])
	it := end["metadata"].(map[string]any)["luban"].(map[string]any)["frontendTool"].(map[string]any)
	require.Equal(t, "frontend_tool", it["reason"])
	require.Equal(t, call, it["toolCallId"])
	return it
}

// A front-end tool of RunAgentInput.tools (docs/design.md §21): offered to
// the model; its call is announced as the call and a success that leaves
// it pending; asking about the thread announces it again; the tool message
// of the next input is its ToolResult, once (the client's own, not sent
// back); the same input again consumes nothing.
func testFrontendToolMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(frontendTurn("call_fe"), fakeopenai.Turn{Text: "已部署。"})
	_, evs := b.post("", withTools(input("thread-fe", "r1", []map[string]any{userMsg("u1", "部署")}), confirmTool))
	require.Equal(t, []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"}, types(evs))
	require.Equal(t, "confirm_deploy", evs[4].str("toolCallName"))
	require.Equal(t, `{"env":"prod"}`, evs[5].str("delta"))
	it := pendingTool(t, evs, "call_fe")
	require.Equal(t, map[string]any{"type": "string", "maxLength": float64(65536)}, it["responseSchema"].(map[string]any)["properties"].(map[string]any)["customInput"])
	require.Contains(t, b.model.Requests()[0].ToolNames, "confirm_deploy")

	// A client that reconnects is told the call again.
	_, evs = b.post("", input("thread-fe", "r2", []map[string]any{}))
	require.Equal(t, []string{"RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "RUN_FINISHED"}, types(evs))
	require.Equal(t, it["id"], pendingTool(t, evs, "call_fe")["id"])

	// The application's result, as the tool message of its next run.
	history := []map[string]any{userMsg("u1", "部署"),
		{"id": "m1", "role": "assistant", "content": "请确认。", "toolCalls": []any{map[string]any{"id": "call_fe", "type": "function", "function": map[string]any{"name": "confirm_deploy", "arguments": `{"env":"prod"}`}}}},
		{"id": "t1", "role": "tool", "toolCallId": "call_fe", "content": `{"approved":true}`}}
	_, evs = b.post("", input("thread-fe", "r3", history))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	require.NotContains(t, last(t, evs)["outcome"], "pendingToolCallIds")
	require.NotContains(t, types(evs), "TOOL_CALL_RESULT", "the client has its own result")
	require.Contains(t, types(evs), "CUSTOM")
	reqs := b.model.Requests()
	require.Len(t, reqs, 2)
	require.Contains(t, reqs[1].ToolNames, "confirm_deploy", "every call of the run offers the tool")
	msgs := reqs[1].Messages
	require.Equal(t, "tool", msgs[len(msgs)-1]["role"])
	require.Equal(t, `{"approved":true}`, msgs[len(msgs)-1]["content"])
	tr := b.transcript("thread-fe")
	require.Equal(t, 1, toolResults(tr, "call_fe"))
	require.Len(t, tr.Interactions, 1)
	require.Equal(t, api.StatusAnswered, tr.Interactions[0].Status)
	for _, m := range tr.Messages {
		if m.Role == api.RoleUser {
			require.Empty(t, m.Metadata, "the stored tools are luban's own record")
		}
	}

	// The same input again: nothing consumed, the run's outcome.
	_, evs = b.post("", input("thread-fe", "r4", history))
	require.Equal(t, []string{"RUN_STARTED", "RUN_FINISHED"}, types(evs))
	require.Equal(t, 1, toolResults(b.transcript("thread-fe"), "call_fe"))
	require.Len(t, b.model.Requests(), 2)
}

// A front-end tool call is an interaction like any other: answered by a
// resume (customInput is the result), refused with invalid_answer for the
// fields of another kind, declined with a cancelled resume; bad tools are
// refused before anything starts.
func testFrontendToolResume(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(frontendTurn("call_fr"), fakeopenai.Turn{Text: "好。"}, frontendTurn("call_fc"))
	_, evs := b.post("", withTools(input("thread-fr", "r1", []map[string]any{userMsg("u1", "部署")}), confirmTool))
	id := pendingTool(t, evs, "call_fr")["id"].(string)
	_, evs = b.post("", input("thread-fr", "r2", nil, resolved(id, map[string]any{"selections": []string{"dev"}})))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "invalid_answer", evs[0].str("code"))
	_, evs = b.post("", input("thread-fr", "r3", nil, resolved(id, map[string]any{"customInput": "done"})))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	var result event
	for _, e := range evs {
		if e.str("type") == "TOOL_CALL_RESULT" {
			result = e
		}
	}
	require.NotNil(t, result, "%v", types(evs))
	require.Equal(t, "done", result.str("content"))

	// A decline ends the run like an ask's.
	_, evs = b.post("", withTools(input("thread-fr", "r4", []map[string]any{userMsg("u2", "再来")}), confirmTool))
	id = pendingTool(t, evs, "call_fc")["id"].(string)
	_, evs = b.post("", input("thread-fr", "r5", nil, map[string]any{"interruptId": id, "status": "cancelled"}))
	require.Equal(t, "cancelled", outcome(t, last(t, evs)))
	require.Len(t, b.model.Requests(), 3)

	// Bad tools start nothing.
	_, evs = b.post("", withTools(input("thread-fr", "r6", []map[string]any{userMsg("u3", "hi")}), map[string]any{"name": "has space", "description": ""}))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "invalid_request", evs[0].str("code"))
}

func testThreadsAndInterruptsAreOwned(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_o"), askTurn("call_p"))
	_, evs := b.post("", input("thread-mine", "r1", []map[string]any{userMsg("u1", "部署")}))
	id := interruptOf(t, last(t, evs))["id"].(string)

	// Another principal's thread does not exist for them.
	_, evs = b.post("other-token", input("thread-mine", "r2", []map[string]any{userMsg("u2", "hi")}))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "session_not_found", evs[0].str("code"))
	_, evs = b.post("other-token", input("thread-mine", "r3", nil, resolved(id, map[string]any{"selections": []string{"dev"}})))
	require.Equal(t, "session_not_found", evs[0].str("code"))

	// The interrupt of one thread cannot be answered on another.
	_, evs = b.post("", input("thread-second", "r4", []map[string]any{userMsg("u1", "部署")}))
	interruptOf(t, last(t, evs))
	_, evs = b.post("", input("thread-second", "r5", nil, resolved(id, map[string]any{"selections": []string{"dev"}})))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "interaction_not_found", evs[0].str("code"))
	_, evs = b.post("", input("thread-mine", "r6", nil, resolved("ask_unknown", map[string]any{"selections": []string{"dev"}})))
	require.Equal(t, "interaction_not_found", evs[0].str("code"))

	// A new message while a question waits.
	_, evs = b.post("", input("thread-mine", "r7", []map[string]any{userMsg("u3", "再来")}))
	require.Equal(t, "interaction_pending", evs[0].str("code"))
	require.Equal(t, id, evs[0]["metadata"].(map[string]any)["pending"].(map[string]any)["id"])

	// Nothing was answered by any of that.
	var p api.PendingResponse
	require.Equal(t, http.StatusOK, b.srv.JSON("GET", "/api/interactions/pending?sessionId=thread-mine", nil, &p))
	require.Equal(t, id, p.Pending.ID)
	// Asking about the thread reports the open interrupt again.
	_, evs = b.post("", input("thread-mine", "r8", []map[string]any{}))
	require.Equal(t, id, interruptOf(t, last(t, evs))["id"])
}

func testExpiredInterrupt(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.Push(askTurn("call_e"))
	_, evs := b.post("", input("thread-expired", "r1", []map[string]any{userMsg("u1", "部署")}))
	id := interruptOf(t, last(t, evs))["id"].(string)
	b.off.Store(int64(25 * time.Hour))
	_, evs = b.post("", input("thread-expired", "r2", nil, resolved(id, map[string]any{"selections": []string{"dev"}})))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "interaction_expired", evs[0].str("code"))
}

func testMalformedInputs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for name, body := range map[string]map[string]any{
		"bad thread id":  input("no spaces allowed", "r", []map[string]any{}),
		"long thread id": input(strings.Repeat("a", 129), "r", []map[string]any{}),
		"no run id":      {"threadId": "t", "messages": []any{}},
		"no messages":    {"threadId": "t", "runId": "r"},
		"a second resume entry without an id": input("t", "r", nil, map[string]any{"interruptId": "a", "status": "cancelled"},
			map[string]any{"status": "cancelled"}),
		"bad status": input("t", "r", nil, map[string]any{"interruptId": "a", "status": "maybe"}),
	} {
		code, evs := b.post("", body)
		require.Equal(t, http.StatusBadRequest, code, name)
		require.Contains(t, evs[0].str("body"), "invalid_request", name)
	}
	resp := b.srv.Request("POST", "/api/agui", `{"threadId":`, "")
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp.Body.Close()
	resp = b.srv.Request("POST", "/api/agui", `{"threadId":"t","runId":"r","messages":[]}`, "-")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "authenticated like every /api call")
	resp.Body.Close()
	big := `{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"` + strings.Repeat("x", 5<<20) + `"}]}`
	resp = b.srv.Request("POST", "/api/agui", big, "")
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	tooBig, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(tooBig), "request body is larger than 4194304 bytes", "the bound docs/agui.md gives")
	// Under the bound, over the rest of /api's 1 MiB: a client resending a
	// long history is served.
	b.model.Push(fakeopenai.Turn{Text: "ok"})
	in := input("thread-big", "r", []map[string]any{userMsg("u", "hi")})
	in["forwardedProps"] = map[string]any{"history": strings.Repeat("h", 3<<20)}
	code, evs0 := b.post("", in)
	require.Equal(t, http.StatusOK, code, "%v", evs0)
	require.Equal(t, "RUN_FINISHED", last(t, evs0).str("type"))
	// A user message over 32,000 characters is RUN_ERROR payload_too_large
	// naming the field and its bound, as POST /api/chat's 413 does.
	_, evs := b.post("", input("thread-long", "r", []map[string]any{userMsg("u", strings.Repeat("长", 32001))}))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "payload_too_large", evs[0].str("code"))
	md, _ := evs[0]["metadata"].(map[string]any)
	ds, _ := md["details"].([]any)
	require.Len(t, ds, 1, "metadata: %v", md)
	d := ds[0].(map[string]any)
	require.Equal(t, "message", d["field"])
	require.Equal(t, "too_long", d["code"])
	require.Equal(t, map[string]any{"max": 32000.0, "got": 32001.0, "unit": "characters"}, d["params"])
	// An unknown thread without a user message has nothing to run.
	_, evs = b.post("", input("thread-nothing", "r", []map[string]any{}))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "session_not_found", evs[0].str("code"))
}

// The same interrupt answered through AG-UI and through POST
// /api/chat/continue, at the same time, has one winner.
func testOneWinnerAcrossProtocols(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.SetHandler(func(*fakeopenai.Request) fakeopenai.Turn { return fakeopenai.Turn{Text: "完成。"} })
	b.model.Push(askTurn("call_w"))
	_, evs := b.post("", input("thread-win", "r1", []map[string]any{userMsg("u1", "部署")}))
	id := interruptOf(t, last(t, evs))["id"].(string)

	var wg sync.WaitGroup
	var aguiEvs []event
	var status int
	var body []byte
	start := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		<-start
		_, aguiEvs = b.post("", input("thread-win", "r2", nil, resolved(id, map[string]any{"selections": []string{"prod"}})))
	}()
	go func() {
		defer wg.Done()
		<-start
		resp := b.srv.Request("POST", "/api/chat/continue", map[string]any{"sessionId": "thread-win", "requestId": id, "selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
		defer resp.Body.Close()
		status = resp.StatusCode
		body, _ = io.ReadAll(resp.Body)
	}()
	close(start)
	wg.Wait()

	aguiWon := false
	for _, e := range aguiEvs {
		if e.str("type") == "TOOL_CALL_RESULT" {
			aguiWon = true
		}
	}
	if aguiWon {
		require.Equal(t, http.StatusConflict, status, "%s", body)
		require.Contains(t, string(body), "already_resolved")
	} else {
		require.Equal(t, http.StatusAccepted, status, "%s", body)
		require.Equal(t, "RUN_STARTED", aguiEvs[0].str("type"), "the AG-UI replay reports the run instead: %v", types(aguiEvs))
	}
	require.Equal(t, "success", outcome(t, last(t, aguiEvs)))
	tr := b.transcript("thread-win")
	require.Equal(t, 1, toolResults(tr, "call_w"))
	require.Len(t, tr.Interactions, 1)
	require.Equal(t, api.StatusAnswered, tr.Interactions[0].Status)
}

func testReasoning(t *testing.T) {
	t.Parallel()
	b := setup(t)
	turn := askTurn("call_think")
	turn.Reasoning = "用户没说环境，先问。"
	b.model.Push(turn)
	_, evs := b.post("", input("thread-reasoning", "r1", []map[string]any{userMsg("u1", "部署")}))
	// The reasoning and the text are batched apart, so their deltas may
	// interleave; each stays one well-formed message (verifyEvents checks
	// the sequence in TestAGUI).
	var thought strings.Builder
	count := map[string]int{}
	for _, e := range evs {
		ty := e.str("type")
		count[ty]++
		if ty == "REASONING_MESSAGE_CONTENT" {
			thought.WriteString(e.str("delta"))
		}
	}
	for _, ty := range []string{"RUN_STARTED", "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_END", "REASONING_END",
		"TEXT_MESSAGE_START", "TEXT_MESSAGE_END", "TOOL_CALL_START", "TOOL_CALL_END", "RUN_FINISHED"} {
		require.Equal(t, 1, count[ty], "%s in %v", ty, types(evs))
	}
	require.Equal(t, "用户没说环境，先问。", thought.String())
	// The batches may come in either order, so the reasoning's start is
	// found by its type, not by its position.
	var reasoningID, textID string
	for _, e := range evs {
		switch e.str("type") {
		case "REASONING_MESSAGE_START":
			reasoningID = e.str("messageId")
		case "TEXT_MESSAGE_START":
			textID = e.str("messageId")
		}
	}
	require.NotEmpty(t, reasoningID)
	require.NotEqual(t, reasoningID, textID, "the reasoning is a message of its own")
}

// An approval (docs/design.md §10) is an interrupt with reason confirmation; its
// resume payload is the decision body of POST /api/chat/continue.
func testApproval(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	b := setup(t, func(o *lubantest.Options) {
		o.Workspace = ws
		o.Tools = []tool.Tool{tool.WriteFile(ws)}
	})
	args := `{"path":"plan.md","content":"# Plan\n"}`
	b.model.Push(fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{{ID: "call_write", Name: "write_file", Arguments: args}}}, fakeopenai.Turn{Text: "写好了。"})
	_, evs := b.post("", input("thread-approval", "r1", []map[string]any{userMsg("u1", "写计划")}))
	in := interruptOf(t, last(t, evs))
	require.Equal(t, "confirmation", in["reason"])
	require.Equal(t, "call_write", in["toolCallId"])
	sch := in["responseSchema"].(map[string]any)
	require.Equal(t, []any{"decision"}, sch["required"])
	props := sch["properties"].(map[string]any)
	require.Equal(t, []any{"approve", "edit", "reject"}, props["decision"].(map[string]any)["enum"])
	require.Contains(t, props["arguments"].(map[string]any)["properties"], "path", "the tool's own argument schema")
	id := in["id"].(string)

	// An edit that breaks the tool's schema: invalid_answer, still open.
	_, evs = b.post("", input("thread-approval", "r2", nil, resolved(id, map[string]any{"decision": "edit", "arguments": map[string]any{"path": 7}})))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "invalid_answer", evs[0].str("code"))
	require.NotEmpty(t, evs[0]["metadata"].(map[string]any)["details"])
	_, err := os.Stat(filepath.Join(ws, "plan.md"))
	require.True(t, os.IsNotExist(err), "nothing ran")

	_, evs = b.post("", input("thread-approval", "r3", nil, resolved(id, map[string]any{"decision": "approve"})))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	var result event
	for _, e := range evs {
		if e.str("type") == "TOOL_CALL_RESULT" {
			result = e
		}
	}
	require.NotNil(t, result, "%v", types(evs))
	require.Equal(t, "call_write", result.str("toolCallId"))
	got, err := os.ReadFile(filepath.Join(ws, "plan.md"))
	require.NoError(t, err)
	require.Equal(t, "# Plan\n", string(got))
	require.Equal(t, 1, toolResults(b.transcript("thread-approval"), "call_write"))
}

// docs/design.md §32: two approvals of one model message are one
// RUN_FINISHED whose interrupts[] holds both, in call order; a resume[]
// with one refused entry refuses both (RUN_ERROR invalid_answer naming
// resume[1]) and both stay open; one entry resolves one and the stream ends
// with the other still open; a resume[] of the two resolves them together
// and the run goes on.
func testBatchInterrupts(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	b := setup(t, func(o *lubantest.Options) {
		o.Workspace = ws
		o.Tools = []tool.Tool{tool.WriteFile(ws)}
	})
	two := func(x, y string) fakeopenai.Turn {
		return fakeopenai.Turn{ToolCalls: []fakeopenai.ToolCall{
			{ID: "call_" + x, Name: "write_file", Arguments: `{"path":"` + x + `.md","content":"` + x + `"}`},
			{ID: "call_" + y, Name: "write_file", Arguments: `{"path":"` + y + `.md","content":"` + y + `"}`}}}
	}
	b.model.Push(two("a", "b"), fakeopenai.Turn{Text: "写好了。"}, two("c", "d"), fakeopenai.Turn{Text: "又写好了。"})
	interrupts := func(e event) []map[string]any {
		t.Helper()
		require.Equal(t, "interrupt", outcome(t, e))
		var out []map[string]any
		for _, it := range e["outcome"].(map[string]any)["interrupts"].([]any) {
			out = append(out, it.(map[string]any))
		}
		return out
	}
	_, evs := b.post("", input("thread-batch", "r1", []map[string]any{userMsg("u1", "写两个文件")}))
	require.Equal(t, 1, strings.Count(strings.Join(types(evs), " "), "RUN_FINISHED"), "%v", types(evs))
	its := interrupts(last(t, evs))
	require.Len(t, its, 2)
	require.Equal(t, "call_a", its[0]["toolCallId"])
	require.Equal(t, "call_b", its[1]["toolCallId"])
	a, bb := its[0]["id"].(string), its[1]["id"].(string)
	approve := map[string]any{"decision": "approve"}

	// Attaching to the thread shows both again.
	_, evs = b.post("", input("thread-batch", "r2", nil))
	require.Len(t, interrupts(last(t, evs)), 2)

	_, evs = b.post("", input("thread-batch", "r3", nil, resolved(a, approve), resolved(bb, map[string]any{"decision": "maybe"})))
	require.Equal(t, []string{"RUN_ERROR"}, types(evs))
	require.Equal(t, "invalid_answer", evs[0].str("code"))
	details := evs[0]["metadata"].(map[string]any)["details"].([]any)
	require.Equal(t, "resume[1].decision", details[0].(map[string]any)["field"])
	var p api.PendingResponse
	require.Equal(t, http.StatusOK, b.srv.JSON("GET", "/api/interactions/pending?sessionId=thread-batch", nil, &p))
	require.Len(t, p.Requests, 2, "nothing was consumed")

	_, evs = b.post("", input("thread-batch", "r4", nil, resolved(a, approve), resolved(bb, approve)))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	for _, f := range []string{"a", "b"} {
		got, err := os.ReadFile(filepath.Join(ws, f+".md"))
		require.NoError(t, err)
		require.Equal(t, f, string(got))
	}
	require.Len(t, b.model.Requests(), 2, "one model call after both")

	// One entry resolves one: the stream ends with the other still open.
	_, evs = b.post("", input("thread-batch", "r5", []map[string]any{userMsg("u2", "再写两个")}))
	its = interrupts(last(t, evs))
	require.Len(t, its, 2)
	_, evs = b.post("", input("thread-batch", "r6", nil, resolved(its[1]["id"].(string), map[string]any{"decision": "reject"})))
	left := interrupts(last(t, evs))
	require.Len(t, left, 1)
	require.Equal(t, its[0]["id"], left[0]["id"])
	_, evs = b.post("", input("thread-batch", "r7", nil, resolved(its[0]["id"].(string), approve)))
	require.Equal(t, "success", outcome(t, last(t, evs)))
	_, err := os.Stat(filepath.Join(ws, "d.md"))
	require.True(t, os.IsNotExist(err), "the rejected call did not run")
}

// TestAGUI runs every case in parallel, then validates every response they
// captured with @ag-ui/core's zod schemas and @ag-ui/client's verifyEvents.
func TestAGUI(t *testing.T) {
	t.Run("cases", func(t *testing.T) {
		t.Run("AskInterruptResumeSuccess", testAskInterruptResumeSuccess)
		t.Run("Reasoning", testReasoning)
		t.Run("Approval", testApproval)
		t.Run("BatchInterrupts", testBatchInterrupts)
		t.Run("InvalidAnswerKeepsInterruptOpen", testInvalidAnswerKeepsInterruptOpen)
		t.Run("ReplayedResume", testReplayedResume)
		t.Run("ReplayWhileNextQuestionWaits", testReplayWhileNextQuestionWaits)
		t.Run("CancelResume", testCancelResume)
		t.Run("LegacyClientCancel", testLegacyClientCancel)
		t.Run("FrontendToolMessage", testFrontendToolMessage)
		t.Run("FrontendToolResume", testFrontendToolResume)
		t.Run("ThreadsAndInterruptsAreOwned", testThreadsAndInterruptsAreOwned)
		t.Run("ExpiredInterrupt", testExpiredInterrupt)
		t.Run("MalformedInputs", testMalformedInputs)
		t.Run("OneWinnerAcrossProtocols", testOneWinnerAcrossProtocols)
	})
	if t.Failed() {
		return
	}
	captured.Lock()
	defer captured.Unlock()
	require.NotEmpty(t, captured.m)
	aguitest.Validate(t, captured.m)
}
