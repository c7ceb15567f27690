package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/server"
)

// asker asks one single-choice question per run, then answers with text.
func asker() model.Provider {
	return model.ProviderFunc{ProviderName: "fake:asker", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		last := req.Messages[len(req.Messages)-1]
		if last.Role == model.RoleTool {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "ok"}, FinishReason: "stop"}, nil
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_1", Name: "ask_user",
			Arguments: `{"title":"Pick","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`}}}, FinishReason: "tool_calls"}, nil
	}}
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuf) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuf) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// opsServer serves base's runner with a page stand-in, a log buffer and
// extra readiness checks.
func opsServer(t *testing.T, base *lubantest.Server, checks ...server.ReadyCheck) (string, *syncBuf) {
	t.Helper()
	logs := &syncBuf{}
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "PAGE") })
	srv, err := server.New(server.Options{Runner: base.Runner, Tokens: []string{"test-token", "other-token"}, Web: page,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), ReadyChecks: checks})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return hs.URL, logs
}

func get(t *testing.T, url string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

func TestLivezAndReadyzNeedNoTokenAndGiveDetails(t *testing.T) {
	t.Parallel()
	base := lubantest.Start(t, lubantest.Options{Provider: asker()})
	url, _ := opsServer(t, base, server.ReadyCheck{Name: "mcp:files", Check: func(context.Context) error { return nil }})
	code, _, body := get(t, url+"/livez")
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, `{"status":"ok"}`, body)

	code, hdr, body := get(t, url+"/readyz")
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, hdr.Get("Content-Type"), "application/json")
	var rs server.ReadyStatus
	require.NoError(t, json.Unmarshal([]byte(body), &rs))
	require.Equal(t, "ok", rs.Status)
	require.Equal(t, "ok", rs.Checks["store"].Status)
	require.Equal(t, "ok", rs.Checks["mcp:files"].Status)
}

func TestReadyzFailsWhenACheckFails(t *testing.T) {
	t.Parallel()
	base := lubantest.Start(t, lubantest.Options{Provider: asker()})
	url, logs := opsServer(t, base, server.ReadyCheck{Name: "mcp:down", Check: func(context.Context) error { return errors.New("dial tcp 10.1.2.3:99: refused") }})
	code, _, body := get(t, url+"/readyz")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	var rs server.ReadyStatus
	require.NoError(t, json.Unmarshal([]byte(body), &rs))
	require.Equal(t, "unavailable", rs.Status)
	require.Equal(t, "ok", rs.Checks["store"].Status)
	require.Equal(t, "unavailable", rs.Checks["mcp:down"].Status)
	require.NotContains(t, body, "10.1.2.3", "error texts stay in the log")
	require.Contains(t, logs.String(), "10.1.2.3")
}

func TestUnknownPathsAre404NeverThePage(t *testing.T) {
	t.Parallel()
	base := lubantest.Start(t, lubantest.Options{Provider: asker()})
	url, _ := opsServer(t, base)
	for _, p := range []string{"/", "/s/sess_abc", "/q/req_abc", "/inbox", "/assets/index-abc.js", "/favicon.svg"} {
		code, _, body := get(t, url+p)
		require.Equal(t, http.StatusOK, code, p)
		require.Equal(t, "PAGE", body, p)
	}
	for _, p := range []string{"/metrics", "/healthz", "/nope", "/s/", "/s/a/b", "/inbox/x", "/.env", "/admin/config.php", "/wp-login"} {
		code, _, body := get(t, url+p)
		require.Equal(t, http.StatusNotFound, code, p)
		require.NotContains(t, body, "PAGE", p)
	}
	code, hdr, body := get(t, url+"/api/nope", "Authorization", "Bearer test-token")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, hdr.Get("Content-Type"), "application/json")
	require.Contains(t, body, `"not_found"`)
}

func TestAccessLogHasOneLinePerRequestWithoutSecrets(t *testing.T) {
	t.Parallel()
	base := lubantest.Start(t, lubantest.Options{Provider: asker()})
	url, logs := opsServer(t, base)
	code, _, _ := get(t, url+"/api/sessions?secret=hunter2", "Authorization", "Bearer test-token")
	require.Equal(t, http.StatusOK, code)
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["msg"] == "http request" {
			lines = append(lines, m)
		}
	}
	require.Len(t, lines, 1)
	require.Equal(t, "GET", lines[0]["method"])
	require.Equal(t, "/api/sessions", lines[0]["path"])
	require.Equal(t, float64(200), lines[0]["status"])
	require.Greater(t, lines[0]["bytes"], float64(0))
	require.NotEmpty(t, lines[0]["duration"])
	require.NotContains(t, logs.String(), "hunter2")
	require.NotContains(t, logs.String(), "test-token")
}

func TestDeleteSession(t *testing.T) {
	t.Parallel()
	s := lubantest.Start(t, lubantest.Options{Provider: asker()})
	evs, err := s.Chat("", "ask me").Until("user_input_required", 10*time.Second)
	require.NoError(t, err)
	first, _ := lubantest.Find(evs, "session")
	var sess api.SessionEvent
	require.NoError(t, first.Decode(&sess))
	id := sess.SessionID

	// Another principal cannot see it, so cannot delete it.
	resp := s.Request("DELETE", "/api/sessions/"+id, nil, "other-token")
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// The run waits for an answer: 409 without force.
	var out map[string]map[string]any
	require.Equal(t, http.StatusConflict, s.JSON("DELETE", "/api/sessions/"+id, nil, &out))
	require.Equal(t, "run_in_progress", out["error"]["code"])
	require.Equal(t, http.StatusOK, s.JSON("GET", "/api/sessions/"+id, nil, &map[string]any{}))

	require.Equal(t, http.StatusBadRequest, s.JSON("DELETE", "/api/sessions/"+id+"?force=maybe", nil, &out))

	var del api.DeleteResponse
	require.Equal(t, http.StatusOK, s.JSON("DELETE", "/api/sessions/"+id+"?force=true", nil, &del))
	require.Equal(t, api.DeleteResponse{SessionID: id, Deleted: true}, del)
	require.Equal(t, http.StatusNotFound, s.JSON("GET", "/api/sessions/"+id, nil, &out))
	require.Equal(t, "session_not_found", out["error"]["code"])
	var list struct {
		Sessions []api.SessionView `json:"sessions"`
	}
	require.Equal(t, http.StatusOK, s.JSON("GET", "/api/sessions", nil, &list))
	require.Empty(t, list.Sessions)
	tr, err := s.Store.TraceList(context.Background(), id)
	require.NoError(t, err)
	require.Empty(t, tr)

	resp = s.Request("DELETE", "/api/sessions/"+id, nil, "")
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestRenameSession(t *testing.T) {
	t.Parallel()
	s := lubantest.Start(t, lubantest.Options{Provider: asker()})
	evs, err := s.Chat("", "ask me").Until("user_input_required", 10*time.Second)
	require.NoError(t, err)
	first, _ := lubantest.Find(evs, "session")
	var sess api.SessionEvent
	require.NoError(t, first.Decode(&sess))
	id := sess.SessionID
	var before struct {
		Sessions []api.SessionView `json:"sessions"`
	}
	require.Equal(t, http.StatusOK, s.JSON("GET", "/api/sessions", nil, &before))
	require.Len(t, before.Sessions, 1)

	// Whitespace collapses; the session keeps its place (updatedAt) and status.
	var v api.SessionView
	require.Equal(t, http.StatusOK, s.JSON("PATCH", "/api/sessions/"+id, map[string]any{"title": "  季度\n报告  <b>x</b> "}, &v))
	require.Equal(t, "季度 报告 <b>x</b>", v.Title)
	require.Equal(t, id, v.ID)
	require.True(t, before.Sessions[0].UpdatedAt.Equal(v.UpdatedAt))
	require.Equal(t, before.Sessions[0].Status, v.Status)
	var after struct {
		Sessions []api.SessionView `json:"sessions"`
	}
	require.Equal(t, http.StatusOK, s.JSON("GET", "/api/sessions", nil, &after))
	require.Equal(t, "季度 报告 <b>x</b>", after.Sessions[0].Title)

	// Refused titles change nothing.
	var out map[string]map[string]any
	for _, bad := range []any{
		map[string]any{"title": " \t "},
		map[string]any{"title": strings.Repeat("长", agent.MaxTitleRunes+1)},
		map[string]any{"title": "a\u0000b"},
		map[string]any{"title": 7},
		"{not json",
	} {
		require.Equal(t, http.StatusBadRequest, s.JSON("PATCH", "/api/sessions/"+id, bad, &out), "%v", bad)
		require.Equal(t, "invalid_request", out["error"]["code"])
	}
	require.Equal(t, http.StatusOK, s.JSON("PATCH", "/api/sessions/"+id, map[string]any{"title": strings.Repeat("长", agent.MaxTitleRunes)}, &v))

	// Another principal's session does not exist for them.
	resp := s.Request("PATCH", "/api/sessions/"+id, map[string]any{"title": "mine now"}, "other-token")
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, http.StatusNotFound, s.JSON("PATCH", "/api/sessions/sess_nope", map[string]any{"title": "x"}, &out))
	require.Equal(t, "session_not_found", out["error"]["code"])
	require.Equal(t, http.StatusOK, s.JSON("GET", "/api/sessions", nil, &after))
	require.Equal(t, strings.Repeat("长", agent.MaxTitleRunes), after.Sessions[0].Title)
}

func TestDeleteEndedSessionWithoutForce(t *testing.T) {
	t.Parallel()
	s := lubantest.Start(t, lubantest.Options{Provider: asker()})
	evs, err := s.Chat("", "ask me").Until("user_input_required", 10*time.Second)
	require.NoError(t, err)
	first, _ := lubantest.Find(evs, "session")
	var sess api.SessionEvent
	require.NoError(t, first.Decode(&sess))
	var st map[string]string
	require.Equal(t, http.StatusOK, s.JSON("POST", "/api/sessions/"+sess.SessionID+"/cancel", nil, &st))
	// A subscriber of the session (a tab, luban chat) is told it is gone:
	// its stream ends once the session is deleted, and a reconnect is 404.
	watch := s.Events(sess.SessionID, evs[len(evs)-1].ID)
	defer watch.Close()
	resp := s.Request("DELETE", "/api/sessions/"+sess.SessionID, nil, "")
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = watch.All(10 * time.Second)
	require.NoError(t, err, "the stream of a deleted session ends")
	resp = s.Request("GET", "/api/sessions/"+sess.SessionID+"/events", nil, "", "Last-Event-ID", "1")
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	msgs, err := s.Store.MessageList(context.Background(), sess.SessionID)
	require.NoError(t, err)
	require.Empty(t, msgs)
	audit, err := s.Store.AuditList(context.Background(), sess.SessionID)
	require.NoError(t, err)
	require.NotEmpty(t, audit, "audit entries outlive the session")
}
