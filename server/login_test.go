package server_test

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/server"
)

// noFollow is a browser-like client (cookie jar) that shows redirects
// instead of following them.
func noFollow(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// open sends a GET as a browser does, with the given Sec-Fetch-* headers
// ("" leaves a header out), and returns the status, the response and its body.
func open(t *testing.T, c *http.Client, u string, hdr map[string]string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("GET", u, nil)
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(b)
}

func cookieOf(t *testing.T, c *http.Client, srv *lubantest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	for _, ck := range c.Jar.Cookies(u) {
		if ck.Name == server.CookieName {
			return ck.Value
		}
	}
	return ""
}

// navigation is what a browser sends for a link the user opened by hand
// (typed, pasted, or clicked in a terminal).
var navigation = map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}

func login(t *testing.T, c *http.Client, srv *lubantest.Server, token string) {
	t.Helper()
	resp, _ := open(t, c, srv.URL+"/?token="+token, navigation)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, token, cookieOf(t, c, srv))
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]*)"`)
var tokenField = regexp.MustCompile(`name="token" value="([^"]*)"`)

func TestFirstLoginFromThePrintedURL(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for _, hdr := range []map[string]string{navigation, nil /* curl, or a browser without fetch metadata */} {
		c := noFollow(t)
		resp, _ := open(t, c, srv.URL+"/?token="+srv.Token, hdr)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, "/", resp.Header.Get("Location"))
		require.Equal(t, srv.Token, cookieOf(t, c, srv))
	}
	// A cookie of a token the server no longer accepts is no login: the
	// printed URL replaces it in one step.
	c := noFollow(t)
	u, _ := url.Parse(srv.URL)
	c.Jar.SetCookies(u, []*http.Cookie{{Name: server.CookieName, Value: "stale-token", Path: "/"}})
	login(t, c, srv, srv.Token)
	// The same token again changes nothing and needs no confirmation.
	login(t, c, srv, srv.Token)
}

func TestTokenURLDoesNotSwitchALoggedInBrowser(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	confirm, onward := `action="/login"`, `data-testid="login-continue"`
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want string // the page: the confirmation form, or the link onward
	}{
		{"opened by hand", navigation, confirm},
		{"link in the page", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, confirm},
		{"no fetch metadata", nil, confirm},
		{"link on another site", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, onward},
		{"link on another port of this host", map[string]string{"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, onward},
		{"no fetch metadata, link on another site", map[string]string{"Referer": "https://evil.example/page"}, onward},
	} {
		c := noFollow(t)
		login(t, c, srv, srv.Token)
		resp, body := open(t, c, srv.URL+"/?token=other-token", tc.hdr)
		require.Equal(t, http.StatusOK, resp.StatusCode, tc.name)
		require.Empty(t, resp.Header.Values("Set-Cookie"), tc.name)
		require.Equal(t, srv.Token, cookieOf(t, c, srv), "%s: the browser keeps its principal", tc.name)
		require.Contains(t, resp.Header.Get("Content-Type"), "text/html", tc.name)
		require.Contains(t, body, tc.want, tc.name)
		require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
		require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'")
		require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
		require.Equal(t, "same-origin", resp.Header.Get("Referrer-Policy"))
	}
}

func TestTokenURLAsASubresourceSetsNoCookie(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	img := map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
	for _, logged := range []bool{false, true} {
		c := noFollow(t)
		if logged {
			login(t, c, srv, srv.Token)
		}
		resp, _ := open(t, c, srv.URL+"/?token=other-token", img)
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Empty(t, resp.Header.Values("Set-Cookie"))
		if logged {
			require.Equal(t, srv.Token, cookieOf(t, c, srv))
		}
	}
}

// A link followed from another site never signs in by itself: the browser
// does not send its SameSite=Strict cookie then, so the server cannot know
// whether it is signed in. The page's link onward is a navigation from this
// origin, where the usual rules apply.
func TestLoginFromAnotherSiteNeedsAClickOnThisOrigin(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	c := noFollow(t)
	resp, body := open(t, c, srv.URL+"/?token="+srv.Token, map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Empty(t, resp.Header.Values("Set-Cookie"))
	require.NotContains(t, body, `<form`)
	m := regexp.MustCompile(`href="(/\?token=[^"]*)" data-testid="login-continue"`).FindStringSubmatch(body)
	require.NotNil(t, m, body)
	resp, _ = open(t, c, srv.URL+html.UnescapeString(m[1]), map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"})
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, srv.Token, cookieOf(t, c, srv))
}

// confirmForm opens /?token=to in c and returns the confirmation form's fields.
func confirmForm(t *testing.T, c *http.Client, srv *lubantest.Server, to string) url.Values {
	t.Helper()
	resp, body := open(t, c, srv.URL+"/?token="+to, navigation)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	m := csrfField.FindStringSubmatch(body)
	require.NotNil(t, m, body)
	tk := tokenField.FindStringSubmatch(body)
	require.NotNil(t, tk, body)
	return url.Values{"token": {html.UnescapeString(tk[1])}, "csrf": {html.UnescapeString(m[1])}}
}

func postForm(t *testing.T, c *http.Client, u string, form url.Values, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", u, strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func TestConfirmedSwitchNeedsOwnOriginAndItsForm(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	c := noFollow(t)
	login(t, c, srv, srv.Token)
	form := confirmForm(t, c, srv, "other-token")
	own := map[string]string{"Origin": srv.URL, "Sec-Fetch-Site": "same-origin"}

	forged := url.Values{"token": {"other-token"}, "csrf": {"guess"}}
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  map[string]string
	}{
		{"another site posts the form", form, map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}},
		{"another port of this host", form, map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}},
		{"no origin at all", form, nil},
		{"a form the server did not make", forged, own},
		{"the form of another token", url.Values{"token": {"test-token"}, "csrf": form["csrf"]}, own},
		{"an unknown token", url.Values{"token": {"nope"}, "csrf": form["csrf"]}, own},
	} {
		resp := postForm(t, c, srv.URL+"/login", tc.form, tc.hdr)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, tc.name)
		require.Empty(t, resp.Header.Values("Set-Cookie"), tc.name)
		require.Equal(t, srv.Token, cookieOf(t, c, srv), tc.name)
	}

	// Another browser (another cookie) cannot replay this browser's form.
	c2 := noFollow(t)
	login(t, c2, srv, srv.Token)
	u, _ := url.Parse(srv.URL)
	c2.Jar.SetCookies(u, []*http.Cookie{{Name: server.CookieName, Value: "other-token", Path: "/"}})
	resp := postForm(t, c2, srv.URL+"/login", form, own)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)

	// The user's own confirmation switches.
	resp = postForm(t, c, srv.URL+"/login", form, own)
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/", resp.Header.Get("Location"))
	require.Equal(t, "other-token", cookieOf(t, c, srv))
	// The switched browser now sees the other principal's sessions only.
	r2, body := open(t, c, srv.URL+"/api/sessions", nil)
	require.Equal(t, http.StatusOK, r2.StatusCode, body)
}

func TestPageHeadersForbidSameOriginImages(t *testing.T) {
	t.Parallel()
	srv := lubantest.Start(t, lubantest.Options{Provider: setupProvider(), Web: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "<!doctype html><p>page</p>")
	})})
	resp, _ := open(t, http.DefaultClient, srv.URL+"/", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	csp := resp.Header.Get("Content-Security-Policy")
	require.Contains(t, csp, "img-src data:")
	require.NotContains(t, csp, "img-src 'self'")
	require.Contains(t, csp, "form-action 'self'")
	require.Contains(t, csp, "frame-ancestors 'none'")
}

// A sign-in link with a wrong token opened as a page gets the page itself
// with 401 (the page words "token rejected" in the user's language) and no
// cookie; anything else gets the plain sentence; the API's 401 stays JSON.
func TestRejectedTokenServesThePageWith401(t *testing.T) {
	t.Parallel()
	srv := lubantest.Start(t, lubantest.Options{Provider: setupProvider(), Web: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><p>page</p>")
	})})
	c := noFollow(t)
	resp, body := open(t, c, srv.URL+"/?token=wrong", navigation)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, "<!doctype html><p>page</p>", body)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "img-src data:")
	require.Equal(t, "same-origin", resp.Header.Get("Referrer-Policy"))
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"))
	require.Empty(t, resp.Cookies())
	require.Empty(t, cookieOf(t, c, srv))

	// A conditional request cannot turn it into a 304.
	resp, _ = open(t, c, srv.URL+"/?token=wrong", map[string]string{"Sec-Fetch-Dest": "document", "If-Modified-Since": "Mon, 01 Jan 2035 00:00:00 GMT"})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)

	// Not a page: the plain sentence, as before.
	resp, _ = open(t, c, srv.URL+"/?token=wrong", map[string]string{"Accept": "text/html,application/xhtml+xml"})
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	for _, hdr := range []map[string]string{nil, {"Sec-Fetch-Dest": "image", "Accept": "text/html"}} {
		resp, body = open(t, c, srv.URL+"/?token=wrong", hdr)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"))
		require.Contains(t, body, "invalid token")
	}

	resp, body = open(t, c, srv.URL+"/api/sessions", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, body, `"code":"unauthorized"`)
}

// TestSignInLinkOfASession: the token link of a session (or a question,
// or the inbox) signs in like the printed URL and lands on that view,
// without the token; an asset's URL never signs in.
func TestSignInLinkOfASession(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for _, path := range []string{"/s/sess_abc", "/inbox", "/q/ask_abc"} {
		c := noFollow(t)
		resp, _ := open(t, c, srv.URL+path+"?token="+srv.Token, navigation)
		require.Equal(t, http.StatusSeeOther, resp.StatusCode, path)
		require.Equal(t, path, resp.Header.Get("Location"))
		require.Equal(t, srv.Token, cookieOf(t, c, srv))
	}
	c := noFollow(t)
	resp, _ := open(t, c, srv.URL+"/favicon.svg?token="+srv.Token, nil)
	require.NotEqual(t, http.StatusSeeOther, resp.StatusCode, "an asset's URL is no sign-in link")
	require.Empty(t, cookieOf(t, c, srv))
	resp, body := open(t, c, srv.URL+"/s/sess_abc?token="+srv.Token, map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "cross-site"})
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, `href="/s/sess_abc?token=`, "from another site: one click continues to the same view")
}
