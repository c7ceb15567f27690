package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
)

func setup(t *testing.T) *lubantest.Server {
	t.Helper()
	p := model.ProviderFunc{ProviderName: "test:echo", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}, FinishReason: "stop"}, nil
	}}
	return lubantest.Start(t, lubantest.Options{Provider: p})
}

// browser returns a client with a cookie jar that has logged in through
// /?token=, as the page does.
func browser(t *testing.T, srv *lubantest.Server) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(srv.URL + "/?token=" + srv.Token)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, srv.URL+"/", resp.Request.URL.String(), "the token must not stay in the URL")
	return c
}

func post(t *testing.T, c *http.Client, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestTokenLoginSetsHttpOnlyCookie(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(srv.URL + "/?token=" + srv.Token)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusSeeOther, resp.StatusCode)
	require.Equal(t, "/", resp.Header.Get("Location"))
	ck := resp.Cookies()
	require.Len(t, ck, 1)
	require.True(t, ck[0].HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, ck[0].SameSite)

	resp, err = c.Get(srv.URL + "/?token=wrong")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Empty(t, resp.Cookies())
}

func TestCookieAuthReadsWithoutOrigin(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	c := browser(t, srv)
	resp, err := c.Get(srv.URL + "/api/sessions")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestCookieAuthStateChangeNeedsOwnOrigin(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	c := browser(t, srv)
	body := `{"sessionId":"sess_x","requestId":"ask_x","selections":[],"customInput":"","cancelled":true}`
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no origin", nil, http.StatusForbidden},
		{"other site", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"look-alike host", map[string]string{"Origin": srv.URL + ".evil.example"}, http.StatusForbidden},
		// Same origin passes authentication and reaches the API: the
		// session does not exist, so 404 — not 401 or 403.
		{"own origin", map[string]string{"Origin": srv.URL}, http.StatusNotFound},
		{"fetch metadata", map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusNotFound},
	} {
		status, b := post(t, c, srv.URL+"/api/chat/continue", body, tc.hdr)
		require.Equal(t, tc.want, status, "%s: %s", tc.name, b)
		if tc.want == http.StatusForbidden {
			require.Contains(t, b, `"forbidden_origin"`, tc.name)
		}
	}
}

func TestBearerIsNotOriginChecked(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	status, b := post(t, http.DefaultClient, srv.URL+"/api/sessions/sess_x/cancel", "", map[string]string{"Authorization": "Bearer " + srv.Token, "Origin": "https://evil.example"})
	require.Equal(t, http.StatusNotFound, status, b)
	require.Contains(t, b, `"session_not_found"`)
}

func TestReadyz(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	resp, err := http.Get(srv.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	srv.Store.Close()
	resp, err = http.Get(srv.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
}

func TestUnknownAPIPathIsJSON404(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	var out map[string]map[string]any
	require.Equal(t, http.StatusNotFound, srv.JSON("GET", "/api/nope", nil, &out))
	require.Equal(t, "not_found", out["error"]["code"])
}
