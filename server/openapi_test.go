package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/wiregen"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/server"
)

const docURL = "https://luban.invalid/api/openapi.json"

// oaDoc is the served OpenAPI document with a validator of its schemas.
type oaDoc struct {
	t     *testing.T
	paths map[string]map[string]any // path → method → operation
	c     *jsonschema.Compiler
	mu    sync.Mutex
	cache map[string]*jsonschema.Schema
}

func loadDoc(t *testing.T, raw []byte) *oaDoc {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	require.NoError(t, err)
	var d struct {
		OpenAPI string                    `json:"openapi"`
		Paths   map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &d))
	require.Equal(t, "3.1.0", d.OpenAPI)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	require.NoError(t, c.AddResource(docURL, v))
	return &oaDoc{t: t, paths: d.Paths, c: c, cache: map[string]*jsonschema.Schema{}}
}

func (d *oaDoc) schema(ref string) *jsonschema.Schema {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.cache[ref]; ok {
		return s
	}
	s, err := d.c.Compile(docURL + ref)
	require.NoError(d.t, err, "compile %s", ref)
	d.cache[ref] = s
	return s
}

// response returns the documented answer of an operation with status, as
// a generic JSON object; the test fails when it is not documented.
func (d *oaDoc) response(method, pattern string, status int) map[string]any {
	d.t.Helper()
	op, ok := d.paths[pattern][strings.ToLower(method)].(map[string]any)
	require.True(d.t, ok, "%s %s is not in the document", method, pattern)
	r, ok := op["responses"].(map[string]any)[strconv.Itoa(status)].(map[string]any)
	require.True(d.t, ok, "%s %s: status %d is not documented", method, pattern, status)
	return r["content"].(map[string]any)
}

func refOf(s any) string { return s.(map[string]any)["$ref"].(string) }

// check validates a real response of the route method+pattern against the
// document: a JSON body against its status's schema, each SSE event's data
// against the schema of its event name. It returns the body.
func (d *oaDoc) check(method, pattern string, resp *http.Response) []byte {
	d.t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(d.t, err)
	content := d.response(method, pattern, resp.StatusCode)
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	media, ok := content[ct].(map[string]any)
	require.True(d.t, ok, "%s %s %d: content type %q is not documented", method, pattern, resp.StatusCode, ct)
	if ct == "text/event-stream" {
		events := media[wiregen.EventsKey].(map[string]any)
		n := 0
		for _, ev := range frames(d.t, body) {
			s, ok := events[ev.name]
			require.True(d.t, ok, "event %q is not documented", ev.name)
			d.validate(refOf(s), ev.data, "event "+ev.name)
			n++
		}
		require.NotZero(d.t, n, "%s %s: an empty stream", method, pattern)
		return body
	}
	d.validate(refOf(media["schema"]), body, method+" "+pattern+" "+strconv.Itoa(resp.StatusCode))
	return body
}

func (d *oaDoc) validate(ref string, data []byte, what string) {
	d.t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	require.NoError(d.t, err, "%s: %s", what, data)
	require.NoError(d.t, d.schema(ref).Validate(v), "%s does not match %s: %s", what, ref, data)
}

// validateEvent validates a replayed event against the schema the document
// gives its name in GET /api/sessions/{id}/events.
func (d *oaDoc) validateEvent(name string, data []byte) {
	d.t.Helper()
	events := d.response("GET", "/api/sessions/{id}/events", http.StatusOK)["text/event-stream"].(map[string]any)[wiregen.EventsKey].(map[string]any)
	s, ok := events[name]
	require.True(d.t, ok, "event %q is not documented", name)
	d.validate(refOf(s), data, "replayed "+name)
}

type frame struct {
	name string
	data []byte
}

// frames parses complete SSE frames; heartbeat comments are skipped.
func frames(t *testing.T, b []byte) []frame {
	t.Helper()
	var out []frame
	for _, block := range strings.Split(string(b), "\n\n") {
		var f frame
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, "event: "):
				f.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				f.data = []byte(strings.TrimPrefix(line, "data: "))
			}
		}
		if f.name != "" {
			out = append(out, f)
		}
	}
	return out
}

// script is a model that plays its turns in order.
type script struct {
	mu   sync.Mutex
	next []model.Message
}

func (m *script) provider() model.Provider {
	return model.ProviderFunc{ProviderName: "script", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if len(m.next) == 0 {
			return nil, errors.New("script: no turn left")
		}
		msg := m.next[0]
		m.next = m.next[1:]
		msg.Role = model.RoleAssistant
		if onDelta != nil && msg.Content != "" {
			onDelta(msg.Content)
		}
		return &model.Response{Message: msg, FinishReason: "stop"}, nil
	}}
}

func TestOpenAPIRoutesAreTheServers(t *testing.T) {
	t.Parallel()
	ls := lubantest.Start(t, lubantest.Options{Provider: (&script{}).provider()})
	srv, err := server.New(server.Options{Runner: ls.Runner, Tokens: []string{"t"}})
	require.NoError(t, err)
	var routes []string
	for _, p := range server.Routes(srv) {
		if p != "/api/" {
			routes = append(routes, p)
		}
	}
	d := loadDoc(t, api.OpenAPI())
	var documented []string
	for path, ops := range d.paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	require.ElementsMatch(t, routes, documented, "server routes (left) and OpenAPI paths (right)")
}

// A whole cycle of both ask tools, with the errors a client meets on the
// way, answers exactly as the document says.
func TestOpenAPIMatchesRealAnswers(t *testing.T) {
	t.Parallel()
	m := &script{next: []model.Message{
		{Content: "先问一下。", ToolCalls: []model.ToolCall{{ID: "call_1", Name: api.ToolAskUser,
			Arguments: `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`}}},
		{Content: "好的，完成了。"},
		{ToolCalls: []model.ToolCall{{ID: "call_2", Name: api.ToolAskUserBatch,
			Arguments: `{"questions":[{"question":"Which database?","header":"DB","options":[{"label":"PostgreSQL","description":"server"},{"label":"SQLite","description":"embedded"}],"multi_select":false}]}`}}},
		{Content: "done"},
		{ToolCalls: []model.ToolCall{{ID: "call_3", Name: api.ToolAskUser, Arguments: `{"title":"目录？","mode":"directory"}`}}},
	}}
	ls := lubantest.Start(t, lubantest.Options{Provider: m.provider()})
	served := ls.Request("GET", "/api/openapi.json", nil, "")
	raw, err := io.ReadAll(served.Body)
	served.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, served.StatusCode)
	require.Equal(t, string(api.OpenAPI()), string(raw))
	d := loadDoc(t, raw)

	d.check("GET", "/api/info", ls.Request("GET", "/api/info", nil, ""))
	d.check("GET", "/api/agents", ls.Request("GET", "/api/agents", nil, ""))
	d.check("GET", "/api/info", ls.Request("GET", "/api/info", nil, "-"))                            // 401
	d.check("POST", "/api/chat", ls.Request("POST", "/api/chat", map[string]any{"message": ""}, "")) // 400

	chat := d.check("POST", "/api/chat", ls.Request("POST", "/api/chat", map[string]any{"message": "帮我改代码"}, ""))
	fs := frames(t, chat)
	require.Equal(t, api.EventUserInputRequired, fs[len(fs)-1].name)
	var req api.InputRequest
	require.NoError(t, json.Unmarshal(fs[len(fs)-1].data, &req))
	sid := req.SessionID

	d.check("POST", "/api/chat", ls.Request("POST", "/api/chat", map[string]any{"sessionId": sid, "message": "again"}, ""))         // 409 interaction_pending
	d.check("POST", "/api/chat", ls.Request("POST", "/api/chat", map[string]any{"sessionId": "sess_nope", "message": "x"}, ""))     // 404
	d.check("GET", "/api/interactions/pending", ls.Request("GET", "/api/interactions/pending?sessionId="+sid, nil, ""))             // pending
	d.check("GET", "/api/interactions/pending", ls.Request("GET", "/api/interactions/pending", nil, ""))                            // 400
	d.check("GET", "/api/interactions", ls.Request("GET", "/api/interactions?status=pending", nil, ""))                             // the inbox
	d.check("GET", "/api/interactions", ls.Request("GET", "/api/interactions?status=open", nil, ""))                                // 400
	answer := map[string]any{"sessionId": sid, "requestId": req.ID, "selections": []string{"safe", "implement"}, "customInput": ""} // two in single
	d.check("POST", "/api/chat/continue", ls.Request("POST", "/api/chat/continue", answer, ""))                                     // 422
	answer["selections"] = []string{"safe"}
	cont := d.check("POST", "/api/chat/continue", ls.Request("POST", "/api/chat/continue", answer, ""))
	fs = frames(t, cont)
	require.Equal(t, api.EventDone, fs[len(fs)-1].name)
	d.check("POST", "/api/chat/continue", ls.Request("POST", "/api/chat/continue", answer, "", "Accept", "application/json")) // 409 already_resolved
	d.check("POST", "/api/chat/continue", ls.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sid, "requestId": "req_nope"}, ""))

	// AskUser, answered without a stream (202).
	chat = d.check("POST", "/api/chat", ls.Request("POST", "/api/chat", map[string]any{"sessionId": sid, "message": "再来"}, ""))
	fs = frames(t, chat)
	require.NoError(t, json.Unmarshal(fs[len(fs)-1].data, &req))
	require.Equal(t, api.ModeQuestions, req.Mode)
	d.check("POST", "/api/chat/continue", ls.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sid, "requestId": req.ID,
		"answers": []map[string]any{{"question": "Which database?", "selected": []string{"SQLite"}, "other": ""}}}, "", "Accept", "application/json"))

	evs := ls.Open(ls.Request("GET", "/api/sessions/"+sid+"/events?after=0", nil, ""), "events")
	got, err := evs.Until(api.EventDone, 10*time.Second) // the first run's end
	evs.Close()
	require.NoError(t, err)
	for _, ev := range got {
		d.validateEvent(ev.Name, ev.Data)
	}
	// The AskUser run's end, replayed: its tool_result carries metadata.
	last := ls.EventsUntil(sid, got[len(got)-1].ID, api.EventDone, 10*time.Second)
	for _, ev := range last {
		d.validateEvent(ev.Name, ev.Data)
	}
	d.check("GET", "/api/sessions/{id}/events", ls.Request("GET", "/api/sessions/"+sid+"/events?after=x", nil, "")) // 400

	d.check("GET", "/api/interactions/pending", ls.Request("GET", "/api/interactions/pending?sessionId="+sid, nil, "")) // last receipt
	d.check("GET", "/api/sessions", ls.Request("GET", "/api/sessions", nil, ""))
	d.check("GET", "/api/sessions", ls.Request("GET", "/api/sessions?limit=1", nil, ""))                 // with next
	d.check("GET", "/api/interactions", ls.Request("GET", "/api/interactions?status=resolved", nil, "")) // receipts
	tr := d.check("GET", "/api/sessions/{id}", ls.Request("GET", "/api/sessions/"+sid, nil, ""))
	require.Contains(t, string(tr), `"metadata":{"answers"`)
	d.check("GET", "/api/sessions/{id}", ls.Request("GET", "/api/sessions/sess_nope", nil, "")) // 404
	d.check("GET", "/api/sessions/{id}/trace", ls.Request("GET", "/api/sessions/"+sid+"/trace", nil, ""))
	d.check("POST", "/api/sessions/{id}/cancel", ls.Request("POST", "/api/sessions/"+sid+"/cancel", nil, "")) // nothing active

	// A third question, cancelled while it waits: the receipt and the end
	// of the run are replayed as the document says.
	chat = d.check("POST", "/api/chat", ls.Request("POST", "/api/chat", map[string]any{"sessionId": sid, "message": "第三次"}, ""))
	fs = frames(t, chat)
	require.Equal(t, api.EventUserInputRequired, fs[len(fs)-1].name)
	d.check("POST", "/api/sessions/{id}/cancel", ls.Request("POST", "/api/sessions/"+sid+"/cancel", nil, ""))
	cancelled := ls.EventsUntil(sid, last[len(last)-1].ID, api.EventDone, 10*time.Second)
	require.Contains(t, lubantest.Names(cancelled), api.EventUserInputResolved)
	for _, ev := range cancelled {
		d.validateEvent(ev.Name, ev.Data)
	}
	d.check("GET", "/api/sessions/{id}/events", ls.Request("GET", "/api/sessions/sess_nope/events", nil, "")) // 404
	d.check("POST", "/api/sessions/{id}/cancel", ls.Request("POST", "/api/sessions/sess_nope/cancel", nil, ""))
	d.check("PATCH", "/api/sessions/{id}", ls.Request("PATCH", "/api/sessions/"+sid, map[string]any{"title": "改名后的会话"}, ""))
	d.check("PATCH", "/api/sessions/{id}", ls.Request("PATCH", "/api/sessions/"+sid, map[string]any{"title": " "}, ""))      // 400
	d.check("PATCH", "/api/sessions/{id}", ls.Request("PATCH", "/api/sessions/sess_nope", map[string]any{"title": "x"}, "")) // 404
	d.check("DELETE", "/api/sessions/{id}", ls.Request("DELETE", "/api/sessions/"+sid+"?force=maybe", nil, ""))              // 400
	d.check("DELETE", "/api/sessions/{id}", ls.Request("DELETE", "/api/sessions/"+sid, nil, ""))
	d.check("DELETE", "/api/sessions/{id}", ls.Request("DELETE", "/api/sessions/"+sid, nil, "")) // 404
}
