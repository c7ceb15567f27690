package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

// routes learns the operations of an OpenAPI document and records which of
// them requests reached: a real reverse proxy on loopback in front of the
// server, so every client call is a real HTTP request to the real server.
type routes struct {
	mux      *http.ServeMux
	mu       sync.Mutex
	reached  map[string]bool // "METHOD /path/{template}" of the document
	unlisted []string        // requests no operation of the document matches
}

// notForClients are the operations no client of luban's API calls, with
// why. The Slack callback is Slack's: Slack posts its button clicks there,
// signed with the Slack app's signing secret instead of a bearer token, so
// a luban client has nothing to send it (docs/notifications.md; the
// people package's tests drive it with payloads signed as Slack signs
// them).
var notForClients = map[string]string{
	"POST " + api.SlackInteractionsPath: "Slack's own callback, signed by Slack, not called with a bearer token",
}

func newRoutes(t *testing.T, doc []byte) *routes {
	t.Helper()
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(doc, &d))
	require.NotEmpty(t, d.Paths)
	r := &routes{mux: http.NewServeMux(), reached: map[string]bool{}}
	for path, ops := range d.Paths {
		for method := range ops {
			switch method {
			case "get", "post", "put", "patch", "delete":
			default:
				continue // parameters, summary: not an operation
			}
			op := strings.ToUpper(method) + " " + path
			if _, slack := notForClients[op]; slack {
				continue
			}
			r.reached[op] = false
			r.mux.HandleFunc(op, func(http.ResponseWriter, *http.Request) {})
		}
	}
	return r
}

// front starts the recording proxy to target and returns its URL.
func (r *routes) front(t *testing.T, target string) string {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.FlushInterval = -1 // SSE passes through as it is written
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, pattern := r.mux.Handler(req)
		r.mu.Lock()
		if _, ok := r.reached[pattern]; ok && !strings.HasPrefix(pattern, "HEAD ") {
			r.reached[pattern] = true
		} else {
			r.unlisted = append(r.unlisted, req.Method+" "+req.URL.Path)
		}
		r.mu.Unlock()
		proxy.ServeHTTP(w, req)
	}))
	t.Cleanup(ts.Close)
	return ts.URL
}

// missing lists the document's operations no request reached, sorted.
func (r *routes) missing() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for op, ok := range r.reached {
		if !ok {
			out = append(out, op)
		}
	}
	sort.Strings(out)
	return out
}

// TestClientCoversEveryOpenAPIEndpoint drives every method of the client
// against a real server (through a recording proxy) and fails when an
// operation of the server's own OpenAPI document (GET /api/openapi.json) is
// reached by none of them, or a client call goes to a path the document does
// not list. It also fails when the client gains a method this test does not
// call, so a new method cannot dodge the check. Each call's answer is
// checked as it goes: choosing an agent, the inbox, one interaction, the
// principal's stream, rename and delete.
func TestClientCoversEveryOpenAPIEndpoint(t *testing.T) {
	t.Parallel()
	m := &turns{}
	srv := lubantest.Start(t, lubantest.Options{Provider: m.provider(),
		MoreAgents: []*agent.Agent{{Name: "second", Provider: m.provider(), Tools: tool.Allowlist{"ask_user"}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	direct, err := client.New(srv.URL, "test-token", nil)
	require.NoError(t, err)
	doc, err := direct.OpenAPI(ctx)
	require.NoError(t, err)
	rt := newRoutes(t, doc)
	c, err := client.New(rt.front(t, srv.URL), "test-token", nil)
	require.NoError(t, err)

	called := map[string]bool{}
	use := func(name string) { called[name] = true }

	use("OpenAPI")
	doc2, err := c.OpenAPI(ctx)
	require.NoError(t, err)
	require.JSONEq(t, string(doc), string(doc2))

	use("BaseURL")
	require.True(t, strings.HasPrefix(c.BaseURL(), "http://127.0.0.1:"))

	use("Info")
	_, err = c.Info(ctx)
	require.NoError(t, err)

	use("MCPAuthorizations")
	auths, err := c.MCPAuthorizations(ctx)
	require.NoError(t, err)
	require.Empty(t, auths, "no MCP server waits for authorization here")

	use("Agents")
	agents, err := c.Agents(ctx)
	require.NoError(t, err)
	var agentNames []string
	for _, a := range agents {
		agentNames = append(agentNames, a.Name)
	}
	require.Equal(t, []string{"default", "second"}, agentNames, "the default agent first")

	// The principal's own stream, opened before anything is asked: it
	// carries the question and its receipt of whichever session.
	use("PrincipalEvents")
	feed, err := c.PrincipalEvents(ctx, 0)
	require.NoError(t, err)
	defer feed.Close()

	// Start picks the second agent for a new session.
	use("Start")
	m.push(ask("call_1", singleArgs))
	evs := drain(t, must(t)(c.Start(ctx, api.ChatRequest{Message: "用第二个智能体", Agent: "second"})))
	req := find(t, evs, api.EventUserInputRequired).Value.(*api.InputRequest)
	sid := req.SessionID

	use("Session")
	tr, err := c.Session(ctx, sid)
	require.NoError(t, err)
	require.Equal(t, "second", tr.Session.Agent, "the session keeps the agent Start named")

	use("Inbox")
	inbox, err := c.Inbox(ctx, client.InboxQuery{})
	require.NoError(t, err)
	require.Len(t, inbox.Interactions, 1)
	require.Equal(t, req.ID, inbox.Interactions[0].ID)
	require.Equal(t, "second", inbox.Interactions[0].Agent)
	require.Equal(t, api.Status("pending"), inbox.Interactions[0].Status)

	use("Interaction")
	iv, err := c.Interaction(ctx, req.ID)
	require.NoError(t, err)
	require.Equal(t, req.ID, iv.Request.ID)
	require.Nil(t, iv.Receipt, "no receipt while pending")
	_, err = c.Interaction(ctx, "ask_unknown")
	var ce *client.Error
	require.True(t, errors.As(err, &ce))
	require.Equal(t, string(api.CodeInteractionNotFound), ce.Code)

	use("Delegate")
	_, err = c.Delegate(ctx, req.ID, "nobody", "")
	require.True(t, errors.As(err, &ce))
	require.Equal(t, http.StatusUnprocessableEntity, ce.Status, "without people: there is nobody to hand it to")
	require.Equal(t, string(api.CodeInvalidDelegation), ce.Code)

	ev, err := feed.Next()
	require.NoError(t, err)
	require.Equal(t, api.EventUserInputRequired, ev.Name)
	require.Equal(t, req.ID, ev.Value.(*api.InputRequest).ID)

	use("Pending")
	p, err := c.Pending(ctx, sid)
	require.NoError(t, err)
	require.Equal(t, req.ID, p.Pending.ID)

	use("ContinueNoStream")
	m.push(model.Message{Content: "好的。"})
	rc, err := c.ContinueNoStream(ctx, api.ContinueRequest{SessionID: sid, RequestID: req.ID, Selections: []string{"safe"}})
	require.NoError(t, err)
	require.Equal(t, req.ID, rc.RequestID)

	ev, err = feed.Next()
	require.NoError(t, err)
	require.Equal(t, api.EventUserInputResolved, ev.Name, "the principal's stream carries the receipt")
	require.Equal(t, req.ID, ev.Value.(*api.Receipt).RequestID)

	use("Events")
	follow := drainUntil(t, must(t)(c.Events(ctx, sid, 0)), api.EventDone)
	require.Equal(t, api.EventDone, follow[len(follow)-1].Name)

	use("Inbox")
	resolved, err := c.Inbox(ctx, client.InboxQuery{Status: api.InboxResolved, Limit: 1})
	require.NoError(t, err)
	require.Len(t, resolved.Interactions, 1)
	require.NotNil(t, resolved.Interactions[0].Receipt)
	require.Equal(t, []string{"safe"}, resolved.Interactions[0].Receipt.Selections)

	// A second session with the default agent, answered with a stream.
	use("Chat")
	use("Continue")
	m.push(ask("call_2", singleArgs))
	evs = drain(t, must(t)(c.Chat(ctx, "", "默认智能体")))
	req2 := find(t, evs, api.EventUserInputRequired).Value.(*api.InputRequest)
	// The answer leads to two questions in one message, answered with
	// one batch (docs/design.md §32).
	use("ContinueBatch")
	m.push(model.Message{Content: "还有两个问题。", ToolCalls: []model.ToolCall{{ID: "call_3", Name: api.ToolAskUser, Arguments: singleArgs}, {ID: "call_4", Name: api.ToolAskUser, Arguments: singleArgs}}},
		model.Message{Content: "继续。"})
	evs = drain(t, must(t)(c.Continue(ctx, api.ContinueRequest{SessionID: req2.SessionID, RequestID: req2.ID, Selections: []string{"implement"}})))
	var both []api.ContinueEntry
	for _, e := range evs {
		if r, ok := e.Value.(*api.InputRequest); ok {
			both = append(both, api.ContinueEntry{RequestID: r.ID, Selections: []string{"safe"}})
		}
	}
	require.Len(t, both, 2, "the stream shows both questions of the pause")
	evs = drain(t, must(t)(c.ContinueBatch(ctx, api.ContinueBatchRequest{SessionID: req2.SessionID, Answers: both})))
	find(t, evs, api.EventDone)

	use("Sessions")
	list, err := c.Sessions(ctx)
	require.NoError(t, err)
	require.Len(t, list, 2)

	use("SessionPage")
	page, err := c.SessionPage(ctx, "", 1)
	require.NoError(t, err)
	require.Len(t, page.Sessions, 1)
	require.Equal(t, req2.SessionID, page.Sessions[0].ID, "most recently updated first")
	require.Equal(t, "default", page.Sessions[0].Agent)
	page, err = c.SessionPage(ctx, page.Next, 1)
	require.NoError(t, err)
	require.Equal(t, sid, page.Sessions[0].ID)
	require.Equal(t, "second", page.Sessions[0].Agent)

	use("Trace")
	trace, err := c.Trace(ctx, sid)
	require.NoError(t, err)
	require.NotEmpty(t, trace.Trace)

	use("Resume")
	tr2, rs, err := c.Resume(ctx, sid)
	require.NoError(t, err)
	rs.Close()
	require.Equal(t, sid, tr2.Session.ID)

	use("Cancel")
	st, err := c.Cancel(ctx, sid)
	require.NoError(t, err)
	require.Equal(t, "completed", st, "nothing was active: the status it had")

	use("Rename")
	sv, err := c.Rename(ctx, sid, "第二个智能体的会话")
	require.NoError(t, err)
	require.Equal(t, "第二个智能体的会话", sv.Title)
	require.Equal(t, "second", sv.Agent)
	tr, err = c.Session(ctx, sid)
	require.NoError(t, err)
	require.Equal(t, "第二个智能体的会话", tr.Session.Title)

	use("Delete")
	del, err := c.Delete(ctx, sid, false)
	require.NoError(t, err)
	require.Equal(t, api.DeleteResponse{SessionID: sid, Deleted: true}, *del)
	_, err = c.Session(ctx, sid)
	require.True(t, errors.As(err, &ce))
	require.Equal(t, string(api.CodeSessionNotFound), ce.Code)

	require.Empty(t, rt.missing(), "operations of /api/openapi.json that no client method reaches")
	require.Empty(t, rt.unlisted, "client requests to paths /api/openapi.json does not list")

	var uncalled []string
	ty := reflect.TypeOf(&client.Client{})
	for i := range ty.NumMethod() {
		if name := ty.Method(i).Name; !called[name] {
			uncalled = append(uncalled, name)
		}
	}
	require.Empty(t, uncalled, "client methods this test does not call")
}

// must returns a function that returns its stream, failing the test at once
// on an error.
func must(t *testing.T) func(*client.Stream, error) *client.Stream {
	return func(s *client.Stream, err error) *client.Stream {
		t.Helper()
		require.NoError(t, err)
		return s
	}
}

// drainUntil reads s until an event named last (inclusive) and closes it.
func drainUntil(t *testing.T, s *client.Stream, last string) []*client.Event {
	t.Helper()
	defer s.Close()
	var out []*client.Event
	for ev, err := range s.All() {
		require.NoError(t, err)
		out = append(out, ev)
		if ev.Name == last {
			return out
		}
	}
	require.Failf(t, "stream ended", "no %s in %v", last, names(out))
	return out
}

// TestDeleteRefusesAnActiveRunUnlessForced: Delete of a session whose run
// waits on a question is 409 run_in_progress and deletes nothing; with
// force it cancels the run and deletes the session, whose question leaves
// the inbox.
func TestDeleteRefusesAnActiveRunUnlessForced(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(ask("call_1", singleArgs))
	evs := drain(t, must(t)(b.c.Chat(b.ctx, "", "问我")))
	req := find(t, evs, api.EventUserInputRequired).Value.(*api.InputRequest)

	_, err := b.c.Delete(b.ctx, req.SessionID, false)
	var ce *client.Error
	require.True(t, errors.As(err, &ce), "%v", err)
	require.Equal(t, http.StatusConflict, ce.Status)
	require.Equal(t, string(api.CodeRunInProgress), ce.Code)
	p, err := b.c.Pending(b.ctx, req.SessionID)
	require.NoError(t, err)
	require.Equal(t, req.ID, p.Pending.ID, "the refused delete left the question pending")

	del, err := b.c.Delete(b.ctx, req.SessionID, true)
	require.NoError(t, err)
	require.True(t, del.Deleted)
	inbox, err := b.c.Inbox(b.ctx, client.InboxQuery{Status: api.InboxPending})
	require.NoError(t, err)
	require.Empty(t, inbox.Interactions)
	_, err = b.c.Rename(b.ctx, req.SessionID, "gone")
	require.True(t, errors.As(err, &ce))
	require.Equal(t, string(api.CodeSessionNotFound), ce.Code)
}

// TestPrincipalEventsResumeAfterLastEventID: the caller's own stream, opened
// again with the LastEventID of a closed one, replays exactly what came after
// it (the receipt and the run's end, each with its sessionId) and nothing
// before it.
func TestPrincipalEventsResumeAfterLastEventID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	feed := must(t)(b.c.PrincipalEvents(b.ctx, 0))
	b.model.push(ask("call_1", singleArgs))
	evs := drain(t, must(t)(b.c.Chat(b.ctx, "", "问我")))
	req := find(t, evs, api.EventUserInputRequired).Value.(*api.InputRequest)
	ev, err := feed.Next()
	require.NoError(t, err)
	require.Equal(t, api.EventUserInputRequired, ev.Name)
	last := feed.LastEventID()
	require.Equal(t, ev.ID, last)
	require.NoError(t, feed.Close())

	b.model.push(model.Message{Content: "好。"})
	drain(t, must(t)(b.c.Continue(b.ctx, api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Selections: []string{"safe"}})))

	again := must(t)(b.c.PrincipalEvents(b.ctx, last))
	defer again.Close()
	ev, err = again.Next()
	require.NoError(t, err)
	require.Equal(t, api.EventUserInputResolved, ev.Name, "the replay starts after the last id seen")
	require.Equal(t, last+1, ev.ID)
	var withSession struct {
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, ev.Decode(&withSession))
	require.Equal(t, req.SessionID, withSession.SessionID)
	ev, err = again.Next()
	require.NoError(t, err)
	require.Equal(t, api.EventDone, ev.Name)
	require.NoError(t, ev.Decode(&withSession))
	require.Equal(t, req.SessionID, withSession.SessionID)
}
