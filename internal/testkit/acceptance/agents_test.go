package acceptance

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/tool"
)

// docs/design.md §9: several agents in one server. GET /api/agents lists them, the
// default first; POST /api/chat {agent} picks one for a new session, which
// keeps it; an unknown agent is 400 invalid_request naming it; the session
// list and the transcript carry the agent.
func TestSeveralAgents(t *testing.T) {
	t.Parallel()
	var e *env
	e = setup(t, func(o *lubantest.Options) {
		o.AgentName = "helper"
		o.Tools = []tool.Tool{tool.CurrentTime(nil)}
		o.MoreAgents = []*agent.Agent{{Name: "writer", Provider: o.Provider, System: "You write.", Tools: tool.Allowlist{"ask_user", "current_time"}}}
	})
	var list api.AgentList
	e.get("/api/agents", &list)
	require.Len(t, list.Agents, 2)
	require.Equal(t, api.AgentView{Name: "helper", Model: list.Agents[0].Model, Tools: []string{"ask_user", "AskUser", "current_time"}, AskTools: []string{"ask_user", "AskUser"}}, list.Agents[0])
	require.Equal(t, api.AgentView{Name: "writer", Model: list.Agents[1].Model, Tools: []string{"ask_user", "current_time"}, AskTools: []string{"ask_user"}}, list.Agents[1])
	require.NotEmpty(t, list.Agents[0].Model)

	e.model.push(turn{text: "hi from writer"}, turn{text: "again"}, turn{text: "default"})
	st := e.srv.Request("POST", "/api/chat", map[string]any{"message": "hello", "agent": "writer"}, "")
	evs := e.readAll(e.srv.Open(st, "chat"))
	var se struct{ SessionID string }
	require.NoError(t, evs[0].Decode(&se))
	e.remember(se.SessionID)
	reqs := e.waitRequests(1)
	require.Equal(t, "You write.", reqs[0].messages[0].content, "the writer's instructions")
	require.Equal(t, []string{"ask_user", "current_time"}, reqs[0].tools, "the writer's tools")

	// The session keeps its agent; naming another one is refused.
	ae := e.expectError(e.srv.Request("POST", "/api/chat", map[string]any{"sessionId": se.SessionID, "message": "x", "agent": "helper"}, ""),
		http.StatusBadRequest, "invalid_request")
	require.Contains(t, ae.Error.Message, `"writer"`)
	_, _, _ = e.chat(se.SessionID, "again")
	reqs = e.waitRequests(2)
	require.Equal(t, []string{"ask_user", "current_time"}, reqs[1].tools)

	ae = e.expectError(e.srv.Request("POST", "/api/chat", map[string]any{"message": "x", "agent": "nobody"}, ""), http.StatusBadRequest, "invalid_request")
	require.Contains(t, ae.Error.Message, `unknown agent "nobody"`)

	sid, _, _ := e.chat("", "default agent")
	var sl api.SessionList
	e.get("/api/sessions", &sl)
	agents := map[string]string{}
	for _, s := range sl.Sessions {
		agents[s.ID] = s.Agent
	}
	require.Equal(t, "writer", agents[se.SessionID])
	require.Equal(t, "helper", agents[sid])
	var tr api.Transcript
	e.get("/api/sessions/"+se.SessionID, &tr)
	require.Equal(t, "writer", tr.Session.Agent)
}
