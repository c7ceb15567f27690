package mcpclient_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/tool"
)

// lockedServer is a go-sdk MCP server behind the SDK's bearer middleware
// that accepts no token, whose protected resource metadata names an
// authorization server (its RFC 8414 metadata served beside it); nobody
// signs in there, so every round stays pending until luban ends it.
func lockedServer(t *testing.T) string {
	t.Helper()
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&oauthex.AuthServerMeta{Issuer: hs.URL, AuthorizationEndpoint: hs.URL + "/authorize", TokenEndpoint: hs.URL + "/token",
			ResponseTypesSupported: []string{"code"}, CodeChallengeMethodsSupported: []string{"S256"}})
	})
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: hs.URL + "/mcp", AuthorizationServers: []string{hs.URL}, ScopesSupported: []string{"tickets:read"}}))
	s := sdk.NewServer(&sdk.Implementation{Name: "locked", Version: "1"}, nil)
	never := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return nil, auth.ErrInvalidToken
	}
	mux.Handle("/mcp", auth.RequireBearerToken(never, &auth.RequireBearerTokenOptions{ResourceMetadataURL: hs.URL + "/.well-known/oauth-protected-resource/mcp"})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)))
	return hs.URL + "/mcp"
}

// TestAuthorizationRounds: a server that needs OAuth waits in
// needs_authorization with one round; its URL carries PKCE (S256), the
// state, the resource indicator, the configured client and scopes; only
// the person who began it completes it; a round expires after
// AuthorizationTTL (its state is refused from then on) and the next
// attempt makes a new one with a new state; an authorization server's
// refusal ends a round the same way (docs/design.md §11, "OAuth").
func TestAuthorizationRounds(t *testing.T) {
	t.Parallel()
	mcpURL := lockedServer(t)
	m := mcpclient.New([]config.MCPServer{{Name: "tickets", URL: mcpURL, OAuth: &config.MCPOAuth{ClientID: "luban", Scopes: []string{"tickets:write"}}}},
		mcpclient.Options{Registry: tool.NewRegistry(), RedirectURL: "http://luban.example/oauth/callback", Tokens: mcpclient.NewSecretFile(t.TempDir()),
			AuthorizationTTL: 2 * time.Second, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	m.Start(context.Background(), nil)
	t.Cleanup(m.Close)

	round := func(not string) (string, *url.URL) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if len(m.Authorizations()) == 1 {
				u, err := m.BeginAuthorization("tickets", "ann")
				if err == nil {
					pu, err := url.Parse(u)
					require.NoError(t, err)
					if st := pu.Query().Get("state"); st != not {
						return st, pu
					}
				}
			}
			time.Sleep(5 * time.Millisecond)
		}
		t.Fatal("no new authorization round")
		return "", nil
	}
	state, u := round("")
	require.Equal(t, mcpclient.StateAuthorization, m.Status()[0].State)
	q := u.Query()
	require.Equal(t, "luban", q.Get("client_id"))
	require.Equal(t, "http://luban.example/oauth/callback", q.Get("redirect_uri"))
	require.Equal(t, "code", q.Get("response_type"))
	require.Equal(t, "S256", q.Get("code_challenge_method"))
	require.Len(t, q.Get("code_challenge"), 43, "a base64url SHA-256")
	require.Equal(t, mcpURL, q.Get("resource"))
	require.ElementsMatch(t, []string{"tickets:read", "tickets:write"}, strings.Fields(q.Get("scope")), "the metadata's scopes and the configured ones")
	require.GreaterOrEqual(t, len(state), 26, "at least 128 random bits")

	srv, by, err := m.PendingServer(state)
	require.NoError(t, err)
	require.Equal(t, "tickets", srv)
	require.Equal(t, "ann", by)
	_, err = m.CompleteAuthorization(state, "code", "", "", "bob")
	require.ErrorIs(t, err, mcpclient.ErrOtherAuthorizer)
	_, err = m.CompleteAuthorization("no-such-state", "code", "", "", "ann")
	require.ErrorIs(t, err, mcpclient.ErrNoAuthorization)

	// The round expires: its state is refused, and a new round follows.
	next, _ := round(state)
	require.NotEqual(t, state, next)
	_, _, err = m.PendingServer(state)
	require.ErrorIs(t, err, mcpclient.ErrNoAuthorization)
	_, err = m.CompleteAuthorization(state, "code", "", "", "ann")
	require.ErrorIs(t, err, mcpclient.ErrNoAuthorization)

	// The authorization server's refusal ends the round; another follows.
	name, err := m.CompleteAuthorization(next, "", "", "access_denied", "ann")
	require.NoError(t, err)
	require.Equal(t, "tickets", name)
	_, err = m.CompleteAuthorization(next, "", "", "access_denied", "ann")
	require.ErrorIs(t, err, mcpclient.ErrNoAuthorization, "a state is used once")
	third, _ := round(next)
	require.NotEqual(t, next, third)
}
