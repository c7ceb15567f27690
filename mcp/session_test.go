package mcp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/mcptest"
	"github.com/lubanhq/luban/mcp"
)

// An older client's session ends after SessionTimeout without a request:
// a session that only initialized is gone (the next request on it is 404),
// while a held call keeps its session for as long as it is held and gets
// its answer.
func TestIdleSessionsExpire(t *testing.T) {
	t.Parallel()
	s := startLuban(t)
	sum := sha256.Sum256([]byte(s.Token))
	principal := "p_" + hex.EncodeToString(sum[:8]) // the server's principal of the token
	const idle = 2 * time.Second                    // well above the gaps between one client's requests on a loaded machine
	h, err := mcp.NewHandler(mcp.Options{Runner: s.Runner, Secret: []byte("k"), SessionTimeout: idle, KeepAlive: 100 * time.Millisecond,
		Verify: func(tok string) string {
			if tok == s.Token {
				return principal
			}
			return ""
		}})
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)

	// initialize only, with raw HTTP: the session id, then silence.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + legacyProtocol + `","capabilities":{},"clientInfo":{"name":"idle","version":"1"}}}`
	post := func(sid, body string) *http.Response {
		req, err := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.Token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", legacyProtocol)
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		return resp
	}
	resp := post("", init)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	resp = post(sid, ping)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "the session is alive while in use")

	// A held call lasts longer than the idle timeout and still gets its
	// answer.
	cs, prog := connect(t, hs.URL, s.Token, legacyProtocol, nil)
	done := mcptest.CallAsync(cs, &sdk.CallToolParams{Name: "ask_user", Arguments: json.RawMessage(singleArgs)}, "tok-held")
	pr := recv(t, prog)

	time.Sleep(3 * idle)
	resp = post(sid, ping)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	// assert, not require: the held call below must still be answered, or
	// the server's cleanup would wait for it.
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the idle session has ended")

	resp = s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": pr.SessionID, "requestId": pr.RequestID,
		"selections": []string{"dev"}, "customInput": "", "cancelled": false}, "", "Accept", "application/json")
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	o := recv(t, done)
	require.NoError(t, o.Err, "the held call's session did not end under it")
	require.False(t, o.Res.IsError)
}
