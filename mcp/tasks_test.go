package mcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/mcptest"
)

// The io.modelcontextprotocol/tasks extension (SEP-2663) as the official Go
// SDK client speaks it: the SDK (v1.8.0) has no tasks API, so the host
// declares the extension in its capabilities (sent in every request's
// _meta) and calls tasks/* through the SDK's custom-method API.
const extensionTasks = "io.modelcontextprotocol/tasks"

type taskIDParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

type updateParams struct {
	sdk.ParamsBase
	TaskID         string         `json:"taskId"`
	InputResponses map[string]any `json:"inputResponses"`
}

// extTask is a DetailedTask of the extension (tasks/get).
type extTask struct {
	sdk.ResultBase
	ResultType     string `json:"resultType"`
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs"`
	InputRequests  map[string]struct {
		Method string `json:"method"`
		Params struct {
			Mode          string `json:"mode"`
			URL           string `json:"url"`
			ElicitationID string `json:"elicitationId"`
		} `json:"params"`
	} `json:"inputRequests"`
	Result *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool           `json:"isError"`
		Meta    map[string]any `json:"_meta"`
	} `json:"result"`
}

type ack struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
}

// connectTasks opens a 2026-07-28 Go SDK client session with token that
// declares the tasks extension when declare is set, with tasks/get,
// tasks/update and tasks/cancel registered.
func connectTasks(t *testing.T, base, token string, declare bool) *sdk.ClientSession {
	t.Helper()
	caps := &sdk.ClientCapabilities{}
	if declare {
		caps.AddExtension(extensionTasks, nil)
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "luban-go-tasks", Version: "0.9.1"},
		&sdk.ClientOptions{Capabilities: caps, MultiRoundTrip: &sdk.MultiRoundTripOptions{Disabled: true}})
	require.NoError(t, sdk.AddSendingCustomMethod[*taskIDParams, *extTask](c, "tasks/get"))
	require.NoError(t, sdk.AddSendingCustomMethod[*updateParams, *ack](c, "tasks/update"))
	require.NoError(t, sdk.AddSendingCustomMethod[*taskIDParams, *ack](c, "tasks/cancel"))
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: mcptest.Bearer{Token: token}}, MaxRetries: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	require.Equal(t, "2026-07-28", cs.InitializeResult().ProtocolVersion)
	return cs
}

// askTask calls ask_user with args and returns the task id the server
// answered with (the SDK decodes the CreateTaskResult as a CallToolResult
// whose _meta names the task) and the question's session and request.
func askTask(t *testing.T, cs *sdk.ClientSession, args string) (taskID, sessionID, requestID string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(args)})
	require.NoError(t, err)
	require.False(t, res.NeedsInput(), "a task, not input_required")
	require.Empty(t, res.Content, "a task carries no tool result")
	rt, _ := res.Meta["io.modelcontextprotocol/related-task"].(map[string]any)
	taskID, _ = rt["taskId"].(string)
	sessionID, _ = res.Meta["sessionId"].(string)
	requestID, _ = res.Meta["requestId"].(string)
	require.True(t, strings.HasPrefix(taskID, "task_"), "%v", res.Meta)
	return taskID, sessionID, requestID
}

func getTask(t *testing.T, cs *sdk.ClientSession, id string) (*extTask, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return sdk.CallCustomMethod[*taskIDParams, *extTask](ctx, cs, "tasks/get", &taskIDParams{TaskID: id})
}

func rpcCode(t *testing.T, err error) int64 {
	t.Helper()
	var we *jsonrpc.Error
	require.ErrorAs(t, err, &we)
	return we.Code
}

// A host that declares the extension gets a task for its question: the
// task is input_required with a URL-mode request for the question's page
// while it waits, only its principal can read it, a request that does not
// declare the extension is refused (-32021), and once the person answered
// on luban tasks/get carries the ToolResult luban stored.
func TestExtensionTaskAnsweredOnThePage(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs := connectTasks(t, s.URL, s.Token, true)
	taskID, sessionID, requestID := askTask(t, cs, singleArgs)

	got, err := getTask(t, cs, taskID)
	require.NoError(t, err)
	require.Equal(t, "complete", got.ResultType)
	require.Equal(t, taskID, got.TaskID)
	require.Equal(t, "input_required", got.Status)
	require.NotNil(t, got.TTLMs)
	require.Positive(t, got.PollIntervalMs)
	require.Len(t, got.InputRequests, 1)
	for _, ir := range got.InputRequests {
		require.Equal(t, "elicitation/create", ir.Method)
		require.Equal(t, "url", ir.Params.Mode)
		require.Equal(t, s.URL+"/q/"+requestID, ir.Params.URL)
	}
	require.Nil(t, got.Result)

	var pv pendingView
	require.Equal(t, 200, s.JSON("GET", "/api/interactions/pending?sessionId="+sessionID, nil, &pv))
	require.Equal(t, map[string]any{"kind": "mcp", "client": "luban-go-tasks", "clientVersion": "0.9.1"}, pv.Pending["source"])

	_, err = getTask(t, connectTasks(t, s.URL, "other-token", true), taskID)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcCode(t, err), "another principal's task is not found")
	_, err = getTask(t, cs, "task_nosuchtask")
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcCode(t, err))
	_, err = getTask(t, connectTasks(t, s.URL, s.Token, false), taskID)
	require.Equal(t, int64(sdk.CodeMissingRequiredClientCapabilities), rpcCode(t, err))

	answerOnPage(t, s, sessionID, requestID, "prod")
	got, err = getTask(t, cs, taskID)
	require.NoError(t, err)
	require.Equal(t, "completed", got.Status)
	require.Nil(t, got.InputRequests)
	require.NotNil(t, got.Result)
	require.False(t, got.Result.IsError)
	stored, n := toolMessage(t, s, sessionID)
	require.Equal(t, 1, n)
	require.Len(t, got.Result.Content, 1)
	require.Equal(t, stored, got.Result.Content[0].Text)
	require.Contains(t, stored, "prod")
	require.Equal(t, map[string]any{"taskId": taskID}, got.Result.Meta["io.modelcontextprotocol/related-task"])
	require.GreaterOrEqual(t, got.LastUpdatedAt, got.CreatedAt)

	// A cancel of a completed task is acknowledged and changes nothing.
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	a, err := sdk.CallCustomMethod[*taskIDParams, *ack](ctx, cs, "tasks/cancel", &taskIDParams{TaskID: taskID})
	require.NoError(t, err)
	require.Equal(t, "complete", a.ResultType)
	got, err = getTask(t, cs, taskID)
	require.NoError(t, err)
	require.Equal(t, "completed", got.Status)
}

// A host that does not declare the extension is answered as before
// (input_required with a requestState): luban never hands it a task.
func TestNoTaskWithoutTheExtension(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs := connectTasks(t, s.URL, s.Token, false)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	require.NotEmpty(t, res.RequestState)
	require.Nil(t, res.Meta["io.modelcontextprotocol/related-task"])
}

// The host's tasks/update declining the page request cancels the question
// on luban (the task completes with the cancelled result); tasks/cancel of
// another task cancels it and its question, and it stays cancelled.
func TestExtensionTaskUpdateAndCancel(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	cs := connectTasks(t, s.URL, s.Token, true)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()

	declined, sessionID, _ := askTask(t, cs, singleArgs)
	a, err := sdk.CallCustomMethod[*updateParams, *ack](ctx, cs, "tasks/update", &updateParams{TaskID: declined,
		InputResponses: map[string]any{"nosuchkey": map[string]any{"action": "accept"}}})
	require.NoError(t, err, "a response to an unknown key is ignored")
	require.Equal(t, "complete", a.ResultType)
	got, err := getTask(t, cs, declined)
	require.NoError(t, err)
	require.Equal(t, "input_required", got.Status)
	var key string
	for k := range got.InputRequests {
		key = k
	}
	_, err = sdk.CallCustomMethod[*updateParams, *ack](ctx, cs, "tasks/update", &updateParams{TaskID: declined,
		InputResponses: map[string]any{key: map[string]any{"action": "decline"}}})
	require.NoError(t, err)
	got, err = getTask(t, cs, declined)
	require.NoError(t, err)
	require.Equal(t, "completed", got.Status, "the question's cancelled result is the task's result")
	require.Contains(t, got.Result.Content[0].Text, `"cancelled":true`)
	stored, _ := toolMessage(t, s, sessionID)
	require.Equal(t, stored, got.Result.Content[0].Text)

	cancelled, sessionID, requestID := askTask(t, cs, `{"title":"再问一个","mode":"text"}`)
	a, err = sdk.CallCustomMethod[*taskIDParams, *ack](ctx, cs, "tasks/cancel", &taskIDParams{TaskID: cancelled})
	require.NoError(t, err)
	require.Equal(t, "complete", a.ResultType)
	got, err = getTask(t, cs, cancelled)
	require.NoError(t, err)
	require.Equal(t, "cancelled", got.Status)
	var pv struct {
		Interactions []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"interactions"`
	}
	require.Equal(t, 200, s.JSON("GET", "/api/interactions?status=resolved", nil, &pv))
	statuses := map[string]string{}
	for _, it := range pv.Interactions {
		statuses[it.ID] = it.Status
	}
	require.Equal(t, "cancelled", statuses[requestID], "the question went with its task")
	_, n := toolMessage(t, s, sessionID)
	require.Equal(t, 1, n)
}

// answerOnPage answers question requestID with option as the person on
// luban's page does.
func answerOnPage(t *testing.T, s *lubantest.Server, sessionID, requestID, option string) {
	t.Helper()
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sessionID, "requestId": requestID,
		"selections": []string{option}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, 202, resp.StatusCode)
}

type listParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	sdk.ResultBase
	Tasks      []map[string]any `json:"tasks"`
	NextCursor string           `json:"nextCursor"`
}

// tasks/* sent without params by a 2025-11-25 session (the Go SDK sends
// none for nil): tasks/list lists, tasks/get is -32602, a cursor that is
// not one luban made is -32602, and luban keeps serving.
func TestTaskMethodsWithoutParams(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	c := sdk.NewClient(&sdk.Implementation{Name: "luban-go-tasks", Version: "1"}, nil)
	require.NoError(t, sdk.AddSendingCustomMethod[*taskIDParams, *extTask](c, "tasks/get"))
	require.NoError(t, sdk.AddSendingCustomMethod[*listParams, *listResult](c, "tasks/list"))
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: s.URL + "/mcp", HTTPClient: &http.Client{Transport: mcptest.Bearer{Token: s.Token}}, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: legacyProtocol})
	require.NoError(t, err)
	defer cs.Close()

	l, err := sdk.CallCustomMethod[*listParams, *listResult](ctx, cs, "tasks/list", nil)
	require.NoError(t, err)
	require.Empty(t, l.Tasks)
	_, err = sdk.CallCustomMethod[*taskIDParams, *extTask](ctx, cs, "tasks/get", nil)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcCode(t, err))
	_, err = sdk.CallCustomMethod[*listParams, *listResult](ctx, cs, "tasks/list", &listParams{Cursor: "bm90IGEgY3Vyc29y"})
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcCode(t, err))
	l, err = sdk.CallCustomMethod[*listParams, *listResult](ctx, cs, "tasks/list", &listParams{})
	require.NoError(t, err, "luban still serves")
	require.Empty(t, l.Tasks)
}
