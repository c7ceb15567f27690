package acceptance

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// docs/design.md §3/§8: every /api call needs the bearer token: 401 unauthorized
// without one or with a wrong one, before anything else happens.
func TestUnauthorized(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_u", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "私密")
	calls := []struct {
		method, path string
		body         any
	}{
		{"POST", "/api/chat", map[string]any{"message": "hi"}},
		{"POST", "/api/chat/continue", body(p.sessionID, p.req.ID, []string{"safe"}, "")},
		{"GET", "/api/interactions/pending?sessionId=" + p.sessionID, nil},
		{"GET", "/api/sessions", nil},
		{"GET", "/api/sessions/" + p.sessionID, nil},
		{"GET", "/api/sessions/" + p.sessionID + "/events", nil},
		{"POST", "/api/sessions/" + p.sessionID + "/cancel", nil},
		{"GET", "/api/sessions/" + p.sessionID + "/trace", nil},
	}
	for _, c := range calls {
		for _, tok := range []string{"-", "wrong-token"} {
			e.expectError(e.srv.Request(c.method, c.path, c.body, tok), http.StatusUnauthorized, "unauthorized")
		}
	}
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID, "nothing was answered or cancelled")
	require.Len(t, e.model.requests(), 1)
}

// docs/design.md §3: sessions belong to the authenticated principal; for another
// principal ("other-token") the session does not exist (404), and nothing
// it tries touches the session.
func TestOtherPrincipal(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_o", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "我的会话")
	const other = "other-token"
	for _, path := range []string{"/api/sessions/" + p.sessionID, "/api/sessions/" + p.sessionID + "/trace",
		"/api/sessions/" + p.sessionID + "/events", "/api/interactions/pending?sessionId=" + p.sessionID} {
		e.expectError(e.srv.Request("GET", path, nil, other), http.StatusNotFound, "session_not_found")
	}
	e.expectError(e.srv.Request("POST", "/api/sessions/"+p.sessionID+"/cancel", nil, other), http.StatusNotFound, "session_not_found")
	e.expectError(e.srv.Request("POST", "/api/chat", map[string]any{"sessionId": p.sessionID, "message": "插话"}, other), http.StatusNotFound, "session_not_found")
	e.expectError(e.srv.Request("POST", "/api/chat/continue", body(p.sessionID, p.req.ID, []string{"implement"}, ""), other), http.StatusNotFound, "session_not_found")
	e.expectError(e.srv.Request("POST", "/api/chat/continue", cancelBody(p.sessionID, p.req.ID), other), http.StatusNotFound, "session_not_found")

	resp := e.srv.Request("GET", "/api/sessions", nil, other)
	var list struct{ Sessions []struct{ ID string } }
	require.NoError(t, decodeBody(resp, &list))
	require.Empty(t, list.Sessions, "the other principal sees none of my sessions")
	var mine struct{ Sessions []struct{ ID, Status string } }
	e.get("/api/sessions", &mine)
	require.Len(t, mine.Sessions, 1)
	require.Equal(t, p.sessionID, mine.Sessions[0].ID)

	pv := e.pending(p.sessionID)
	require.Equal(t, p.req.ID, pv.Pending.ID, "still pending")
	e.model.push(turn{text: "好"})
	evs := e.answer(body(p.sessionID, p.req.ID, []string{"safe"}, ""))
	require.Equal(t, "completed", doneStatus(t, evs))
}

// docs/design.md §3: 413 payload_too_large for a body above the limit and for free
// text above 8,000 characters; nothing is consumed, and 8,000 characters
// exactly are accepted verbatim.
func TestPayloadTooLarge(t *testing.T) {
	t.Parallel()
	e := setup(t)
	args := `{"title":"写点什么","mode":"text"}`
	e.model.push(turn{calls: []call{{id: "call_p", name: "ask_user", args: args}}})
	p := e.ask("", "长文本")

	huge := body(p.sessionID, p.req.ID, nil, strings.Repeat("x", 1<<20+1024))
	e.reject(huge, http.StatusRequestEntityTooLarge, "payload_too_large")
	e.expectError(e.srv.Request("POST", "/api/chat", map[string]any{"message": strings.Repeat("y", 1<<20+1024)}, ""), http.StatusRequestEntityTooLarge, "payload_too_large")
	// A message over agent.MaxMessageRunes names the field and its bound,
	// as customInput's does, so a client can show the limit.
	longMsg := e.expectError(e.srv.Request("POST", "/api/chat", map[string]any{"message": strings.Repeat("长", agent.MaxMessageRunes) + "🚀"}, ""), http.StatusRequestEntityTooLarge, "payload_too_large")
	requireTooLong(t, longMsg, "message", agent.MaxMessageRunes, agent.MaxMessageRunes+1)
	over := strings.Repeat("长", askuser.MaxCustomInput) + "🚀"
	requireTooLong(t, e.reject(body(p.sessionID, p.req.ID, nil, over), http.StatusRequestEntityTooLarge, "payload_too_large"), "customInput", askuser.MaxCustomInput, askuser.MaxCustomInput+1)
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID, "nothing consumed")

	exact := strings.Repeat("长", askuser.MaxCustomInput-1) + "🚀"
	e.model.push(turn{text: "读完了"})
	evs := e.answer(body(p.sessionID, p.req.ID, nil, exact))
	require.Equal(t, exact, content(t, results(t, evs)[0].Content).CustomInput)
	require.Equal(t, exact, content(t, e.waitRequests(2)[1].last().content).CustomInput)
}

// requireTooLong checks that a 413 names field with too_long and
// {max, got, unit: "characters"} (design.md §2).
func requireTooLong(t *testing.T, ae apiError, field string, max, got int) {
	t.Helper()
	require.Len(t, ae.Error.Details, 1)
	d := ae.Error.Details[0]
	require.Equal(t, field, d.Field)
	require.Equal(t, api.DetailTooLong, d.Code)
	require.EqualValues(t, max, d.Params["max"])
	require.EqualValues(t, got, d.Params["got"])
	require.Equal(t, "characters", d.Params["unit"])
}

// docs/design.md §3: malformed bodies are 400 invalid_request.
func TestMalformedRequest(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{calls: []call{{id: "call_m", name: "ask_user", args: singleArgs}}})
	p := e.ask("", "坏请求")
	for _, raw := range []string{`{`, `[]`, `{"sessionId":"` + p.sessionID + `","requestId":"` + p.req.ID + `","selections":"safe"}`, `{"sessionId":"` + p.sessionID + `"}{}`} {
		e.expectError(e.srv.Request("POST", "/api/chat/continue", raw, ""), http.StatusBadRequest, "invalid_request")
	}
	e.reject(map[string]any{"sessionId": p.sessionID}, http.StatusBadRequest, "invalid_request")
	e.expectError(e.srv.Request("POST", "/api/chat", map[string]any{"message": "  "}, ""), http.StatusBadRequest, "invalid_request")
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID)
}

// docs/design.md §3: SSE headers on every stream (chat, continue, events), even when
// the client offers gzip; heartbeat comments on an idle subscription; an id
// on every event, strictly increasing.
func TestSSEHeaders(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *lubantest.Options) { o.Heartbeat = 20 * time.Millisecond })
	e.model.push(turn{calls: []call{{id: "call_h", name: "ask_user", args: singleArgs}}}, turn{text: "好"})

	// Asking for gzip explicitly keeps the Go transport from decompressing
	// silently, so Content-Encoding is seen as sent.
	resp := e.srv.Request("POST", "/api/chat", map[string]any{"message": "头"}, "", "Accept-Encoding", "gzip")
	chat := e.srv.Open(resp, "chat")
	evs := e.readAll(chat)
	require.Equal(t, "keep-alive", resp.Header.Get("Connection"))
	se := decode[struct{ SessionID, RunID string }](t, evs[0])
	e.remember(se.SessionID)
	p := e.pausedAt(se.SessionID, se.RunID, evs)

	resp = e.srv.Request("POST", "/api/chat/continue", body(p.sessionID, p.req.ID, []string{"safe"}, ""), "", "Accept-Encoding", "gzip")
	cont := e.readAll(e.srv.Open(resp, "continue"))
	require.Equal(t, "completed", doneStatus(t, cont))

	resp = e.srv.Request("GET", "/api/sessions/"+p.sessionID+"/events", nil, "", "Accept-Encoding", "gzip")
	sub := e.srv.Open(resp, "events")
	all, err := sub.Until("done", waitFor)
	require.NoError(t, err)
	checkSSE(t, sub, all)
	sub.Close()
	require.Equal(t, len(lubantest.Logged(evs))+len(lubantest.Logged(cont)), len(all))
	requireSequence(t, all)

	// An idle subscription stays open and sends heartbeat comments.
	resp = e.srv.Request("GET", "/api/sessions/"+p.sessionID+"/events", nil, "", "Last-Event-ID", itoa(all[len(all)-1].ID))
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	lines := make(chan string)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			select {
			case lines <- l:
			case <-ctx.Done():
				return
			}
		}
	}()
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "the subscription ended")
			if strings.HasPrefix(l, ":") {
				return
			}
			require.Equal(t, "\n", l, "nothing but heartbeats after the last event")
		case <-ctx.Done():
			t.Fatal("no heartbeat comment")
		}
	}
}

// requireSequence checks the ids of consecutive events evs of one session:
// each is the one before plus one, except before an assistant message, where
// the ids of the deltas a slow stream committed and its message's
// transaction deleted are skipped (docs/design.md §3: ids increase; they may skip
// deleted deltas).
func requireSequence(t *testing.T, evs []lubantest.Event) {
	t.Helper()
	for i := 1; i < len(evs); i++ {
		var d struct{ Role string }
		require.NoError(t, json.Unmarshal(evs[i].Data, &d))
		if evs[i].Name == "message" && d.Role == "assistant" {
			require.Greater(t, evs[i].ID, evs[i-1].ID, "per-session sequence increases")
			continue
		}
		require.Equal(t, evs[i-1].ID+1, evs[i].ID, "per-session sequence without gaps but before an assistant message")
	}
}

// A body over the request bound (MaxBodyBytes on /api, AG-UI's own on
// /api/agui) is a 413 whose detail names the whole body: field "", too_long,
// {max, got, unit: "bytes"} (got is the Content-Length the client sent).
func TestBodyTooLargeHasADetail(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for path, max := range map[string]int{"/api/chat": 1 << 20, "/api/agui": 4 << 20} {
		raw := `{"message":"` + strings.Repeat("y", max) + `"}`
		ae := e.expectError(e.srv.Request("POST", path, raw, ""), http.StatusRequestEntityTooLarge, "payload_too_large")
		require.Len(t, ae.Error.Details, 1, path)
		d := ae.Error.Details[0]
		require.Equal(t, "", d.Field, path)
		require.Equal(t, api.DetailTooLong, d.Code, path)
		require.EqualValues(t, max, d.Params["max"], path)
		require.EqualValues(t, len(raw), d.Params["got"], path)
		require.Equal(t, "bytes", d.Params["unit"], path)
	}
}

// An AskUser answer with several "other" texts over the bound lists every
// one of them, as a 422 lists every problem; nothing is consumed.
func TestAskUserEveryOtherTooLongIsListed(t *testing.T) {
	t.Parallel()
	e := setup(t)
	args := `{"questions":[` +
		`{"question":"一？","header":"一","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}],"multi_select":false},` +
		`{"question":"二？","header":"二","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}],"multi_select":false},` +
		`{"question":"三？","header":"三","options":[{"label":"A","description":"a"},{"label":"B","description":"b"}],"multi_select":false}]}`
	e.model.push(turn{calls: []call{{id: "call_o", name: "AskUser", args: args}}})
	p := e.ask("", "问三个")
	over := strings.Repeat("长", askuser.MaxCustomInput+1)
	b := body(p.sessionID, p.req.ID, nil, "")
	b["answers"] = []api.QuestionAnswer{{Question: "一？", Other: over}, {Question: "二？", Selected: []string{"A"}}, {Question: "三？", Other: over + "长"}}
	ae := e.reject(b, http.StatusRequestEntityTooLarge, "payload_too_large")
	require.Len(t, ae.Error.Details, 2, "%+v", ae.Error.Details)
	for i, want := range []struct {
		field string
		got   int
	}{{"answers[0].other", askuser.MaxCustomInput + 1}, {"answers[2].other", askuser.MaxCustomInput + 2}} {
		d := ae.Error.Details[i]
		require.Equal(t, want.field, d.Field)
		require.Equal(t, api.DetailTooLong, d.Code)
		require.EqualValues(t, want.got, d.Params["got"])
		require.EqualValues(t, askuser.MaxCustomInput, d.Params["max"])
	}
	require.Equal(t, p.req.ID, e.pending(p.sessionID).Pending.ID, "nothing consumed")
}
