package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
)

// The scripted demo of `make run` (`luban serve --model scripted`, no key)
// tells the whole story: every question card, then a write_file call that
// waits for approval and writes luban-demo/deploy-plan.md in the workspace
// only after "approve", once (DESIGN §10, docs/scenario.md).
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
	for approval == nil {
		req, done := pauseOf(t, st)
		require.NotNil(t, req, "the demo ended (%s) before its approval step; asked %v", done, modes)
		if req.Tool == api.ToolApproval {
			approval = req
			break
		}
		modes = append(modes, string(req.Mode))
		if req.Mode == api.ModeNumber {
			refuseOutOfBounds(ctx, t, cl, req)
		}
		st, err = cl.Continue(ctx, demoAnswer(t, req))
		require.NoError(t, err)
	}
	require.Equal(t, []string{"single", "multiple", "toggle", "text", "number", "date", "directory", "questions"}, modes)
	require.Equal(t, api.ModeApproval, approval.Mode)
	require.Equal(t, "write_file", approval.ToolName)
	require.Equal(t, "Run write_file?", approval.Title)
	var args struct{ Path, Content string }
	require.NoError(t, json.Unmarshal(approval.Arguments, &args))
	require.Equal(t, "luban-demo/deploy-plan.md", args.Path)
	target := filepath.Join(work, "luban-demo", "deploy-plan.md")
	_, err = os.Stat(target)
	require.True(t, errors.Is(err, os.ErrNotExist), "nothing is written before the approval")

	st, err = cl.Continue(ctx, api.ContinueRequest{SessionID: approval.SessionID, RequestID: approval.ID, Decision: api.DecisionApprove})
	require.NoError(t, err)
	req, done := pauseOf(t, st)
	require.Nil(t, req)
	require.Equal(t, "completed", done)
	got, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, args.Content, string(got))
	tr, err := cl.Trace(ctx, approval.SessionID)
	require.NoError(t, err)
	started := 0
	for _, e := range tr.Trace {
		var d struct{ ToolCallID string }
		if e.Kind == "tool_started" && json.Unmarshal(mustRaw(e.Data), &d) == nil && d.ToolCallID == approval.ToolCallID {
			started++
		}
	}
	require.Equal(t, 1, started, "write_file ran once")
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
			req = &r
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
