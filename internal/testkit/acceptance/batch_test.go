package acceptance

import (
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

const writeArgsB = `{"path":"notes/todo.md","content":"- ship\n"}`

// batchPending is GET /api/interactions/pending with every request.
type batchPending struct {
	Pending  *api.InputRequest  `json:"pending"`
	Requests []api.InputRequest `json:"requests"`
}

// batchBody is the batch form of a continue: answers entries with requestId.
func batchBody(sessionID string, entries ...map[string]any) map[string]any {
	return map[string]any{"sessionId": sessionID, "answers": entries}
}

// pauseOfTwo starts a run whose model asks to write two files in one
// message and returns the chat stream's events (which must show both
// approvals) and the requests.
func pauseOfTwo(t *testing.T, e *env) (string, string, []api.InputRequest) {
	t.Helper()
	e.model.push(turn{text: "写两个文件", calls: []call{{id: "call_a", name: "write_file", args: writeArgs}, {id: "call_b", name: "write_file", args: writeArgsB}}}, turn{text: "写好了"})
	sid, rid, evs := e.chat("", "写计划和待办")
	req := named(evs, "user_input_required")
	require.Len(t, req, 2, "the chat stream shows both approvals of the pause: %v", lubantest.Names(evs))
	require.Equal(t, "user_input_required", evs[len(evs)-1].Name)
	var reqs []api.InputRequest
	for _, ev := range req {
		reqs = append(reqs, decode[api.InputRequest](t, ev))
	}
	require.Equal(t, "call_a", reqs[0].ToolCallID)
	require.Equal(t, "call_b", reqs[1].ToolCallID)
	var p batchPending
	e.get("/api/interactions/pending?sessionId="+sid, &p)
	require.Len(t, p.Requests, 2)
	require.Equal(t, reqs[0].ID, p.Pending.ID)
	require.Equal(t, reqs[0].ID, p.Requests[0].ID)
	require.Equal(t, reqs[1].ID, p.Requests[1].ID)
	return sid, rid, reqs
}

// docs/design.md §32 over loopback HTTP: two approvals of one model message
// are asked in one pause; the batch form is all or none (422 naming the
// entry, 409 for a request no longer pending, each leaving every request
// pending); with Accept: application/json it answers 202 with a receipt
// per entry; the tools run once each and the model hears both.
func TestBatchContinueAllOrNone(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	sid, rid, reqs := pauseOfTwo(t, e)
	approve := func(id string) map[string]any { return map[string]any{"requestId": id, "decision": "approve"} }
	stillTwo := func() {
		t.Helper()
		var p batchPending
		e.get("/api/interactions/pending?sessionId="+sid, &p)
		require.Len(t, p.Requests, 2, "nothing changed")
	}

	ae := e.reject(batchBody(sid, approve(reqs[0].ID), map[string]any{"requestId": reqs[1].ID, "decision": "maybe"}), http.StatusUnprocessableEntity, "invalid_answer")
	require.Equal(t, "answers[1].decision", ae.Error.Details[0].Field)
	stillTwo()
	ae = e.reject(batchBody(sid, approve(reqs[0].ID), approve(reqs[0].ID)), http.StatusUnprocessableEntity, "invalid_answer")
	require.Equal(t, "answers[1].requestId", ae.Error.Details[0].Field)
	require.Equal(t, api.DetailDuplicate, ae.Error.Details[0].Code)
	stillTwo()
	ae = e.reject(batchBody(sid, approve(reqs[0].ID), approve("ask_of_another_session")), http.StatusUnprocessableEntity, "invalid_answer")
	require.Equal(t, "answers[1].requestId", ae.Error.Details[0].Field)
	stillTwo()
	// A top-level requestId beside the batch's answers is no body of either form.
	ae = e.reject(map[string]any{"sessionId": sid, "requestId": reqs[0].ID, "answers": []any{approve(reqs[0].ID), approve(reqs[1].ID)}}, http.StatusBadRequest, "invalid_request")
	require.Contains(t, ae.Error.Message, "no top-level requestId")
	require.Equal(t, "requestId", ae.Error.Details[0].Field)
	stillTwo()
	// An empty batch says so (not "requestId is required").
	ae = e.reject(map[string]any{"sessionId": sid, "answers": []any{}}, http.StatusBadRequest, "invalid_request")
	require.Contains(t, ae.Error.Message, "answers is empty")
	require.Equal(t, "answers", ae.Error.Details[0].Field)
	stillTwo()
	_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.False(t, written)

	resp := e.srv.Request("POST", "/api/chat/continue", batchBody(sid, approve(reqs[0].ID), approve(reqs[1].ID)), "", "Accept", "application/json")
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "%s", raw)
	var acc api.ContinueAccepted
	require.NoError(t, json.Unmarshal(raw, &acc))
	require.Len(t, acc.Receipts, 2)
	require.Equal(t, reqs[0].ID, acc.Receipts[0].RequestID)
	require.Equal(t, reqs[1].ID, acc.Receipts[1].RequestID)
	require.Equal(t, api.DecisionApprove, acc.Receipts[1].Decision)
	require.Equal(t, acc.Receipts[0].RequestID, acc.Receipt.RequestID, "receipt is the first, for clients of the single form")
	evs := e.replay(sid, 0, doneOf(rid))
	require.Len(t, named(evs, "tool_result"), 2)
	plan, _ := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.Equal(t, "# Plan\n", plan)
	todo, _ := fileContent(t, filepath.Join(ws, "notes", "todo.md"))
	require.Equal(t, "- ship\n", todo)
	reqsSeen := e.waitRequests(2)
	require.Len(t, reqsSeen[1].toolMessages(), 2, "one model call sees both results")

	ae = e.reject(batchBody(sid, approve(reqs[0].ID), approve(reqs[1].ID)), http.StatusConflict, "already_resolved")
	require.Equal(t, reqs[0].ID, ae.Error.Receipt.RequestID)
}

// The continuation's SSE: answering one of two ends the stream after its
// resolution (the run still waits); a batch (here of the one left) streams
// the continuation to the run's end.
func TestBatchContinueStreams(t *testing.T) {
	t.Parallel()
	e, _, _ := approvalEnv(t)
	sid, _, reqs := pauseOfTwo(t, e)

	evs := e.answer(decisionBody(sid, reqs[1].ID, api.DecisionReject, map[string]any{"message": "not now"}))
	require.Equal(t, []string{"user_input_resolved", "tool_result"}, lubantest.Names(evs), "one of two: the stream ends with its resolution")
	var p batchPending
	e.get("/api/interactions/pending?sessionId="+sid, &p)
	require.Len(t, p.Requests, 1)
	require.Equal(t, reqs[0].ID, p.Pending.ID)

	evs = e.answer(batchBody(sid, map[string]any{"requestId": reqs[0].ID, "decision": "approve"}))
	names := lubantest.Names(evs)
	require.Equal(t, "user_input_resolved", names[0])
	require.Equal(t, "done", names[len(names)-1])
	require.Len(t, named(evs, "tool_result"), 1)
}

// asked2 splits a pause of two questions (docs/design.md §32) into one
// paused per question, in call order.
func asked2(t *testing.T, p paused) (paused, paused) {
	t.Helper()
	asked := named(p.events, "user_input_required")
	require.Len(t, asked, 2, "both questions in one pause: %v", lubantest.Names(p.events))
	first := p
	first.req = decode[api.InputRequest](t, asked[0])
	return first, p
}
