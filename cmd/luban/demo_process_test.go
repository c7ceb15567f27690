package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
)

// The scripted demo of `make run` (`luban serve --model scripted`, no key)
// tells the whole story: every question card, then the form of the demo MCP
// server (`luban demo-mcp`, a real child process over stdio) answered
// through POST /api/chat/continue as the page does, its answer going back to
// the server and its plan to the model, then a write_file call that waits
// for approval and writes luban-demo/deploy-plan.md in the workspace only
// after "approve", once (docs/design.md §10, §11, docs/scenario.md).
func TestDemoEndsWithAnApprovedWrite(t *testing.T) {
	t.Parallel()
	url, work := startServeProc(t, nil, "--model", "scripted")
	cl, err := client.New(url, chatProcToken, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	st, err := cl.Chat(ctx, "", "开始演示")
	require.NoError(t, err)
	var modes []string
	var approval *api.InputRequest
	sid := ""
	for approval == nil {
		req, done := nextOf(ctx, t, cl, st, sid)
		require.NotNil(t, req, "the demo ended (%s) before its approval step; asked %v", done, modes)
		sid = req.SessionID
		if req.Tool == api.ToolApproval {
			approval = req
			break
		}
		modes = append(modes, string(req.Mode))
		switch {
		case req.Tool == api.ToolElicitation:
			checkRolloutForm(ctx, t, cl, req)
			st, err = cl.Continue(ctx, api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Decision: api.DecisionAccept,
				Content: json.RawMessage(`{"regions":["cn-east","eu-west"],"window":"saturday","canary":25,"rollback":false}`)})
		case req.Mode == api.ModeNumber:
			refuseOutOfBounds(ctx, t, cl, req)
			fallthrough
		default:
			st, err = cl.Continue(ctx, demoAnswer(t, req))
		}
		require.NoError(t, err)
	}
	require.Equal(t, []string{"single", "multiple", "toggle", "text", "number", "date", "directory", "questions", "form"}, modes)
	// The demo's last turn writes two files: both approvals wait at once
	// (docs/design.md §32), answered with one "Approve all" batch.
	p, err := cl.Pending(ctx, approval.SessionID)
	require.NoError(t, err)
	require.Len(t, p.Requests, 2)
	targets := map[string]string{}
	var all api.ContinueBatchRequest
	all.SessionID = approval.SessionID
	for i, a := range p.Requests {
		require.Equal(t, api.ModeApproval, a.Mode)
		require.Equal(t, "write_file", a.ToolName)
		require.Equal(t, "Run write_file?", a.Title)
		var args struct{ Path, Content string }
		require.NoError(t, json.Unmarshal(a.Arguments, &args))
		require.Equal(t, []string{"luban-demo/deploy-plan.md", "luban-demo/checklist.md"}[i], args.Path)
		targets[a.ToolCallID] = filepath.Join(work, filepath.FromSlash(args.Path))
		_, err = os.Stat(targets[a.ToolCallID])
		require.True(t, errors.Is(err, os.ErrNotExist), "nothing is written before the approval")
		all.Answers = append(all.Answers, api.ContinueEntry{RequestID: a.ID, Decision: api.DecisionApprove})
	}
	st, err = cl.ContinueBatch(ctx, all)
	require.NoError(t, err)
	req, done := pauseOf(t, st)
	require.Nil(t, req)
	require.Equal(t, "completed", done)
	for _, a := range p.Requests {
		var args struct{ Path, Content string }
		require.NoError(t, json.Unmarshal(a.Arguments, &args))
		got, err := os.ReadFile(targets[a.ToolCallID])
		require.NoError(t, err)
		require.Equal(t, args.Content, string(got))
	}
	tr, err := cl.Trace(ctx, approval.SessionID)
	require.NoError(t, err)
	started := map[string]int{}
	for _, e := range tr.Trace {
		var d struct{ ToolCallID string }
		if e.Kind == "tool_started" && json.Unmarshal(mustRaw(e.Data), &d) == nil && targets[d.ToolCallID] != "" {
			started[d.ToolCallID]++
		}
	}
	require.Len(t, started, 2)
	for id, n := range started {
		require.Equal(t, 1, n, "write_file %s ran once", id)
	}

	// The MCP server's plan is the call's result, the model says what came
	// back before the write and sums it up at the end.
	const plan = "上线计划 (Rollout plan): 区域 (regions) 华东 (East China), 西欧 (West Europe); 窗口 (window) 周六上午 (Saturday morning); 灰度 (canary) 25%; 失败时不回滚 (no rollback on failure)."
	msgs := transcript(ctx, t, cl, approval.SessionID)
	res := toolMessage(t, msgs, "demo__plan_rollout")
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, plan)
	require.Contains(t, assistantCalling(t, msgs, "write_file").Content, "- demo__plan_rollout: "+plan)
	require.Contains(t, msgs[len(msgs)-1].Content, "- demo__plan_rollout: "+plan)
	require.True(t, strings.HasPrefix(msgs[len(msgs)-1].Content, "全部完成！"), "the written plan ends the demo as done")
}

// The demo MCP server's form is a 2026-07-28 input request, kept with the
// paused run: after `luban serve` stops (SIGTERM) and starts again on the same
// database, the same question is pending and resumable; a decline given to
// the new process retries the call on the new demo server, which says
// nothing was planned, and the demo goes on to its approval.
func TestDemoRolloutFormSurvivesARestart(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "luban.db")
	url, _, stop := startServeProcStop(t, nil, "--model", "scripted", "--db", db)
	cl, err := client.New(url, chatProcToken, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	st, err := cl.Chat(ctx, "", "开始演示")
	require.NoError(t, err)
	var form *api.InputRequest
	sid := ""
	for form == nil {
		req, done := nextOf(ctx, t, cl, st, sid)
		require.NotNil(t, req, "the demo ended (%s) before the MCP form", done)
		sid = req.SessionID
		require.NotEqual(t, api.ToolApproval, req.Tool, "the MCP form comes before the approval")
		if req.Tool == api.ToolElicitation {
			form = req
			break
		}
		st, err = cl.Continue(ctx, demoAnswer(t, req))
		require.NoError(t, err)
	}
	stop()

	url, _, _ = startServeProcStop(t, nil, "--model", "scripted", "--db", db)
	cl, err = client.New(url, chatProcToken, nil)
	require.NoError(t, err)
	p, err := cl.Pending(ctx, form.SessionID)
	require.NoError(t, err)
	require.NotNil(t, p.Pending)
	require.Equal(t, form.ID, p.Pending.ID, "the same question after the restart")
	require.True(t, p.Pending.Resumable)
	st, err = cl.Continue(ctx, api.ContinueRequest{SessionID: form.SessionID, RequestID: form.ID, Decision: api.DecisionDecline})
	require.NoError(t, err)
	approval, done := pauseOf(t, st)
	require.NotNil(t, approval, "the demo ended (%s) instead of asking its approval", done)
	require.Equal(t, api.ToolApproval, approval.Tool)
	// Both writes of the last turn are rejected, one by one: the first
	// leaves the run waiting for the second.
	p, err = cl.Pending(ctx, form.SessionID)
	require.NoError(t, err)
	require.Len(t, p.Requests, 2)
	for i, a := range p.Requests {
		st, err = cl.Continue(ctx, api.ContinueRequest{SessionID: a.SessionID, RequestID: a.ID, Decision: api.DecisionReject, Message: "not today"})
		require.NoError(t, err)
		var next *api.InputRequest
		next, done = pauseOf(t, st)
		require.Nil(t, next)
		if i == 0 {
			require.Empty(t, done, "the run waits for the second approval")
		}
	}
	require.Equal(t, "completed", done)
	msgs := transcript(ctx, t, cl, form.SessionID)
	res := toolMessage(t, msgs, "demo__plan_rollout")
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "你拒绝了上线安排表单，什么也没有计划。(You declined the rollout form; nothing was planned.)", res.Content)
	// The rejected write ends the demo saying the plan was not written.
	final := msgs[len(msgs)-1].Content
	require.NotContains(t, final, "全部完成")
	require.Contains(t, final, "部署计划没有写入")
	require.Contains(t, final, `- write_file: 出错 (error): The user declined this write_file call; it did not run. Their message: "not today"`)
}

// checkRolloutForm checks the demo MCP server's form card: its server, its
// fields (required first) with their bounds and defaults, and that a canary
// share beyond 100 is refused (422, detail content.canary) with the form
// still pending.
func checkRolloutForm(ctx context.Context, t *testing.T, cl *client.Client, req *api.InputRequest) {
	t.Helper()
	require.Equal(t, api.ModeForm, req.Mode)
	require.Equal(t, "demo", req.Server)
	require.True(t, req.Resumable)
	require.Contains(t, req.Title, "上线安排 (Rollout plan)")
	var names []string
	for _, f := range req.Fields {
		names = append(names, f.Name)
	}
	require.Equal(t, []string{"canary", "regions", "window", "rollback"}, names)
	canary := req.Fields[0]
	require.Equal(t, api.FieldInteger, canary.Type)
	require.True(t, canary.Required)
	require.Equal(t, 100.0, *canary.Maximum)
	require.JSONEq(t, `10`, string(canary.Default))
	require.Equal(t, api.FieldMulti, req.Fields[1].Type)
	require.Len(t, req.Fields[1].Options, 3)
	require.Equal(t, api.FieldEnum, req.Fields[2].Type)
	require.Equal(t, api.FieldBoolean, req.Fields[3].Type)

	_, err := cl.Continue(ctx, api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Decision: api.DecisionAccept,
		Content: json.RawMessage(`{"regions":["cn-east"],"window":"now","canary":500}`)})
	var e *client.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, 422, e.Status)
	require.Len(t, e.Details, 1)
	require.Equal(t, "content.canary", e.Details[0].Field)
	p, err := cl.Pending(ctx, req.SessionID)
	require.NoError(t, err)
	require.NotNil(t, p.Pending)
	require.Equal(t, req.ID, p.Pending.ID, "the form stays pending")
}

// transcript is the session's messages.
func transcript(ctx context.Context, t *testing.T, cl *client.Client, sessionID string) []api.MessageView {
	t.Helper()
	tr, err := cl.Session(ctx, sessionID)
	require.NoError(t, err)
	require.NotEmpty(t, tr.Messages)
	return tr.Messages
}

// toolMessage is the one tool result of the tool named name.
func toolMessage(t *testing.T, msgs []api.MessageView, name string) api.MessageView {
	t.Helper()
	calls := map[string]string{}
	var out []api.MessageView
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			calls[c.ID] = c.Name
		}
		if m.Role == api.RoleTool && calls[m.ToolCallID] == name {
			out = append(out, m)
		}
	}
	require.Len(t, out, 1, "results of %s", name)
	return out[0]
}

// assistantCalling is the assistant message that calls the tool named name.
func assistantCalling(t *testing.T, msgs []api.MessageView, name string) api.MessageView {
	t.Helper()
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Name == name {
				return m
			}
		}
	}
	t.Fatalf("no assistant message calls %s", name)
	return api.MessageView{}
}

// refuseOutOfBounds checks the demo's "How many replicas?": a whole number,
// 1 or more. -2.5 and 0 are refused (422, a FieldError code on customInput)
// and the question stays pending.
func refuseOutOfBounds(ctx context.Context, t *testing.T, cl *client.Client, req *api.InputRequest) {
	t.Helper()
	require.True(t, req.Integer)
	require.NotNil(t, req.Minimum)
	require.Equal(t, 1.0, *req.Minimum)
	for in, code := range map[string]api.FieldCode{"-2.5": api.DetailInvalidType, "0": api.DetailOutOfRange} {
		_, err := cl.Continue(ctx, api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Selections: []string{}, CustomInput: in})
		var e *client.Error
		require.ErrorAs(t, err, &e, in)
		require.Equal(t, 422, e.Status, in)
		require.Len(t, e.Details, 1, in)
		require.Equal(t, "customInput", e.Details[0].Field, in)
		require.Equal(t, code, e.Details[0].Code, in)
		p, err := cl.Pending(ctx, req.SessionID)
		require.NoError(t, err)
		require.NotNil(t, p.Pending, "%s: the question stays pending", in)
		require.Equal(t, req.ID, p.Pending.ID)
	}
}

// nextOf is the question the demo asks next after stream st of session
// sessionID: the first its pause put, or, when the stream ended with the
// run still waiting on other questions it asked at once (docs/design.md
// §32), the first of those; with the run's status when it ended.
func nextOf(ctx context.Context, t *testing.T, cl *client.Client, st *client.Stream, sessionID string) (*api.InputRequest, string) {
	t.Helper()
	req, done := pauseOf(t, st)
	if req == nil && done == "" && sessionID != "" {
		p, err := cl.Pending(ctx, sessionID)
		require.NoError(t, err)
		req = p.Pending
	}
	return req, done
}

// pauseOf reads a stream to its end: the question it paused at, or the
// run's final status.
func pauseOf(t *testing.T, st *client.Stream) (*api.InputRequest, string) {
	t.Helper()
	defer st.Close()
	var req *api.InputRequest
	status := ""
	for {
		ev, err := st.Next()
		if errors.Is(err, io.EOF) {
			return req, status
		}
		require.NoError(t, err)
		switch ev.Name {
		case "user_input_required":
			var r api.InputRequest
			require.NoError(t, json.Unmarshal(ev.Data, &r))
			if req == nil {
				req = &r // a pause may put several: the first, in call order
			}
		case "done":
			var d struct{ Status string }
			require.NoError(t, json.Unmarshal(ev.Data, &d))
			status = d.Status
		case "error":
			t.Fatalf("error event: %s", ev.Data)
		}
	}
}

// demoAnswer is a valid answer to each question of the demo.
func demoAnswer(t *testing.T, r *api.InputRequest) api.ContinueRequest {
	t.Helper()
	c := api.ContinueRequest{SessionID: r.SessionID, RequestID: r.ID, Selections: []string{}}
	switch r.Mode {
	case api.ModeSingle, api.ModeMultiple, api.ModeToggle:
		c.Selections = []string{r.Options[0].ID}
	case api.ModeText:
		c.CustomInput = "checkout"
	case api.ModeNumber:
		c.CustomInput = "3"
	case api.ModeDate:
		c.CustomInput = "2026-03-01"
	case api.ModeDirectory:
		c.CustomInput = "."
	case api.ModeQuestions:
		for _, q := range r.Questions {
			c.Answers = append(c.Answers, api.QuestionAnswer{Question: q.Question, Selected: []string{q.Options[0].Label}})
		}
	default:
		t.Fatalf("the demo asks a mode this test does not answer: %s", r.Mode)
	}
	return c
}

func mustRaw(v any) json.RawMessage {
	if r, ok := v.(json.RawMessage); ok {
		return r
	}
	b, _ := json.Marshal(v)
	return b
}
