package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

// MCP Tasks (docs/design.md §11 "MCP Tasks"), in the two dialects hosts
// speak. The SDK (v1.8.0) has no tasks API, so they are built on its
// extension points: custom methods (tasks/*), a receiving middleware (the
// task-creating tools/call, the capability and the tools' taskSupport) and,
// for the 2025-11-25 utility whose "task" request field the SDK does not
// decode, a header the outer handler sets from the request body.
const (
	// dialectUtility is the 2025-11-25 tasks utility (SEP-1686): the host
	// asks for a task with params.task; tasks/get, tasks/result,
	// tasks/list, tasks/cancel.
	dialectUtility = "2025-11-25"
	// dialectExtension is the io.modelcontextprotocol/tasks extension
	// (SEP-2663, 2026-07-28): the host declares the extension in its
	// per-request capabilities and the server decides; tasks/get carries
	// the result; tasks/update, tasks/cancel.
	dialectExtension = "extension"

	extensionTasks = "io.modelcontextprotocol/tasks"
	relatedTaskKey = "io.modelcontextprotocol/related-task"
	immediateKey   = "io.modelcontextprotocol/model-immediate-response"

	// taskHeader carries a 2025-11-25 tools/call's params.task from the
	// outer handler to the middleware: "ttl=<ms>" or "ttl=". Any value a
	// client sends is dropped first.
	taskHeader = "Luban-Mcp-Task"

	// taskRetention is how long a task stays readable after its question's
	// expiresAt (the ttl a host is told covers both).
	taskRetention = 24 * time.Hour
)

// Task statuses (both dialects).
const (
	taskWorking       = "working"
	taskInputRequired = "input_required"
	taskCompleted     = "completed"
	taskFailed        = "failed"
	taskCancelled     = "cancelled"
)

// reqInfo is what the middleware hands a tasks/* handler from the request:
// the principal and the HTTP headers (the SDK passes custom handlers
// neither).
type reqInfo struct {
	owner    string
	header   http.Header
	version  string
	declares bool // the request's _meta capabilities declare the tasks extension
}

type reqInfoKey struct{}

// sniffTask sets taskHeader on a POST whose body is a tools/call with a
// "task" parameter (the 2025-11-25 utility), reading at most the SDK's body
// limit and giving the SDK the same bytes.
func sniffTask(r *http.Request) {
	r.Header.Del(taskHeader)
	if r.Method != http.MethodPost || r.Body == nil {
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, sdk.DefaultMaxRequestBodyBytes+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), r.Body), r.Body}
	if err != nil || len(b) > sdk.DefaultMaxRequestBodyBytes {
		return
	}
	var msg struct {
		Method string `json:"method"`
		Params struct {
			Task *struct {
				TTL *float64 `json:"ttl"`
			} `json:"task"`
		} `json:"params"`
	}
	if json.Unmarshal(b, &msg) != nil || msg.Method != "tools/call" || msg.Params.Task == nil {
		return
	}
	v := "ttl="
	if t := msg.Params.Task.TTL; t != nil && *t > 0 {
		v += strconv.FormatInt(int64(*t), 10)
	}
	r.Header.Set(taskHeader, v)
}

// taskCapabilities is the 2025-11-25 server capability: task-augmented
// tools/call, tasks/list and tasks/cancel.
var taskCapabilities = map[string]any{"list": map[string]any{}, "cancel": map[string]any{},
	"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}

// patched is a result whose JSON is inner's with patch applied to the
// decoded object: how fields the SDK's types lack (capabilities.tasks,
// tools' execution) are added.
type patched struct {
	sdk.ResultBase
	inner sdk.Result
	patch func(m map[string]any)
}

func (p *patched) GetMeta() map[string]any  { return p.inner.GetMeta() }
func (p *patched) SetMeta(m map[string]any) { p.inner.SetMeta(m) }

// MarshalJSON implements json.Marshaler.
func (p *patched) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(p.inner)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	p.patch(m)
	return json.Marshal(m)
}

// middleware routes the task parts of requests: it declares the 2025-11-25
// tasks capability at initialize and taskSupport "optional" on the tools
// of older sessions, turns a task-augmented tools/call (either dialect)
// into a task, and hands tasks/* handlers the principal and headers.
//
// A handler that panics answers -32603 and is logged with its stack: the
// SDK runs handlers on goroutines of its own, where a panic would end the
// process.
func (h *handler) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (_ sdk.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				h.o.Logger.Error("mcp handler panic", "method", method, "panic", v, "stack", string(debug.Stack()))
				err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the server log has the details"}
			}
		}()
		params := paramsOf(req)
		version := ""
		if params != nil {
			version, _ = params.GetMeta()[sdk.MetaKeyProtocolVersion].(string)
		}
		if ss, ok := req.GetSession().(*sdk.ServerSession); ok && version == "" && ss.InitializeParams() != nil {
			version = ss.InitializeParams().ProtocolVersion
		}
		modern := version >= modernProtocol
		switch {
		case method == "initialize":
			res, err := next(ctx, method, req)
			if err != nil || res == nil {
				return res, err
			}
			return &patched{inner: res, patch: func(m map[string]any) {
				if caps, ok := m["capabilities"].(map[string]any); ok {
					caps["tasks"] = taskCapabilities
				}
			}}, nil
		case method == "tools/list" && !modern:
			res, err := next(ctx, method, req)
			if err != nil || res == nil {
				return res, err
			}
			return &patched{inner: res, patch: func(m map[string]any) {
				tools, _ := m["tools"].([]any)
				for _, t := range tools {
					if tm, ok := t.(map[string]any); ok {
						tm["execution"] = map[string]any{"taskSupport": "optional"}
					}
				}
			}}, nil
		case method == "tools/call":
			ctr, ok := req.(*sdk.CallToolRequest)
			if !ok {
				return next(ctx, method, req)
			}
			if modern && declaresTasks(ctr.Params.Meta) && ctr.Params.RequestState == "" {
				return h.createTask(ctx, ctr, dialectExtension, 0)
			}
			if v := taskParam(ctr); !modern && v != "" {
				ttl, _ := strconv.ParseInt(strings.TrimPrefix(v, "ttl="), 10, 64)
				return h.createTask(ctx, ctr, dialectUtility, time.Duration(ttl)*time.Millisecond)
			}
		case strings.HasPrefix(method, "tasks/"):
			ri := &reqInfo{version: version, declares: params != nil && declaresTasks(params.GetMeta())}
			if ex := req.GetExtra(); ex != nil {
				ri.header = ex.Header
				if ex.TokenInfo != nil {
					ri.owner = ex.TokenInfo.UserID
				}
			}
			if ri.owner == "" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unauthorized: no principal"}
			}
			return next(context.WithValue(ctx, reqInfoKey{}, ri), method, req)
		}
		return next(ctx, method, req)
	}
}

// paramsOf is req's params, nil when the request has none (a nil pointer
// in the interface: the SDK's accessors would dereference it).
func paramsOf(req sdk.Request) sdk.Params {
	p := req.GetParams()
	if v := reflect.ValueOf(p); !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return nil
	}
	return p
}

// taskParam is the taskHeader of a tools/call ("" when it asked for no task).
func taskParam(req *sdk.CallToolRequest) string {
	if req.Extra == nil || req.Extra.Header == nil {
		return ""
	}
	return req.Extra.Header.Get(taskHeader)
}

// declaresTasks reports whether a request's _meta client capabilities
// (2026-07-28: per request) declare the tasks extension.
func declaresTasks(meta map[string]any) bool {
	caps, _ := meta[sdk.MetaKeyClientCapabilities].(map[string]any)
	ext, _ := caps["extensions"].(map[string]any)
	_, ok := ext[extensionTasks]
	return ok
}

// taskWire is a task as both dialects send it; the fields of the other
// dialect stay empty. TTL and TTLMs are pointers: a task of unlimited
// lifetime says null.
type taskWire struct {
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	StatusMessage  string `json:"statusMessage,omitempty"`
	CreatedAt      string `json:"createdAt"`
	LastUpdatedAt  string `json:"lastUpdatedAt"`
	ttl            *int64
	pollIntervalMs int64
	dialect        string
	// The extension's inlined payloads.
	InputRequests sdk.InputRequestMap `json:"inputRequests,omitempty"`
	Result        *sdk.CallToolResult `json:"result,omitempty"`
}

// MarshalJSON writes the dialect's names for the lifetime and the polling
// interval (ttl/pollInterval, or ttlMs/pollIntervalMs).
func (t *taskWire) MarshalJSON() ([]byte, error) {
	type plain taskWire
	b, err := json.Marshal((*plain)(t))
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	ttl, poll := "ttl", "pollInterval"
	if t.dialect == dialectExtension {
		ttl, poll = "ttlMs", "pollIntervalMs"
	}
	if t.ttl == nil {
		m[ttl] = nil
	} else {
		m[ttl] = *t.ttl
	}
	m[poll] = t.pollIntervalMs
	return json.Marshal(m)
}

// createTaskUtility is the 2025-11-25 CreateTaskResult: {task: Task}.
type createTaskUtility struct {
	sdk.ResultBase
	Task *taskWire `json:"task"`
}

// taskResult is a result that is one task object: the 2025-11-25 tasks/get
// and tasks/cancel result, the extension's CreateTaskResult (ResultType
// "task") and tasks/get result ("complete").
type taskResult struct {
	sdk.ResultBase
	resultType string
	task       *taskWire
}

// MarshalJSON writes the task's fields, resultType and _meta side by side.
func (r *taskResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.task)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if r.resultType != "" {
		m["resultType"] = r.resultType
	}
	if len(r.Meta) > 0 {
		m["_meta"] = r.Meta
	}
	return json.Marshal(m)
}

// ackResult is the extension's empty acknowledgement (tasks/update,
// tasks/cancel).
type ackResult struct {
	sdk.ResultBase
	ResultType string `json:"resultType"`
}

// listTasksResult is the 2025-11-25 tasks/list result.
type listTasksResult struct {
	sdk.ResultBase
	Tasks      []*taskWire `json:"tasks"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

// taskIDParams are the params of tasks/get, tasks/result and tasks/cancel.
type taskIDParams struct {
	sdk.ParamsBase
	TaskID string `json:"taskId"`
}

// listTasksParams are the params of tasks/list.
type listTasksParams struct {
	sdk.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

// updateTaskParams are the params of the extension's tasks/update.
type updateTaskParams struct {
	sdk.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// addTaskMethods registers tasks/get, tasks/result, tasks/list,
// tasks/cancel and tasks/update on srv.
func (h *handler) addTaskMethods(srv *sdk.Server) error {
	return errors.Join(
		sdk.AddReceivingCustomMethod(srv, "tasks/get", h.tasksGet),
		sdk.AddReceivingCustomMethod(srv, "tasks/result", h.tasksResult),
		sdk.AddReceivingCustomMethod(srv, "tasks/list", h.tasksList),
		sdk.AddReceivingCustomMethod(srv, "tasks/cancel", h.tasksCancel),
		sdk.AddReceivingCustomMethod(srv, "tasks/update", h.tasksUpdate),
	)
}

// idOf is the taskId of params p ("" when there are none).
func idOf(p interface{ taskID() string }) string {
	if v := reflect.ValueOf(p); v.IsNil() {
		return ""
	}
	return p.taskID()
}

func (p *taskIDParams) taskID() string     { return p.TaskID }
func (p *updateTaskParams) taskID() string { return p.TaskID }

func infoOf(ctx context.Context) *reqInfo {
	ri, _ := ctx.Value(reqInfoKey{}).(*reqInfo)
	if ri == nil {
		ri = &reqInfo{}
	}
	return ri
}

func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

func (h *handler) internal(what string, err error) error {
	h.o.Logger.Error("mcp "+what, "err", err)
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the server log has the details"}
}

// createTask asks the question of a task-augmented tools/call (or finds the
// same pending one, as a held call does) and answers with a task for it,
// stored before the answer is sent. Invalid arguments and other refusals
// are answered as the plain call answers them: no task is made.
func (h *handler) createTask(ctx context.Context, req *sdk.CallToolRequest, dialect string, askedTTL time.Duration) (sdk.Result, error) {
	owner := ""
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		owner = req.Extra.TokenInfo.UserID
	}
	if owner == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unauthorized: no principal"}
	}
	ir, res, err := h.ask(ctx, req, owner)
	if ir == nil {
		if res == nil && err == nil {
			return nil, h.internal("task ask", errors.New("no question and no result"))
		}
		if res != nil && dialect == dialectUtility {
			// No question, so no task: the 2025-11-25 utility answers a
			// task-augmented request it does not accept with a JSON-RPC
			// error (the extension may answer with the plain result).
			return nil, invalidParams(textOf(res))
		}
		return res, err
	}
	ttl := ir.ExpiresAt.Sub(h.o.Now()) + taskRetention
	if askedTTL > ttl {
		ttl = askedTTL
	}
	t, err := h.o.Runner.MCPTaskCreate(ctx, owner, ir.ID, dialect, ttl.Truncate(time.Millisecond))
	if err != nil {
		return nil, h.internal("task create", err)
	}
	w := h.wire(t, &agent.Asked{Request: ir, Status: api.StatusPending}, nil)
	w.Status, w.StatusMessage = taskWorking, "the question is on luban: "+ir.Title
	w.InputRequests, w.LastUpdatedAt = nil, w.CreatedAt
	if dialect == dialectUtility {
		out := &createTaskUtility{Task: w}
		out.Meta = sdk.Meta{immediateKey: fmt.Sprintf("The question %q waits for a person on luban (task %s).", ir.Title, t.ID)}
		for k, v := range meta(ir) {
			out.Meta[k] = v
		}
		return out, nil
	}
	out := &taskResult{resultType: "task", task: w}
	out.Meta = meta(ir)
	out.Meta[relatedTaskKey] = map[string]any{"taskId": t.ID}
	return out, nil
}

// textOf is the text of a one-text result.
func textOf(res *sdk.CallToolResult) string {
	if len(res.Content) == 1 {
		if tc, ok := res.Content[0].(*sdk.TextContent); ok {
			return tc.Text
		}
	}
	return "the call was refused"
}

// wire is task t in its dialect given its question's state a (and, for
// the extension's input_required, the request's base URL).
func (h *handler) wire(t *agent.MCPTask, a *agent.Asked, header http.Header) *taskWire {
	w := &taskWire{TaskID: t.ID, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339Nano), dialect: t.Protocol,
		pollIntervalMs: h.o.TaskPollInterval.Milliseconds()}
	if t.TTL > 0 {
		ms := t.TTL.Milliseconds()
		w.ttl = &ms
	}
	updated := t.CreatedAt
	switch {
	case !t.CancelledAt.IsZero():
		w.Status, w.StatusMessage, updated = taskCancelled, "cancelled by the host", t.CancelledAt
	case a.Status == api.StatusPending:
		w.Status, w.StatusMessage = taskInputRequired, "waiting for a person to answer on luban: "+a.Request.Title
		if t.Protocol == dialectExtension {
			w.InputRequests = h.pageRequest(header, a.Request)
		}
	default:
		res := resultOf(a)
		w.Status, w.StatusMessage = taskCompleted, "the question was "+string(a.Status)+" on luban"
		if a.Receipt != nil && !a.Receipt.ResolvedAt.IsZero() {
			updated = a.Receipt.ResolvedAt
		}
		if t.Protocol == dialectUtility && res.IsError {
			// The 2025-11-25 utility: a tool result with isError fails
			// its task (tasks/result still returns the result).
			w.Status = taskFailed
		}
		if t.Protocol == dialectExtension {
			res.Meta[relatedTaskKey] = map[string]any{"taskId": t.ID}
			w.Result = res
		}
	}
	w.LastUpdatedAt = updated.UTC().Format(time.RFC3339Nano)
	return w
}

// pageRequest is the one input request of a pending question: a URL-mode
// elicitation of its page on luban.
func (h *handler) pageRequest(header http.Header, r *api.InputRequest) sdk.InputRequestMap {
	base := ""
	if header != nil {
		base = header.Get(baseHeader)
	}
	return sdk.InputRequestMap{inputRequestKey: &sdk.ElicitParams{Mode: "url", ElicitationID: r.ID,
		URL: base + "/q/" + r.ID, Message: "Answer on luban: " + r.Title}}
}

// task reads the caller's task and its question; a task of the extension
// needs a request that declares the extension (-32021 otherwise).
func (h *handler) task(ctx context.Context, id string) (*reqInfo, *agent.MCPTask, *agent.Asked, error) {
	ri := infoOf(ctx)
	if id == "" {
		return nil, nil, nil, invalidParams("taskId is required")
	}
	t, err := h.o.Runner.MCPTaskGet(ctx, ri.owner, id)
	if errors.Is(err, agent.ErrMCPTaskNotFound) {
		return nil, nil, nil, invalidParams("Failed to retrieve task: Task not found")
	}
	if err != nil {
		return nil, nil, nil, h.internal("task get", err)
	}
	if t.Protocol == dialectExtension && ri.version >= modernProtocol && !ri.declares {
		data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{extensionTasks: map[string]any{}}}})
		return nil, nil, nil, &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability", Data: data}
	}
	a, err := h.o.Runner.AskedState(ctx, ri.owner, t.RequestID)
	if errors.Is(err, agent.ErrInteractionNotFound) {
		return nil, nil, nil, invalidParams("Failed to retrieve task: Task not found")
	}
	if err != nil {
		return nil, nil, nil, h.internal("task question", err)
	}
	return ri, t, a, nil
}

// tasksGet is tasks/get: the task's state; in the extension, with the
// page request while pending and the result once resolved.
func (h *handler) tasksGet(ctx context.Context, _ *sdk.ServerSession, p *taskIDParams) (*taskResult, error) {
	ri, t, a, err := h.task(ctx, idOf(p))
	if err != nil {
		return nil, err
	}
	out := &taskResult{task: h.wire(t, a, ri.header)}
	if t.Protocol == dialectExtension {
		out.resultType = "complete"
	}
	return out, nil
}

// tasksResult is the 2025-11-25 tasks/result: the question's ToolResult,
// held (progress notifications as keep-alive when the request carries a
// progressToken) while a person has not answered.
func (h *handler) tasksResult(ctx context.Context, ss *sdk.ServerSession, p *taskIDParams) (*sdk.CallToolResult, error) {
	ri, t, a, err := h.task(ctx, idOf(p))
	if err != nil {
		return nil, err
	}
	var res *sdk.CallToolResult
	if a.Status == api.StatusPending && t.CancelledAt.IsZero() {
		res, err = h.hold(ctx, ss, p.Meta["progressToken"], ri.owner, a)
		if err != nil {
			return nil, err
		}
	} else {
		res = resultOf(a)
	}
	res.Meta[relatedTaskKey] = map[string]any{"taskId": t.ID}
	return res, nil
}

// tasksCancel is tasks/cancel: a task still open is cancelled (and its
// question with it). The 2025-11-25 utility answers with the task and
// refuses a terminal one; the extension acknowledges either way.
func (h *handler) tasksCancel(ctx context.Context, _ *sdk.ServerSession, p *taskIDParams) (sdk.Result, error) {
	ri, t, a, err := h.task(ctx, idOf(p))
	if err != nil {
		return nil, err
	}
	open := a.Status == api.StatusPending && t.CancelledAt.IsZero()
	if !open && t.Protocol == dialectUtility {
		return nil, invalidParams("Cannot cancel task: already in terminal status '" + h.wire(t, a, nil).Status + "'")
	}
	if open {
		if t, err = h.o.Runner.MCPTaskCancel(ctx, ri.owner, t.ID); err != nil {
			return nil, h.internal("task cancel", err)
		}
		if a, err = h.o.Runner.AskedState(ctx, ri.owner, t.RequestID); err != nil {
			return nil, h.internal("task question", err)
		}
	}
	if t.Protocol == dialectExtension {
		return &ackResult{ResultType: "complete"}, nil
	}
	return &taskResult{task: h.wire(t, a, nil)}, nil
}

// tasksUpdate is the extension's tasks/update: the host's response to the
// page request. Decline or cancel cancels the question (unless it is
// resolved: the first resolution stands); accept means the person went to
// the page; responses to other keys are ignored.
func (h *handler) tasksUpdate(ctx context.Context, _ *sdk.ServerSession, p *updateTaskParams) (*ackResult, error) {
	ri, t, a, err := h.task(ctx, idOf(p))
	if err != nil {
		return nil, err
	}
	var resp struct {
		Action string `json:"action"`
	}
	if raw, ok := p.InputResponses[inputRequestKey]; ok && json.Unmarshal(raw, &resp) == nil &&
		(resp.Action == "decline" || resp.Action == "cancel") && a.Status == api.StatusPending && t.CancelledAt.IsZero() {
		_, err := h.o.Runner.Resolve(ctx, agent.ResolveParams{By: ri.owner, SessionID: t.SessionID, RequestID: t.RequestID,
			Answer: api.ContinueRequest{Cancelled: true}, Surface: agent.SurfaceMCP})
		var ar *agent.AlreadyResolvedError
		var ee *agent.InteractionExpiredError
		if err != nil && !errors.As(err, &ar) && !errors.As(err, &ee) {
			return nil, h.internal("task update", err)
		}
	}
	return &ackResult{ResultType: "complete"}, nil
}

// tasksList is the 2025-11-25 tasks/list: the caller's tasks, newest first,
// taskListPage a page; the cursor is opaque to the host.
func (h *handler) tasksList(ctx context.Context, _ *sdk.ServerSession, p *listTasksParams) (*listTasksResult, error) {
	ri := infoOf(ctx)
	var after *agent.MCPTask
	if p != nil && p.Cursor != "" {
		c, err := openCursor(p.Cursor)
		if err != nil {
			return nil, invalidParams("invalid cursor")
		}
		after = c
	}
	ts, err := h.o.Runner.MCPTaskList(ctx, ri.owner, after, taskListPage+1)
	if err != nil {
		return nil, h.internal("task list", err)
	}
	out := &listTasksResult{Tasks: []*taskWire{}}
	if len(ts) > taskListPage {
		ts = ts[:taskListPage]
		out.NextCursor = sealCursor(ts[len(ts)-1])
	}
	for _, t := range ts {
		a, err := h.o.Runner.AskedState(ctx, ri.owner, t.RequestID)
		if errors.Is(err, agent.ErrInteractionNotFound) {
			continue
		}
		if err != nil {
			return nil, h.internal("task question", err)
		}
		w := h.wire(t, a, nil)
		w.InputRequests, w.Result = nil, nil
		out.Tasks = append(out.Tasks, w)
	}
	return out, nil
}

// taskListPage is the number of tasks one tasks/list answer holds.
const taskListPage = 50

// sealCursor is the cursor after task t: base64url("<unix µs>:<id>").
func sealCursor(t *agent.MCPTask) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.CreatedAt.UnixMicro(), 10) + ":" + t.ID))
}

func openCursor(c string) (*agent.MCPTask, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, err
	}
	us, id, ok := strings.Cut(string(b), ":")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil || id == "" {
		return nil, errors.New("invalid cursor")
	}
	return &agent.MCPTask{ID: id, CreatedAt: time.UnixMicro(n).UTC()}, nil
}
