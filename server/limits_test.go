package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
)

func setupProvider() model.Provider {
	return model.ProviderFunc{ProviderName: "test:echo", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}, FinishReason: "stop"}, nil
	}}
}

// guard bounds how long a test waits for the server on a raw connection, so
// a server that never answers fails the test instead of hanging it. It is
// never what a test measures: the server's own deadlines are much shorter.
const guard = 20 * time.Second

// slowRequest opens a raw TCP connection and sends a request line, the
// headers and the first bytes of a body of Content-Length 100000: the rest of
// the body never comes, as from a client that trickles its body.
func slowRequest(t *testing.T, srv *lubantest.Server, method, path string, hdr ...string) (net.Conn, *bufio.Reader) {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	require.NoError(t, conn.SetDeadline(time.Now().Add(guard)))
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n", method, path, u.Host)
	for i := 0; i+1 < len(hdr); i += 2 {
		fmt.Fprintf(&b, "%s: %s\r\n", hdr[i], hdr[i+1])
	}
	b.WriteString("\r\n{\"message\":\"")
	_, err = io.WriteString(conn, b.String())
	require.NoError(t, err)
	return conn, bufio.NewReader(conn)
}

// requireClosed reads what is left and requires the server to close the
// connection (EOF), not to wait for the rest of the body.
func requireClosed(t *testing.T, br *bufio.Reader) {
	t.Helper()
	_, err := io.Copy(io.Discard, br)
	require.NoError(t, err, "the server closes the connection (EOF), it does not wait for the body")
}

func TestUnauthenticatedBodyIsRefusedBeforeItArrives(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for _, tc := range []struct {
		name   string
		path   string
		hdr    []string
		status int
	}{
		{"no credentials", "/api/chat", nil, http.StatusUnauthorized},
		{"wrong bearer", "/api/chat", []string{"Authorization", "Bearer wrong"}, http.StatusUnauthorized},
		{"wrong cookie", "/api/chat/continue", []string{"Cookie", "luban_token=wrong"}, http.StatusUnauthorized},
		{"cookie from another origin", "/api/chat", []string{"Cookie", "luban_token=" + srv.Token, "Origin", "https://evil.example"}, http.StatusForbidden},
		// Routes that read no body drop it the same way.
		{"the page", "/", nil, http.StatusNotFound},
		{"readiness", "/readyz", nil, http.StatusNotFound},
		{"no such route", "/nope", nil, http.StatusNotFound},
		{"mcp without credentials", "/mcp", nil, http.StatusUnauthorized},
		{"mcp with a wrong bearer", "/mcp", []string{"Authorization", "Bearer wrong"}, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, br := slowRequest(t, srv, "POST", tc.path, tc.hdr...)
			resp, err := http.ReadResponse(br, nil)
			require.NoError(t, err, "an answer before the body is complete")
			require.Equal(t, tc.status, resp.StatusCode)
			require.True(t, resp.Close, "the server says it closes the connection")
			requireClosed(t, br)
		})
	}
}

func TestSlowAuthenticatedBodyIsCutOffAtTheDeadline(t *testing.T) {
	t.Parallel()
	srv := lubantest.Start(t, lubantest.Options{Provider: setupProvider(), BodyReadTimeout: 50 * time.Millisecond})
	for _, path := range []string{"/api/chat", "/api/chat/continue", "/api/sessions"} {
		method := "POST"
		if path == "/api/sessions" {
			method = "GET" // a body nobody reads is bounded too
		}
		_, br := slowRequest(t, srv, method, path, "Authorization", "Bearer "+srv.Token)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err, "%s: the server answers when the body does not arrive in time", path)
		if method == "POST" {
			b, _ := io.ReadAll(resp.Body)
			require.Equal(t, http.StatusRequestTimeout, resp.StatusCode, "%s: %s", path, b)
			require.Contains(t, string(b), `"request_timeout"`)
		}
		requireClosed(t, br)
	}
	// The server still answers requests that come in time.
	var out map[string]any
	require.Equal(t, http.StatusOK, srv.JSON("GET", "/api/sessions", nil, &out))
}

func TestOversizedBodyIsRefusedEverywhere(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	big := `{"message":"` + strings.Repeat("x", 2<<20) + `"}`
	for _, path := range []string{"/api/chat", "/api/chat/continue"} {
		resp := srv.Request("POST", path, big, "")
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, "%s: %s", path, b)
	}
}

// A stream answers a POST whose body was read in time; it lives on past the
// body's read deadline for as long as its run (the deadline is for the
// request, not for the response).
func TestStreamOutlivesTheBodyDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	p := model.ProviderFunc{ProviderName: "test:wait", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "late"}, FinishReason: "stop"}, nil
	}}
	const deadline = 50 * time.Millisecond
	srv := lubantest.Start(t, lubantest.Options{Provider: p, BodyReadTimeout: deadline, Heartbeat: 10 * time.Millisecond})
	resp := srv.Request("POST", "/api/chat", map[string]any{"message": "hi"}, "")
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sc := bufio.NewScanner(resp.Body)
	start := time.Now()
	// Heartbeats keep coming well after the deadline has passed.
	for time.Since(start) < 6*deadline {
		require.True(t, sc.Scan(), "the stream ended early: %v", sc.Err())
	}
	close(release)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: done") {
			return
		}
	}
	require.NoError(t, sc.Err())
	require.Fail(t, "the stream ended without done")
}

// An authenticated /mcp body that takes longer than a refused request's
// drain (1 s) to arrive is read like any /api body (30 s), and answered.
func TestSlowAuthenticatedMCPBodyIsRead(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	conn, err := net.Dial("tcp", u.Host)
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(guard)))
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`
	_, err = fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s",
		u.Host, srv.Token, len(body), body[:20])
	require.NoError(t, err)
	time.Sleep(1500 * time.Millisecond)
	_, err = io.WriteString(conn, body[20:])
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	require.Contains(t, string(b), `"serverInfo"`)
}
