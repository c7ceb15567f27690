package mcpclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/internal/testkit/everythingtest"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/tool"
)

// waitTool polls the registry until name is registered.
func waitTool(t *testing.T, reg *tool.Registry, name string) *tool.Entry {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if e, ok := reg.Get(name); ok {
			return e
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("tool %s never registered (registered: %v)", name, reg.Names())
	return nil
}

// start starts m and waits for every server's first outcome (ready or
// down); m is closed when the test ends.
func start(t *testing.T, m *mcpclient.Manager) {
	t.Helper()
	ready := make(chan struct{})
	m.Start(context.Background(), ready)
	t.Cleanup(m.Close)
	<-ready
}

// waitState polls the first server's state until it is want.
func waitState(t *testing.T, m *mcpclient.Manager, want mcpclient.State) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if m.Status()[0].State == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the server never was %s: %+v", want, m.Status())
}

// person answers elicitations the way luban's page does: the prompt is
// derived with elicit.Prompt, and the answer checked by elicit.ValidateAnswer
// before it goes back.
type person struct {
	t      *testing.T
	answer func(p *api.Prompt) elicit.Answer
	asked  []*api.Prompt
}

func (p *person) Elicit(ctx context.Context, e tool.Elicitation) (tool.ElicitAnswer, error) {
	pr, err := elicit.Prompt(e)
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	p.asked = append(p.asked, pr)
	a, err := elicit.ValidateAnswer(pr, p.answer(pr))
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	return elicit.Result(a), nil
}

func call(t *testing.T, e *tool.Entry, ctx context.Context, args string) api.ToolResult {
	t.Helper()
	res, err := e.Tool.Call(ctx, json.RawMessage(args))
	require.NoError(t, err)
	return res
}

func fieldByName(fs []api.FormField, name string) api.FormField {
	for _, f := range fs {
		if f.Name == name {
			return f
		}
	}
	return api.FormField{}
}

// exercise lists and calls server-everything's tools through m's registry:
// echo, structured content, isError, and its elicitation answered
// accept (after an answer the schema rejects), decline and cancel.
func exercise(t *testing.T, reg *tool.Registry) {
	echo := waitTool(t, reg, "everything__echo")
	assert.Contains(t, string(echo.Spec.Parameters), `"message"`, "the tool's JSON Schema is offered as is")
	res := call(t, echo, context.Background(), `{"message":"hi luban"}`)
	assert.False(t, res.IsError)
	assert.Equal(t, "Echo: hi luban", res.Content)

	sc := waitTool(t, reg, "everything__get-structured-content")
	res = call(t, sc, context.Background(), `{"location":"New York"}`)
	assert.False(t, res.IsError)
	assert.Contains(t, string(res.Metadata), `"structuredContent"`)
	assert.Contains(t, string(res.Metadata), `"temperature"`)

	res = call(t, echo, context.Background(), `{"nomessage":1}`)
	assert.True(t, res.IsError, "arguments the server rejects are an error result: %s", res.Content)

	el := waitTool(t, reg, "everything__trigger-elicitation-request")
	var rejected error
	p := &person{t: t, answer: func(pr *api.Prompt) elicit.Answer {
		_, rejected = elicit.ValidateAnswer(pr, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"name":"Ada","integer":500}`)})
		return elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"name":"Ada Lovelace","check":true,"integer":7,"email":"ada@example.com","untitledMultipleSelectEnum":["Piano"],"titledSingleSelectEnum":"hero-3"}`)}
	}}
	res = call(t, el, tool.WithElicitor(context.Background(), p), `{}`)
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "Name: Ada Lovelace")
	assert.Contains(t, res.Content, "Favorite Integer: 7")
	var ae *askuser.AnswerError
	require.True(t, errors.As(rejected, &ae), "500 is above the schema's maximum: %v", rejected)
	assert.Equal(t, "content.integer", ae.Details[0].Field)

	require.Len(t, p.asked, 1)
	pr := p.asked[0]
	assert.Equal(t, api.ModeForm, pr.Mode)
	assert.Equal(t, "everything", pr.Server)
	assert.Equal(t, "Please provide inputs for the following fields:", pr.Title)
	fs := pr.Fields
	assert.Equal(t, "name", fs[0].Name, "the required field comes first")
	assert.Equal(t, "birthdate", fs[1].Name, "then the others by name (the SDK hands the schema over as a map)")
	assert.True(t, fieldByName(fs, "name").Required)
	assert.Equal(t, api.FieldBoolean, fieldByName(fs, "check").Type)
	assert.Equal(t, "email", fieldByName(fs, "email").Format)
	assert.Equal(t, "uri", fieldByName(fs, "homepage").Format)
	assert.Equal(t, api.FieldDate, fieldByName(fs, "birthdate").Type)
	in := fieldByName(fs, "integer")
	assert.Equal(t, api.FieldInteger, in.Type)
	require.NotNil(t, in.Minimum)
	assert.Equal(t, 1.0, *in.Minimum)
	assert.Equal(t, 100.0, *in.Maximum)
	assert.JSONEq(t, `42`, string(in.Default))
	assert.Equal(t, api.FieldNumber, fieldByName(fs, "number").Type)
	assert.JSONEq(t, `"It was a dark and stormy night."`, string(fieldByName(fs, "firstLine").Default))
	en := fieldByName(fs, "untitledSingleSelectEnum")
	assert.Equal(t, api.FieldEnum, en.Type)
	assert.Equal(t, api.FieldOption{Value: "Monica", Label: "Monica"}, en.Options[0])
	ms := fieldByName(fs, "untitledMultipleSelectEnum")
	assert.Equal(t, api.FieldMulti, ms.Type)
	assert.Equal(t, 1, *ms.MinItems)
	assert.Equal(t, 3, *ms.MaxItems)
	assert.Len(t, ms.Options, 5)
	assert.Equal(t, api.FieldOption{Value: "hero-1", Label: "Superman"}, fieldByName(fs, "titledSingleSelectEnum").Options[0])
	tm := fieldByName(fs, "titledMultipleSelectEnum")
	assert.Equal(t, api.FieldMulti, tm.Type)
	assert.Equal(t, api.FieldOption{Value: "fish-1", Label: "Tuna"}, tm.Options[0])
	assert.Equal(t, api.FieldOption{Value: "pet-1", Label: "Cats"}, fieldByName(fs, "legacyTitledEnum").Options[0])

	decline := &person{t: t, answer: func(*api.Prompt) elicit.Answer { return elicit.Answer{Decision: api.DecisionDecline} }}
	res = call(t, el, tool.WithElicitor(context.Background(), decline), `{}`)
	assert.Contains(t, res.Content, "User declined")
	cancel := &person{t: t, answer: func(*api.Prompt) elicit.Answer { return elicit.Answer{Cancelled: true} }}
	res = call(t, el, tool.WithElicitor(context.Background(), cancel), `{}`)
	assert.Contains(t, res.Content, "User cancelled")
}

func TestEverythingStdio(t *testing.T) {
	t.Parallel()
	entry := everythingtest.Entry(t)
	marker := fmt.Sprintf("--luban-test-%d", time.Now().UnixNano())
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "everything", Command: "node", Args: []string{entry, "stdio", marker}}}, mcpclient.Options{Registry: reg})
	start(t, m)
	exercise(t, reg)
	st := m.Status()[0]
	assert.Equal(t, mcpclient.StateReady, st.State)
	assert.Equal(t, "stdio", st.Transport)
	assert.Greater(t, st.Tools, 10)
	require.NotEmpty(t, everythingtest.Processes(marker), "the stdio server runs")
	m.Close()
	assert.Empty(t, everythingtest.Processes(marker), "Close stops the stdio server's process")
}

func TestEverythingStreamableHTTP(t *testing.T) {
	t.Parallel()
	url := everythingtest.StartHTTP(t, everythingtest.FreePort(t))
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "everything", URL: url, Headers: map[string]string{"X-Luban-Test": "1"}}}, mcpclient.Options{Registry: reg})
	start(t, m)
	exercise(t, reg)
	assert.Equal(t, "http", m.Status()[0].Transport)
}

// A server that is down at start is reported and retried with backoff; it
// is ready once it is up, with its tools.
func TestDownServerRetried(t *testing.T) {
	t.Parallel()
	everythingtest.Entry(t)
	port := everythingtest.FreePort(t)
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "late", URL: fmt.Sprintf("http://127.0.0.1:%d/mcp", port)}},
		mcpclient.Options{Registry: reg, MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	start(t, m)
	st := m.Status()[0]
	assert.Equal(t, mcpclient.StateDown, st.State)
	assert.GreaterOrEqual(t, st.Failures, 1)
	assert.NotNil(t, st.NextAttempt)
	require.Error(t, m.Check("late"))
	_, ok := reg.Get("late__echo")
	assert.False(t, ok)

	everythingtest.StartHTTP(t, port)
	// A server is ready once its tools are registered: the state is the
	// last thing to change, so once it says ready the tools are there.
	waitState(t, m, mcpclient.StateReady)
	e, ok := reg.Get("late__echo")
	require.True(t, ok, "ready, with its tools (registered: %v)", reg.Names())
	assert.NoError(t, m.Check("late"))
	res := call(t, e, context.Background(), `{"message":"back"}`)
	assert.Equal(t, "Echo: back", res.Content)
}

// A stdio server that dies is started again (with backoff) and its tools
// stay served.
func TestStdioServerRestarted(t *testing.T) {
	t.Parallel()
	entry := everythingtest.Entry(t)
	mk := fmt.Sprintf("--luban-test-%d", time.Now().UnixNano())
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "ev", Command: "node", Args: []string{entry, "stdio", mk}}},
		mcpclient.Options{Registry: reg, MinBackoff: 50 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	start(t, m)
	echo := waitTool(t, reg, "ev__echo")
	pids := everythingtest.Processes(mk)
	require.Len(t, pids, 1)
	pid, err := strconv.Atoi(pids[0])
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))

	deadline := time.Now().Add(20 * time.Second)
	for {
		now := everythingtest.Processes(mk)
		if len(now) == 1 && now[0] != pids[0] && m.Status()[0].State == mcpclient.StateReady {
			break
		}
		require.True(t, time.Now().Before(deadline), "the server was not started again: %v %+v", now, m.Status())
		time.Sleep(20 * time.Millisecond)
	}
	echo = waitTool(t, reg, "ev__echo")
	assert.Equal(t, "Echo: again", call(t, echo, context.Background(), `{"message":"again"}`).Content)
}
