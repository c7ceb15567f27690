package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/principal"
)

// TestChatDelegatesAQuestion: "/delegate PERSON [message]" at a question
// hands it on (POST /api/interactions/{id}/delegate, docs/design.md §16);
// a delegate to oneself is refused with the server's reason and the
// question is asked again.
func TestChatDelegatesAQuestion(t *testing.T) {
	t.Parallel()
	dir, err := principal.NewDirectory([]principal.Person{
		{ID: "alice", Name: "Alice", Tokens: []string{"test-token"}},
		{ID: "bob", Name: "Bob", Tokens: []string{"bob-token"}},
	})
	require.NoError(t, err)
	b := setup(t)
	b.srv = lubantest.Start(t, lubantest.Options{Provider: b.model, Workspace: b.work, People: dir, Tokens: []string{"test-token"},
		Routes: []agent.Route{{Kind: agent.RouteAsk, Assignees: []string{"owner"}}}})
	b.model.push(asks("", "ask_user", chatSingleArgs))

	out := b.chat("ask me\n/delegate alice\n/delegate bob please decide\n/quit\n")
	require.Contains(t, out, "error: cannot hand it on:", "a delegate to oneself is refused")
	require.Contains(t, out, "→ handed to Bob\n")
	p := b.pending(b.sessionID())
	require.NotNil(t, p.Pending, "the question waits, now for Bob")
	var ids []string
	for _, a := range p.Pending.Assignees {
		ids = append(ids, a.ID)
	}
	require.Equal(t, []string{"bob"}, ids)
}
