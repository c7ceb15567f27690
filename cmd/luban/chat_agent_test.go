package main

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

// TestChatAgentPicksTheAgentOfANewSession: `luban chat --agent NAME` starts
// its new session with that agent (the model hears that agent's
// instructions and the session keeps it); an agent the server does not have
// is refused before anything is sent, naming the ones it has; with
// --session, another agent than the session keeps is refused.
func TestChatAgentPicksTheAgentOfANewSession(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	m := &chatModel{}
	srv := lubantest.Start(t, lubantest.Options{Provider: m,
		MoreAgents: []*agent.Agent{{Name: "writer", System: "You write.", Provider: m, Tools: tool.Allowlist{"ask_user"}}}})
	b := &chatBundle{t: t, ctx: ctx, model: m, srv: srv, work: t.TempDir()}

	m.push(model.Message{Content: "写好了。"})
	out := b.chat("写一段话\n", "--agent", "writer")
	require.Contains(t, out, "写好了。")
	reqs := m.requests()
	require.Len(t, reqs, 1)
	require.Equal(t, model.RoleSystem, reqs[0].Messages[0].Role)
	require.Equal(t, "You write.", reqs[0].Messages[0].Content, "the writer agent answered")
	c, err := client.New(srv.URL, "test-token", nil)
	require.NoError(t, err)
	id := b.sessionID()
	tr, err := c.Session(ctx, id)
	require.NoError(t, err)
	require.Equal(t, "writer", tr.Session.Agent)

	out, err = b.chatErr("hello\n", "--agent", "nobody")
	require.EqualError(t, err, "no agent nobody (the server's agents: default, writer)", out)
	out, err = b.chatErr("hello\n", "--session", id, "--agent", "default")
	require.EqualError(t, err, "session "+id+" keeps its agent writer; --agent picks the agent of a new session", out)
	require.Len(t, m.requests(), 1, "a refused --agent sends nothing")

	// The same agent as the session keeps is fine.
	m.push(model.Message{Content: "又一段。"})
	out = b.chat("再写一段\n", "--session", id, "--agent", "writer")
	require.Contains(t, out, "又一段。")
}
