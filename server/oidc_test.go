package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// provider runs a real OpenID provider (zitadel/oidc's op package, with
// its example in-memory storage and login form) on loopback, with users
// alice@example.com (a person of luban), mallory@example.com (not one) and
// eve@example.com (email not verified). It returns its issuer and the
// clients map, where the test registers luban once its URL is known.
func provider(t *testing.T) (string, map[string]*storage.Client) {
	t.Helper()
	users := map[string]*storage.User{
		"u1": {ID: "u1", Username: "alice", Password: "alice-pw", FirstName: "Alice", Email: "Alice@Example.com", EmailVerified: true},
		"u2": {ID: "u2", Username: "mallory", Password: "mallory-pw", FirstName: "Mallory", Email: "mallory@example.com", EmailVerified: true},
		"u3": {ID: "u3", Username: "eve", Password: "eve-pw", FirstName: "Eve", Email: "alice@example.com", EmailVerified: false},
	}
	b, err := json.Marshal(users)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "users.json")
	require.NoError(t, os.WriteFile(path, b, 0o600))
	us, err := storage.StoreFromFile(path)
	require.NoError(t, err)
	clients := map[string]*storage.Client{}
	hs := httptest.NewUnstartedServer(nil)
	issuer := "http://" + hs.Listener.Addr().String()
	hs.Config.Handler = exampleop.SetupServer(issuer, storage.NewStorageWithClients(us, clients), nil, false)
	hs.Start()
	t.Cleanup(hs.Close)
	return issuer, clients
}

// ssoBrowser is an HTTP client with cookies that follows redirects as a
// browser does and sends a page's fetch metadata.
func ssoBrowser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar}
}

// pageGet is a browser's navigation to u: its response and body.
func pageGet(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	return open(t, c, u, map[string]string{"Sec-Fetch-Dest": "document", "Accept": "text/html"})
}

var authRequestID = regexp.MustCompile(`name="id" value="([^"]+)"`)

// signIn opens luban's page in a fresh browser, is sent to the provider,
// fills its login form as user and returns the last response and body.
func signIn(t *testing.T, lubanURL, issuer, user, password string) (*http.Client, *http.Response, string) {
	t.Helper()
	c := ssoBrowser(t)
	resp, body := pageGet(t, c, lubanURL+"/q/some-request")
	require.Equal(t, 200, resp.StatusCode, body)
	require.True(t, strings.HasPrefix(resp.Request.URL.String(), issuer+"/login/username"), "the page sent the browser to the provider's login: %s", resp.Request.URL)
	m := authRequestID.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	resp, err := c.PostForm(issuer+"/login/username", url.Values{"id": {m[1]}, "username": {user}, "password": {password}})
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return c, resp, string(b)
}

// TestSingleSignOn: the page's single sign-on against a real OpenID
// provider (authorization code with PKCE): a login whose email is a
// person's signs the browser in as that person (their sessions, their
// id as owner); a login of anyone else, or of an unverified email, is a
// 403 page that says why and signs nobody in (docs/design.md §16).
func TestSingleSignOn(t *testing.T) {
	t.Parallel()
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		singleSignOn(t, nil)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pgtest.Skip(t)
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		singleSignOn(t, st)
	})
}

func singleSignOn(t *testing.T, st store.Store) {
	issuer, clients := provider(t)
	dir, err := principal.NewDirectory([]principal.Person{{ID: "alice", Name: "Alice", Email: "alice@example.com"}, {ID: "bob", Name: "Bob", Tokens: []string{"bob-token"}}})
	require.NoError(t, err)
	sc, err := scripted.Parse([]byte(`{"name": "hi", "turns": [], "final": "hello"}`))
	require.NoError(t, err)
	s := lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "a", People: dir, Store: st,
		OIDC: &server.OIDC{Issuer: issuer, ClientID: "luban", ClientSecret: "luban-secret"}})
	clients["luban"] = storage.WebClient("luban", "luban-secret", s.URL+"/auth/callback")

	// Without a sign-in the API is 401 and the page goes to the provider.
	c := ssoBrowser(t)
	resp, err := c.Get(s.URL + "/api/sessions")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode)

	c, resp, body := signIn(t, s.URL, issuer, "alice", "alice-pw")
	require.Equal(t, s.URL+"/q/some-request", resp.Request.URL.String(), "back on the page it started from: %d %s", resp.StatusCode, body)
	require.Equal(t, 404, resp.StatusCode, "this test server has no page (Options.Web): %s", body)
	u, _ := url.Parse(s.URL)
	var session *http.Cookie
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == server.SessionCookieName {
			session = ck
		}
	}
	require.NotNil(t, session, "signed in")

	// Signed in as alice: her chat is hers.
	req, _ := http.NewRequest("POST", s.URL+"/api/chat", strings.NewReader(`{"message": "hi"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", s.URL)
	req.Header.Set("Accept", "application/json")
	resp, err = c.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Less(t, resp.StatusCode, 300, string(b))
	var list api.SessionList
	resp, err = c.Get(s.URL + "/api/sessions")
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&list))
	resp.Body.Close()
	require.Len(t, list.Sessions, 1)
	ss, err := s.Store.SessionGet(t.Context(), list.Sessions[0].ID)
	require.NoError(t, err)
	require.Equal(t, "alice", ss.Owner)
	require.Equal(t, 200, s.JSON("GET", "/api/sessions", nil, &list))
	require.Empty(t, list.Sessions, "another principal sees nothing of alice's")

	// A forged or altered session cookie signs nobody in.
	for _, v := range []string{session.Value + "x", strings.Replace(session.Value, ".", "x.", 1), "e30." + strings.SplitN(session.Value, ".", 2)[1]} {
		req, _ := http.NewRequest("GET", s.URL+"/api/sessions", nil)
		req.AddCookie(&http.Cookie{Name: server.SessionCookieName, Value: v})
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 401, resp.StatusCode, v)
	}

	// Someone the provider knows but luban does not: 403 with the reason.
	c, resp, body = signIn(t, s.URL, issuer, "mallory", "mallory-pw")
	require.Equal(t, 403, resp.StatusCode, body)
	require.Contains(t, body, "you signed in as mallory@example.com, but no person of this luban has that email")
	for _, ck := range c.Jar.Cookies(u) {
		require.NotEqual(t, server.SessionCookieName, ck.Name)
	}
	resp, err = c.Get(s.URL + "/api/sessions")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 401, resp.StatusCode)

	// An email the provider has not verified is no one's.
	_, resp, body = signIn(t, s.URL, issuer, "eve", "eve-pw")
	require.Equal(t, 403, resp.StatusCode, body)
	require.Contains(t, body, "alice@example.com is not verified at the sign-in provider")

	// A callback this browser did not start is refused.
	resp, body = pageGet(t, ssoBrowser(t), s.URL+"/auth/callback?code=x&state=y")
	require.Equal(t, 400, resp.StatusCode)
	require.Contains(t, body, "this sign-in was not started in this browser")

	// The token of a person still works beside single sign-on.
	var none api.SessionList
	resp = s.Request("GET", "/api/sessions", nil, "bob-token")
	require.Equal(t, 200, resp.StatusCode)
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&none))
	resp.Body.Close()
}
