package acceptance

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/tool"
)

const writeArgs = `{"path":"notes/plan.md","content":"# Plan\n"}`

// approvalEnv is an env whose agent offers write_file (approval "always" by
// default) and count (no approval) on a workspace of its own.
func approvalEnv(t *testing.T, mods ...func(o *lubantest.Options)) (*env, string, *atomic.Int32) {
	t.Helper()
	ws := t.TempDir()
	var n atomic.Int32
	all := append([]func(o *lubantest.Options){func(o *lubantest.Options) {
		o.Workspace = ws
		o.Tools = []tool.Tool{tool.WriteFile(ws), counter(&n)}
	}}, mods...)
	return setup(t, all...), ws, &n
}

// decisionBody is a continue body for an approval.
func decisionBody(sessionID, requestID string, decision api.Decision, extra map[string]any) map[string]any {
	b := map[string]any{"sessionId": sessionID, "requestId": requestID, "decision": decision}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func fileContent(t *testing.T, path string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return "", false
	}
	require.NoError(t, err)
	return string(b), true
}

// docs/design.md §10: approve — the call waits as an approval interaction, the tool
// runs once after "approve", its own result is the ToolResult, and the next
// model request carries exactly that.
func TestApprovalApprove(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	e.model.push(turn{text: "写计划", calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "写好了"})
	p := e.ask("", "帮我写计划")

	require.Equal(t, api.ToolApproval, p.req.Tool)
	require.Equal(t, api.ModeApproval, p.req.Mode)
	require.Equal(t, "Run write_file?", p.req.Title)
	require.Equal(t, "write_file", p.req.ToolName)
	require.Equal(t, "call_w", p.req.ToolCallID)
	require.JSONEq(t, writeArgs, string(p.req.Arguments))
	require.JSONEq(t, string(tool.WriteFile(ws).Spec().Parameters), string(p.req.ArgumentsSchema))
	require.Equal(t, tool.WriteFile(ws).Spec().Description, p.req.Description)
	require.Empty(t, named(p.events, "tool_result"), "the tool does not run before approval")
	_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.False(t, written)
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID)

	evs := e.answer(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil))
	require.Equal(t, []string{"user_input_resolved", "tool_result"}, lubantest.Names(evs)[:2])
	rc := decode[api.Receipt](t, evs[0])
	require.Equal(t, api.StatusAnswered, rc.Status)
	require.Equal(t, api.DecisionApprove, rc.Decision)
	res := results(t, evs)[0]
	require.Equal(t, toolResult{ToolCallID: "call_w", Name: "write_file", Content: "wrote 7 bytes to notes/plan.md"}, res)
	got, _ := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.Equal(t, "# Plan\n", got)
	require.Equal(t, "completed", doneStatus(t, evs))

	reqs := e.waitRequests(2)
	tm := reqs[1].toolMessages()
	require.Len(t, tm, 1)
	require.Equal(t, wireMessage{role: "tool", content: "wrote 7 bytes to notes/plan.md", toolCallID: "call_w"}, tm[0])

	e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil), http.StatusConflict, "already_resolved")
	tv := e.trace(p.sessionID)
	require.Equal(t, []string{"requested", "answered", "rejected:duplicate"}, tv.actions(p.req.ID))
	var sum approval.AuditSummary
	for _, a := range tv.Audit {
		if a.RequestID == p.req.ID && a.Action == "answered" {
			require.NoError(t, json.Unmarshal(a.Summary, &sum))
		}
	}
	require.Equal(t, api.DecisionApprove, sum.Decision)
	require.Equal(t, "write_file", sum.Tool)
	require.NotEmpty(t, sum.Principal, "the answering principal")
	require.NotContains(t, sum.Principal, "test-token", "a principal, not its token")
	require.Len(t, sum.ArgumentsSHA256, 64)
}

// docs/design.md §10: edit — an invalid edit is 422 and keeps the request pending;
// a valid one runs the tool once with it, and the model is told what changed.
func TestApprovalEdit(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")

	ae := e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionEdit, map[string]any{"arguments": map[string]any{"path": "", "content": 3}}),
		http.StatusUnprocessableEntity, "invalid_answer")
	require.Equal(t, []api.FieldError{
		{Field: "arguments.content", Code: api.DetailInvalidType, Params: map[string]any{"expected": "string", "got": "number"}, Message: "got number, want string"},
		{Field: "arguments.path", Code: api.DetailTooShort, Params: map[string]any{"min": 1.0, "got": 0.0, "unit": "characters"}, Message: "minLength: got 0, want 1"},
	}, ae.Error.Details)
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID, "a rejected edit consumes nothing")

	edited := map[string]any{"path": "docs/plan.md", "content": "# Plan v2\n"}
	evs := e.answer(decisionBody(p.sessionID, p.req.ID, api.DecisionEdit, map[string]any{"arguments": edited}))
	rc := decode[api.Receipt](t, evs[0])
	require.Equal(t, api.DecisionEdit, rc.Decision)
	require.JSONEq(t, `{"path":"docs/plan.md","content":"# Plan v2\n"}`, string(rc.Arguments))
	got, _ := fileContent(t, filepath.Join(ws, "docs", "plan.md"))
	require.Equal(t, "# Plan v2\n", got)
	_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.False(t, written, "the model's own arguments never ran")

	want := "The user changed the arguments of this write_file call before approving it. It ran with these arguments instead of yours:\n" +
		`{"content":"# Plan v2\n","path":"docs/plan.md"}` + "\n\nResult:\nwrote 10 bytes to docs/plan.md"
	require.Equal(t, want, results(t, evs)[0].Content)
	reqs := e.waitRequests(2)
	require.Equal(t, wireMessage{role: "tool", content: want, toolCallID: "call_w"}, reqs[1].toolMessages()[0])
	require.Equal(t, []string{"requested", "rejected:invalid_answer", "answered"}, e.trace(p.sessionID).actions(p.req.ID))
}

// docs/design.md §10: reject — the tool never runs, the ToolResult is an error with
// the user's message, and the run continues with the model's next turn.
func TestApprovalReject(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "那我不写了"})
	p := e.ask("", "写")
	evs := e.answer(decisionBody(p.sessionID, p.req.ID, api.DecisionReject, map[string]any{"message": "不要写文件"}))
	require.Equal(t, []string{"user_input_resolved", "tool_result"}, lubantest.Names(evs)[:2])
	require.Len(t, named(evs, "message"), 1, "the model's next turn")
	rc := decode[api.Receipt](t, evs[0])
	require.Equal(t, api.DecisionReject, rc.Decision)
	require.Equal(t, "不要写文件", rc.Message)
	res := results(t, evs)[0]
	want := `The user declined this write_file call; it did not run. Their message: "不要写文件" Do not repeat the same call unless the user asks for it.`
	require.Equal(t, toolResult{ToolCallID: "call_w", Name: "write_file", Content: want, IsError: true}, res)
	require.Equal(t, "completed", doneStatus(t, evs))
	_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.False(t, written)
	reqs := e.waitRequests(2)
	require.Equal(t, wireMessage{role: "tool", content: want, toolCallID: "call_w"}, reqs[1].toolMessages()[0])
}

// docs/design.md §10: cancelled: true stops the run; the tool never runs.
func TestApprovalCancel(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}})
	p := e.ask("", "写")
	evs := e.answer(cancelBody(p.sessionID, p.req.ID))
	require.Equal(t, []string{"user_input_resolved", "tool_result", "done"}, lubantest.Names(evs))
	require.Equal(t, api.StatusCancelled, decode[api.Receipt](t, evs[0]).Status)
	require.True(t, results(t, evs)[0].IsError)
	require.Equal(t, "cancelled", doneStatus(t, evs))
	_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.False(t, written)
	require.Len(t, e.model.requests(), 1)
}

// docs/design.md §10: an approval beside an ask_user and a free tool in one
// message: the free tool runs once at once, then the question and the
// approval are asked in one pause in call order (§32), and the model is
// called once, after every call has exactly one result, in call order.
func TestApprovalBesideAskAndFreeTool(t *testing.T) {
	t.Parallel()
	e, ws, n := approvalEnv(t)
	e.model.push(turn{text: "三件事", calls: []call{
		{id: "call_a", name: "ask_user", args: singleArgs},
		{id: "call_w", name: "write_file", args: writeArgs},
		{id: "call_c", name: "count", args: `{}`},
	}}, turn{text: "都好了"})
	p1, p2 := asked2(t, e.ask("", "三件事"))
	require.Equal(t, []toolResult{{ToolCallID: "call_c", Name: "count", Content: "count=1"}}, results(t, p1.events), "the free tool runs first")
	require.Equal(t, "call_a", p1.req.ToolCallID, "then the person's calls in call order")
	evs := e.answer(body(p1.sessionID, p1.req.ID, []string{"safe"}, ""))
	require.Equal(t, []string{"user_input_resolved", "tool_result"}, lubantest.Names(evs), "the run waits for the approval")
	require.Equal(t, "call_w", p2.req.ToolCallID)
	require.Equal(t, api.ModeApproval, p2.req.Mode)
	require.Len(t, e.model.requests(), 1)
	evs = e.answer(decisionBody(p1.sessionID, p2.req.ID, api.DecisionApprove, nil))
	require.Equal(t, "completed", doneStatus(t, evs))
	require.Equal(t, int32(1), n.Load(), "the free tool ran once")
	got, _ := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.Equal(t, "# Plan\n", got)

	reqs := e.waitRequests(2)
	require.Len(t, reqs, 2)
	tm := reqs[1].toolMessages()
	require.Len(t, tm, 3)
	require.Equal(t, []string{"call_a", "call_w", "call_c"}, []string{tm[0].toolCallID, tm[1].toolCallID, tm[2].toolCallID})
	require.Equal(t, "wrote 7 bytes to notes/plan.md", tm[1].content)
}

// docs/design.md §10 remember: "session" approves later calls of the same tool in
// the session without asking; it is in the receipt and the trace.
func TestApprovalRememberSession(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_1", name: "write_file", args: writeArgs}}}, turn{text: "one"},
		turn{calls: []call{{id: "call_2", name: "write_file", args: `{"path":"b.txt","content":"b"}`}}}, turn{text: "two"})
	p := e.ask("", "first")
	evs := e.answer(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, map[string]any{"remember": "session"}))
	require.Equal(t, api.RememberSession, decode[api.Receipt](t, evs[0]).Remember)
	require.Equal(t, "completed", doneStatus(t, evs))

	_, _, evs = e.chat(p.sessionID, "second")
	require.Empty(t, named(evs, "user_input_required"), "not asked again in this session")
	require.Equal(t, "wrote 1 bytes to b.txt", results(t, evs)[0].Content)
	require.Equal(t, "completed", doneStatus(t, evs))
	got, _ := fileContent(t, filepath.Join(ws, "b.txt"))
	require.Equal(t, "b", got)
	require.Len(t, e.trace(p.sessionID).kinds("approval"), 1, "the remembered approval is traced")

	// Another session asks again.
	e.model.push(turn{calls: []call{{id: "call_3", name: "write_file", args: writeArgs}}})
	p3 := e.ask("", "third")
	require.Equal(t, api.ModeApproval, p3.req.Mode)
}

// docs/design.md §10 + §3: another principal's approval is 404; two concurrent
// decisions on one approval have one winner and the tool runs once.
func TestApprovalCrossPrincipalAndConcurrent(t *testing.T) {
	t.Parallel()
	e, _, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")
	resp := e.srv.Request("POST", "/api/chat/continue", decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil), "other-token")
	e.expectError(resp, http.StatusNotFound, "session_not_found")
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID)

	var wg sync.WaitGroup
	codes := make([]int, 4)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.srv.Request("POST", "/api/chat/continue", decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil), "", "Accept", "application/json")
			codes[i] = r.StatusCode
			r.Body.Close()
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		if c == http.StatusAccepted {
			won++
		} else {
			require.Equal(t, http.StatusConflict, c)
		}
	}
	require.Equal(t, 1, won, "one winner: %v", codes)
	evs := e.srv.EventsUntil(p.sessionID, 0, "done", waitFor)
	require.Len(t, named(evs, "tool_result"), 1, "the tool ran once")
}

// docs/design.md §10 + §3: an approval nobody answers expires like a question: the
// run ends expired and the tool never runs.
func TestApprovalExpires(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t, func(o *lubantest.Options) { o.TTL = time.Hour })
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}})
	p := e.ask("", "写")
	sub := e.srv.Events(p.sessionID, p.events[len(p.events)-1].ID)
	defer sub.Close()
	e.clock.advance(time.Hour + time.Second)
	evs, err := sub.Until("done", waitFor)
	require.NoError(t, err)
	require.Equal(t, "expired", doneStatus(t, evs))
	res := results(t, evs)[0]
	require.True(t, res.IsError)
	require.Equal(t, "Nobody approved this write_file call before the request expired; it did not run, and the task stops here.", res.Content)
	_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.False(t, written)
	e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil), http.StatusGone, "interaction_expired")
}

// docs/design.md §10: an approval survives a restart (the run holds no goroutine)
// and the tool runs once after it.
func TestApprovalAcrossRestart(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")
	e.restart()
	pv := e.pending(p.sessionID)
	require.Equal(t, p.req.ID, pv.Pending.ID)
	evs := e.answer(decisionBody(p.sessionID, p.req.ID, api.DecisionApprove, nil))
	require.Equal(t, "completed", doneStatus(t, evs))
	got, _ := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.Equal(t, "# Plan\n", got)
}

// docs/design.md §10: a person is never asked to approve arguments the tool would
// refuse: the model gets an error result and its next turn.
func TestApprovalInvalidArgumentsNeverReachAPerson(t *testing.T) {
	t.Parallel()
	e, _, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: `{"path":"a"}`}}}, turn{text: "sorry"})
	_, _, evs := e.chat("", "写")
	require.Empty(t, named(evs, "user_input_required"))
	require.Equal(t, toolResult{ToolCallID: "call_w", Name: "write_file", Content: "invalid arguments for write_file: content: required but missing", IsError: true}, results(t, evs)[0])
	require.Equal(t, "completed", doneStatus(t, evs))
}

// docs/design.md §10: an edit is checked by the tool's own rules too (a path must
// stay inside the workspace, tool.ArgsChecker) before the approval
// resolves: an edit that leads out, or names a directory, is 422
// invalid_answer naming arguments.path, nothing runs, and the request stays
// pending for a valid answer.
func TestApprovalEditOutsideWorkspaceIs422(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(ws, "out")))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "adir"), 0o755))
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "ok"})
	p := e.ask("", "写")

	for _, tc := range []struct {
		path string
		code api.FieldCode
		msg  string
	}{
		{"../escape.md", api.DetailOutsideWorkspace, `"../escape.md" leads outside the workspace`},
		{"/etc/luban-escape", api.DetailOutsideWorkspace, `"/etc/luban-escape" is absolute, outside the workspace; give a path relative to it`},
		{"out/escape.md", api.DetailOutsideWorkspace, `"out/escape.md" resolves outside the workspace through a symbolic link`},
		{"adir", api.DetailIsDirectory, `"adir" is a directory; write_file writes files`},
	} {
		edited := map[string]any{"path": tc.path, "content": "x"}
		ae := e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionEdit, map[string]any{"arguments": edited}),
			http.StatusUnprocessableEntity, "invalid_answer")
		require.Equal(t, []api.FieldError{{Field: "arguments.path", Code: tc.code, Params: map[string]any{"path": tc.path}, Message: tc.msg}}, ae.Error.Details, tc.path)
		require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID, "%s: the request stays pending", tc.path)
	}
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was written outside")
	_, escaped := fileContent(t, filepath.Join(filepath.Dir(ws), "escape.md"))
	require.False(t, escaped)
	require.Len(t, e.model.requests(), 1, "the model was not called again")

	evs := e.answer(decisionBody(p.sessionID, p.req.ID, api.DecisionEdit, map[string]any{"arguments": map[string]any{"path": "in/plan.md", "content": "inside\n"}}))
	require.Equal(t, api.DecisionEdit, decode[api.Receipt](t, evs[0]).Decision)
	got, _ := fileContent(t, filepath.Join(ws, "in", "plan.md"))
	require.Equal(t, "inside\n", got)
	require.Equal(t, "completed", doneStatus(t, evs))
	require.Equal(t, []string{"requested", "rejected:invalid_answer", "rejected:invalid_answer", "rejected:invalid_answer", "rejected:invalid_answer", "answered"},
		e.trace(p.sessionID).actions(p.req.ID))
}

// docs/design.md §10: a call the tool itself would refuse (a path outside the
// workspace) is never put in front of a person: the model gets an error
// result naming the problem and its next turn.
func TestApprovalOutsideWorkspaceNeverReachesAPerson(t *testing.T) {
	t.Parallel()
	e, _, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: `{"path":"../../etc/x","content":"x"}`}}}, turn{text: "sorry"})
	_, _, evs := e.chat("", "写")
	require.Empty(t, named(evs, "user_input_required"))
	require.Equal(t, toolResult{ToolCallID: "call_w", Name: "write_file", Content: `invalid arguments for write_file: path: "../../etc/x" leads outside the workspace`, IsError: true}, results(t, evs)[0])
	require.Equal(t, "completed", doneStatus(t, evs))
	reqs := e.waitRequests(2)
	require.Equal(t, `invalid arguments for write_file: path: "../../etc/x" leads outside the workspace`, reqs[1].toolMessages()[0].content)
}

// The two kinds of answer do not mix: a question answered with an
// approval's fields, or an approval with a question's, is 422
// invalid_answer naming the field, and the request stays pending. Empty
// question fields beside a decision (what a generic client sends) are fine.
func TestApprovalAndQuestionFieldsDoNotMix(t *testing.T) {
	t.Parallel()
	e, ws, _ := approvalEnv(t)
	e.model.push(turn{calls: []call{{id: "call_a", name: "ask_user", args: singleArgs}, {id: "call_w", name: "write_file", args: writeArgs}}}, turn{text: "好"})
	p1, p2 := asked2(t, e.ask("", "两件事"))
	require.Equal(t, "call_a", p1.req.ToolCallID)
	ae := e.reject(decisionBody(p1.sessionID, p1.req.ID, api.DecisionApprove, map[string]any{"remember": "session"}), http.StatusUnprocessableEntity, "invalid_answer")
	require.Equal(t, []string{"decision", "remember"}, fieldsOf(ae))
	require.Equal(t, p1.req.ID, e.pending(p1.sessionID).Pending.ID)

	e.answer(body(p1.sessionID, p1.req.ID, []string{"safe"}, ""))
	require.Equal(t, api.ModeApproval, p2.req.Mode)
	ae = e.reject(decisionBody(p1.sessionID, p2.req.ID, api.DecisionApprove, map[string]any{"selections": []string{"safe"}, "customInput": "yes"}), http.StatusUnprocessableEntity, "invalid_answer")
	require.Equal(t, []string{"customInput", "selections"}, fieldsOf(ae))
	require.Equal(t, p2.req.ID, e.pending(p1.sessionID).Pending.ID)
	_, written := fileContent(t, filepath.Join(ws, "notes", "plan.md"))
	require.False(t, written)

	evs := e.answer(decisionBody(p1.sessionID, p2.req.ID, api.DecisionApprove, map[string]any{"selections": []string{}, "customInput": "", "cancelled": false}))
	require.Equal(t, "completed", doneStatus(t, evs))
	require.Equal(t, []string{"requested", "rejected:invalid_answer", "answered"}, e.trace(p1.sessionID).actions(p2.req.ID))
}

func fieldsOf(ae apiError) []string {
	out := make([]string, len(ae.Error.Details))
	for i, d := range ae.Error.Details {
		out[i] = d.Field
	}
	sort.Strings(out)
	return out
}

// docs/design.md §3/§10: a reject's message longer than approval.MaxMessageLen is 413
// payload_too_large naming the field and its bound, and consumes nothing; the expired approval's 410 carries
// its receipt (status expired, no decision).
func TestApprovalRejectMessageTooLongAndExpiredReceipt(t *testing.T) {
	t.Parallel()
	e, _, _ := approvalEnv(t, func(o *lubantest.Options) { o.TTL = time.Hour })
	e.model.push(turn{calls: []call{{id: "call_w", name: "write_file", args: writeArgs}}})
	p := e.ask("", "写")
	long := strings.Repeat("长", approval.MaxMessageLen+1)
	big := e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionReject, map[string]any{"message": long}), http.StatusRequestEntityTooLarge, "payload_too_large")
	// The 413 names the field and its bound, so the page can show the limit.
	require.Len(t, big.Error.Details, 1)
	require.Equal(t, "message", big.Error.Details[0].Field)
	require.Equal(t, api.DetailTooLong, big.Error.Details[0].Code)
	require.EqualValues(t, approval.MaxMessageLen, big.Error.Details[0].Params["max"])
	require.EqualValues(t, approval.MaxMessageLen+1, big.Error.Details[0].Params["got"])
	require.Equal(t, "characters", big.Error.Details[0].Params["unit"])
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID)

	sub := e.srv.Events(p.sessionID, p.events[len(p.events)-1].ID)
	defer sub.Close()
	e.clock.advance(time.Hour + time.Second)
	_, err := sub.Until("done", waitFor)
	require.NoError(t, err)
	ae := e.reject(decisionBody(p.sessionID, p.req.ID, api.DecisionReject, map[string]any{"message": "晚了"}), http.StatusGone, "interaction_expired")
	require.NotNil(t, ae.Error.Receipt)
	require.Equal(t, api.StatusExpired, ae.Error.Receipt.Status)
	require.Equal(t, "call_w", ae.Error.Receipt.ToolCallID)
	require.Empty(t, ae.Error.Receipt.Decision)
	require.Empty(t, ae.Error.Receipt.Message)
}
