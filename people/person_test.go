package people_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// TestPersonIsThePrincipal: with people configured, each of a person's
// tokens authenticates the person, whose id owns the sessions: alice's
// session started on her laptop is hers on her phone too (list, inbox,
// answer), bob sees none of it, and a token outside people stays a
// principal of its own (docs/design.md §16).
func TestPersonIsThePrincipal(t *testing.T) {
	t.Parallel()
	dir, err := principal.NewDirectory([]principal.Person{
		{ID: "alice", Name: "Alice", Tokens: []string{"alice-laptop", "alice-phone"}},
		{ID: "bob", Name: "Bob", Tokens: []string{"bob-token"}},
	})
	require.NoError(t, err)
	check := func(t *testing.T, s *lubantest.Server) {
		sess, req := chatAs(t, s, "alice-laptop", "deploy")
		got, err := s.Store.SessionGet(context.Background(), sess)
		require.NoError(t, err)
		require.Equal(t, "alice", got.Owner, "the person's id owns the session")

		var list api.SessionList
		require.Equal(t, 200, getJSON(t, s, "alice-phone", "/api/sessions", &list))
		require.Len(t, list.Sessions, 1)
		require.Equal(t, sess, list.Sessions[0].ID)
		var in api.InteractionList
		require.Equal(t, 200, getJSON(t, s, "alice-phone", "/api/interactions?status=pending", &in))
		require.Equal(t, []string{req.ID}, ids(&in))

		require.Equal(t, 200, getJSON(t, s, "bob-token", "/api/sessions", &list))
		require.Empty(t, list.Sessions)
		require.Equal(t, 404, getJSON(t, s, "bob-token", "/api/sessions/"+sess, nil))
		require.Equal(t, 200, getJSON(t, s, "test-token", "/api/sessions", &list), "a token outside people is a principal of its own")
		require.Empty(t, list.Sessions)
		require.Equal(t, 401, getJSON(t, s, "alice", "/api/sessions", nil), "a person's id is no token")

		resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess, "requestId": req.ID, "customInput": "main"}, "bob-token", "Accept", "application/json")
		resp.Body.Close()
		require.Equal(t, 404, resp.StatusCode, "bob cannot answer alice's question")
		resp = s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess, "requestId": req.ID, "customInput": "main"}, "alice-phone", "Accept", "application/json")
		resp.Body.Close()
		require.Equal(t, 202, resp.StatusCode)
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		check(t, start(t, func(o *lubantest.Options) { o.People = dir }))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pgtest.Skip(t)
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		check(t, start(t, func(o *lubantest.Options) { o.People = dir; o.Store = st }))
	})
}
