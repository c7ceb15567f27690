package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/tool"
)

// TestChatSaysWhichMCPServerNeedsAuthorization: an MCP server behind the
// go-sdk's bearer middleware, whose protected resource metadata names an
// authorization server, makes the manager wait for a person; `luban chat`
// then names it and the link that starts the authorization
// (docs/design.md §11, "OAuth").
func TestChatSaysWhichMCPServerNeedsAuthorization(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	// The authorization server's metadata (RFC 8414); nobody signs in here,
	// so its endpoints are never reached.
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(&oauthex.AuthServerMeta{Issuer: hs.URL, AuthorizationEndpoint: hs.URL + "/authorize", TokenEndpoint: hs.URL + "/token",
			ResponseTypesSupported: []string{"code"}, CodeChallengeMethodsSupported: []string{"S256"}})
	})
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: hs.URL + "/mcp", AuthorizationServers: []string{hs.URL}}))
	s := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	never := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return nil, auth.ErrInvalidToken
	}
	mux.Handle("/mcp", auth.RequireBearerToken(never, &auth.RequireBearerTokenOptions{ResourceMetadataURL: hs.URL + "/.well-known/oauth-protected-resource/mcp"})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)))

	m := mcpclient.New([]config.MCPServer{{Name: "tracker", URL: hs.URL + "/mcp", OAuth: &config.MCPOAuth{ClientID: "luban"}}},
		mcpclient.Options{Registry: tool.NewRegistry(), RedirectURL: "http://127.0.0.1:1/oauth/callback", Tokens: mcpclient.NewSecretFile(t.TempDir())})
	ready := make(chan struct{})
	m.Start(context.Background(), ready)
	t.Cleanup(m.Close)
	<-ready // the first attempt's outcome: waiting for a person
	require.Len(t, m.Authorizations(), 1)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	srv := lubantest.Start(t, lubantest.Options{Provider: &chatModel{}, MCPAuth: m})
	b := &chatBundle{t: t, ctx: ctx, srv: srv}
	out := b.chat("/quit\n")
	require.Contains(t, out, "the MCP server tracker needs your authorization: open URL/oauth/start/tracker in a browser signed in to luban\n")
	require.Less(t, strings.Index(out, "luban chat: type a message"), strings.Index(out, "the MCP server tracker"))
}
