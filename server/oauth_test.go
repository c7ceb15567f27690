package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/tool"
)

// protectedMCP is an MCP server (the go-sdk's) whose /mcp requires a bearer
// token the OpenID provider at issuer accepts (its userinfo endpoint
// answers 200 to it), announced by protected resource metadata (RFC 9728)
// naming issuer as its authorization server. It offers the tool "whoami",
// which answers the token's subject. accepted counts the tokens accepted.
func protectedMCP(t *testing.T, issuer string) (string, *atomic.Int64) {
	t.Helper()
	var accepted atomic.Int64
	s := sdk.NewServer(&sdk.Implementation{Name: "protected", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "the caller's subject"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		sub := ""
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			sub = req.Extra.TokenInfo.UserID
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you are " + sub}}}, nil, nil
	})
	mux := http.NewServeMux()
	hs := httptest.NewUnstartedServer(mux)
	base := "http://" + hs.Listener.Addr().String()
	verify := func(ctx context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/userinfo", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, auth.ErrInvalidToken
		}
		var ui struct {
			Sub string `json:"sub"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&ui); err != nil {
			return nil, err
		}
		accepted.Add(1)
		return &auth.TokenInfo{UserID: ui.Sub, Expiration: time.Now().Add(time.Minute)}, nil
	}
	prm := base + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: base + "/mcp", AuthorizationServers: []string{issuer}, ScopesSupported: []string{"openid"},
	}))
	mux.Handle("/mcp", auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(
		sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)))
	hs.Start()
	t.Cleanup(hs.Close)
	return base + "/mcp", &accepted
}

// lateAuth is the server's MCPAuthorizer once the manager exists (the
// manager needs luban's URL for its callback, luban the authorizer).
type lateAuth struct {
	mu sync.Mutex
	m  *mcpclient.Manager
}

func (l *lateAuth) get() *mcpclient.Manager { l.mu.Lock(); defer l.mu.Unlock(); return l.m }
func (l *lateAuth) Authorizations() []mcpclient.Authorization {
	if m := l.get(); m != nil {
		return m.Authorizations()
	}
	return nil
}
func (l *lateAuth) BeginAuthorization(s, by string) (string, error) {
	return l.get().BeginAuthorization(s, by)
}
func (l *lateAuth) PendingServer(st string) (string, string, error) { return l.get().PendingServer(st) }
func (l *lateAuth) CompleteAuthorization(st, code, iss, e, by string) (string, error) {
	return l.get().CompleteAuthorization(st, code, iss, e, by)
}

// waitFor polls cond (the manager's state changes in its own goroutines)
// until it holds, failing the test after 20 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func signedIn(t *testing.T, lubanURL, token string) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(lubanURL + "/?token=" + token)
	require.NoError(t, err)
	resp.Body.Close()
	return c
}

var hidden = regexp.MustCompile(`name="(state|code|iss|error)" value="([^"]*)"`)

// TestMCPOAuthFromThePage: an MCP server that requires OAuth (the go-sdk's
// bearer middleware and protected resource metadata, a real OpenID
// provider as its authorization server) waits for a person; the one its
// oauth.authorizers name sees it in GET /api/mcp/authorizations, follows
// connectUrl to the provider, signs in, comes back to GET /oauth/callback
// and confirms from luban's origin; the server's tools then appear without
// a restart. Someone else cannot complete the round, a used state is
// refused, and a second manager on the same grant file (a restart)
// connects without a person; with the access token expired, or refused by
// the server before its expiry, it refreshes with the refresh token
// instead of asking again (docs/design.md §11).
func TestMCPOAuthFromThePage(t *testing.T) {
	t.Parallel()
	issuer, clients := provider(t)
	mcpURL, accepted := protectedMCP(t, issuer)
	dir, err := principal.NewDirectory([]principal.Person{{ID: "alice", Name: "Alice", Tokens: []string{"alice-token"}}, {ID: "bob", Name: "Bob", Tokens: []string{"bob-token"}}})
	require.NoError(t, err)
	sc, err := scripted.Parse([]byte(`{"name": "hi", "turns": [], "final": "hello"}`))
	require.NoError(t, err)
	la := &lateAuth{}
	s := lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "a", People: dir, MCPAuth: la})
	clients["luban-mcp"] = storage.WebClient("luban-mcp", "luban-mcp-secret", s.URL+"/oauth/callback")

	secrets := mcpclient.NewSecretFile(t.TempDir())
	cfg := []config.MCPServer{{Name: "remote", URL: mcpURL, Timeout: 10 * time.Second, ConnectTimeout: 10 * time.Second,
		OAuth: &config.MCPOAuth{ClientID: "luban-mcp", ClientSecret: "luban-mcp-secret", Scopes: []string{"offline_access"}, Authorizers: []string{"alice"}}}}
	newManager := func(asked *atomic.Int64) (*mcpclient.Manager, *tool.Registry) {
		reg := tool.NewRegistry()
		m := mcpclient.New(cfg, mcpclient.Options{Registry: reg, RedirectURL: s.URL + "/oauth/callback", Tokens: secrets,
			MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond,
			OnAuthorization: func(mcpclient.Authorization) { asked.Add(1) }})
		m.Start(context.Background(), nil)
		t.Cleanup(m.Close)
		return m, reg
	}
	var asked atomic.Int64
	m, reg := newManager(&asked)
	la.mu.Lock()
	la.m = m
	la.mu.Unlock()
	waitFor(t, "the server to wait for authorization", func() bool { return len(m.Authorizations()) == 1 })
	assert.Equal(t, mcpclient.StateAuthorization, m.Status()[0].State)

	list := func(token string) []api.MCPAuthorization {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/api/mcp/authorizations", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode)
		var out api.MCPAuthorizationList
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out.Authorizations
	}
	require.Empty(t, list("bob-token"), "bob is not among the server's authorizers")
	as := list("alice-token")
	require.Len(t, as, 1)
	require.Equal(t, "remote", as[0].Server)
	require.Equal(t, "/oauth/start/remote", as[0].ConnectURL)

	bob := signedIn(t, s.URL, "bob-token")
	resp, body := open(t, bob, s.URL+as[0].ConnectURL, nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, body)

	// Alice follows the card's link: to the provider, signs in, back to luban.
	alice := signedIn(t, s.URL, "alice-token")
	resp, body = open(t, alice, s.URL+as[0].ConnectURL, nil)
	require.Equal(t, 200, resp.StatusCode, body)
	require.True(t, strings.HasPrefix(resp.Request.URL.String(), issuer+"/login/username"), "at the provider's login: %s", resp.Request.URL)
	id := authRequestID.FindStringSubmatch(body)
	require.NotNil(t, id, body)
	resp, err = alice.PostForm(issuer+"/login/username", url.Values{"id": {id[1]}, "username": {"alice"}, "password": {"alice-pw"}})
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode, string(b))
	require.True(t, strings.HasPrefix(resp.Request.URL.String(), s.URL+"/oauth/callback?"), "back at luban's callback: %s", resp.Request.URL)
	require.Contains(t, string(b), "Connect remote")
	require.Equal(t, "same-origin", resp.Header.Get("Referrer-Policy"), "no-referrer would make a browser send Origin: null with the form")
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	form := url.Values{}
	for _, f := range hidden.FindAllStringSubmatch(string(b), -1) {
		form.Set(f[1], f[2])
	}
	require.NotEmpty(t, form.Get("code"))
	require.NotEmpty(t, form.Get("state"))

	postForm := func(c *http.Client, origin string) int {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/oauth/callback", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		nc := *c
		nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, err := nc.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, postForm(alice, "https://evil.example"), "a post from another site is refused")
	require.Equal(t, http.StatusForbidden, postForm(bob, s.URL), "only the person who began the round completes it")
	require.Equal(t, http.StatusSeeOther, postForm(alice, s.URL))
	require.Equal(t, http.StatusBadRequest, postForm(alice, s.URL), "a state is used once")

	waitFor(t, "the server's tools", func() bool { _, ok := reg.Get("remote__whoami"); return ok })
	require.Equal(t, mcpclient.StateReady, m.Status()[0].State)
	require.Empty(t, m.Authorizations())
	e, _ := reg.Get("remote__whoami")
	res, err := e.Tool.Call(context.Background(), json.RawMessage(`{}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "you are u1", res.Content, "the tool acts as the person who authorized")
	require.EqualValues(t, 1, asked.Load())

	g, err := secrets.Load("remote")
	require.NoError(t, err)
	require.NotNil(t, g)
	require.NotEmpty(t, g.Token.RefreshToken, "offline_access brought a refresh token")
	m.Close()

	// A restart: the grant is read back and used; nobody is asked.
	var asked2 atomic.Int64
	m2, reg2 := newManager(&asked2)
	waitFor(t, "the restarted server's tools", func() bool { _, ok := reg2.Get("remote__whoami"); return ok })
	require.Zero(t, asked2.Load())
	m2.Close()

	// A stale access token: the refresh token gets a new one; nobody is asked.
	g.Token.AccessToken = "stale-" + g.Token.AccessToken
	g.Token.Expiry = time.Now().Add(-time.Minute)
	require.NoError(t, secrets.Save("remote", g))
	before := accepted.Load()
	var asked3 atomic.Int64
	_, reg3 := newManager(&asked3)
	waitFor(t, "the refreshed server's tools", func() bool { _, ok := reg3.Get("remote__whoami"); return ok })
	require.Zero(t, asked3.Load())
	require.Greater(t, accepted.Load(), before)
	g2, err := secrets.Load("remote")
	require.NoError(t, err)
	require.NotEqual(t, g.Token.AccessToken, g2.Token.AccessToken, "the refreshed token was saved")
	require.False(t, strings.HasPrefix(g2.Token.AccessToken, "stale-"))

	// A token the server refuses before it expires (revoked): the 401 is
	// answered with the refresh token first; nobody is asked.
	g2.Token.AccessToken = "revoked-" + g2.Token.AccessToken
	g2.Token.Expiry = time.Now().Add(time.Hour)
	require.NoError(t, secrets.Save("remote", g2))
	var asked4 atomic.Int64
	_, reg4 := newManager(&asked4)
	waitFor(t, "the server's tools after a 401", func() bool { _, ok := reg4.Get("remote__whoami"); return ok })
	require.Zero(t, asked4.Load())
	g3, err := secrets.Load("remote")
	require.NoError(t, err)
	require.False(t, strings.HasPrefix(g3.Token.AccessToken, "revoked-"), "the refreshed token was saved")
}
