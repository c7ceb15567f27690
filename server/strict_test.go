package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
)

func errorBody(t *testing.T, resp *http.Response) api.ErrorDetail {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var e api.ErrorBody
	require.NoError(t, json.Unmarshal(b, &e), "%s", b)
	return e.Error
}

// A continue body with a field the contract does not have is refused with a
// 400 that names it, before anything is looked up: a misspelt "selection"
// must not become an empty answer.
func TestContinueRefusesAnUnknownFieldByName(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	resp := srv.Continue(map[string]any{"sessionId": "s", "requestId": "r", "selection": []string{"a"}})
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	e := errorBody(t, resp)
	require.Equal(t, api.CodeInvalidRequest, e.Code)
	require.Contains(t, e.Message, `"selection"`)
	require.Equal(t, []api.FieldError{{Field: "selection", Code: api.DetailUnknownField, Message: "unknown field"}}, e.Details)

	// The known fields still reach the Runner: an unknown session is a 404.
	resp = srv.Continue(map[string]any{"sessionId": "s", "requestId": "r", "selections": []string{"a"}, "customInput": "", "cancelled": false})
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Equal(t, api.CodeSessionNotFound, errorBody(t, resp).Code)
}

// A route asked with another method is 405 with Allow listing its methods;
// a path no route has stays 404.
func TestWrongMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for path, allow := range map[string]string{
		"/api/chat":             "POST",
		"/api/chat/continue":    "POST",
		"/api/sessions/abc":     "DELETE, GET, PATCH",
		"/api/sessions":         "GET",
		"/api/sessions/x/trace": "GET",
	} {
		resp := srv.Request("PUT", path, nil, "")
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, path)
		require.Equal(t, allow, resp.Header.Get("Allow"), path)
		require.Equal(t, api.CodeMethodNotAllowed, errorBody(t, resp).Code, path)
	}
	resp := srv.Request("GET", "/api/chat", nil, "")
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	require.Equal(t, "POST", resp.Header.Get("Allow"))
	resp.Body.Close()

	resp = srv.Request("GET", "/api/no-such-thing", nil, "")
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
	require.Empty(t, resp.Header.Get("Allow"))
	require.Equal(t, api.CodeNotFound, errorBody(t, resp).Code)
}

// Every JSON body of /api is closed as the OpenAPI document says
// (additionalProperties false): a misspelt "sesionId" on /api/chat is a 400
// naming it, not a brand-new session; the same for a session rename.
func TestEveryJSONBodyRefusesAnUnknownFieldByName(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for _, c := range []struct {
		method, path, field string
		body                map[string]any
	}{
		{"POST", "/api/chat", "sesionId", map[string]any{"sesionId": "x", "message": "typo"}},
		{"PATCH", "/api/sessions/abc", "titel", map[string]any{"titel": "x"}},
	} {
		resp := srv.Request(c.method, c.path, c.body, "")
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, c.path)
		e := errorBody(t, resp)
		require.Equal(t, api.CodeInvalidRequest, e.Code, c.path)
		require.Contains(t, e.Message, `"`+c.field+`"`, c.path)
		require.Contains(t, e.Details, api.FieldError{Field: c.field, Code: api.DetailUnknownField, Message: "unknown field"}, c.path)
	}
	sessions := srv.Request("GET", "/api/sessions", nil, "")
	b, _ := io.ReadAll(sessions.Body)
	sessions.Body.Close()
	require.NotContains(t, string(b), "typo", "a refused chat must start no session")
}

// A body's field errors name the place as docs/design.md §3 writes paths:
// with array indices, and an unknown field below its object (what
// encoding/json reports names neither).
func TestBodyFieldErrorsNameThePlace(t *testing.T) {
	t.Parallel()
	srv := setup(t)
	for _, c := range []struct {
		body  string
		field string
		code  api.FieldCode
	}{
		{`{"sessionId":"s","answers":[{"requestId":5}]}`, "answers[0].requestId", api.DetailInvalidType},
		{`{"sessionId":"s","requestId":"r","selections":[1]}`, "selections[0]", api.DetailInvalidType},
		{`{"sessionId":"s","answers":[{"requestId":"r","bogus":1}]}`, "answers[0].bogus", api.DetailUnknownField},
		{`{"sessionId":"s","answers":[1]}`, "answers[0]", api.DetailInvalidType},
	} {
		resp := srv.Request("POST", "/api/chat/continue", c.body, "")
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, c.body)
		e := errorBody(t, resp)
		require.Equal(t, api.CodeInvalidRequest, e.Code, c.body)
		require.Len(t, e.Details, 1, c.body)
		require.Equal(t, c.field, e.Details[0].Field, c.body)
		require.Equal(t, c.code, e.Details[0].Code, c.body)
		require.Contains(t, e.Message, c.field, c.body)
	}
}
