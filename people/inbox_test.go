package people_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/store"
)

const waitFor = 15 * time.Second

// principalOf is the server's principal of token (server.Principal: "p_" and
// 16 hex digits of its SHA-256).
func principalOf(token string) string {
	sum := sha256.Sum256([]byte(token))
	return "p_" + hex.EncodeToString(sum[:8])
}

// askOnce asks one text question after every user message, then ends the
// run with a summary of the answer.
const askOnce = `{"name": "ask-once",
  "turns": [{"toolCalls": [{"name": "ask_user", "arguments": {"title": "Which branch?", "mode": "text"}}]}],
  "final": "ok: {{results}}"}`

func start(t *testing.T, mods ...func(o *lubantest.Options)) *lubantest.Server {
	t.Helper()
	sc, err := scripted.Parse([]byte(askOnce))
	require.NoError(t, err)
	o := lubantest.Options{Provider: scripted.New(sc), AgentName: "coder"}
	for _, m := range mods {
		m(&o)
	}
	return lubantest.Start(t, o)
}

// chatAs starts a chat as token and reads its stream until the question;
// it returns the session id and the request.
func chatAs(t *testing.T, s *lubantest.Server, token, message string) (string, api.InputRequest) {
	t.Helper()
	resp := s.Request("POST", "/api/chat", map[string]any{"message": message}, token)
	require.Equal(t, 200, resp.StatusCode)
	st := s.Open(resp, "chat")
	defer st.Close()
	evs, err := st.Until(api.EventUserInputRequired, waitFor)
	require.NoError(t, err)
	ev, ok := lubantest.Find(evs, api.EventUserInputRequired)
	require.True(t, ok)
	var req api.InputRequest
	require.NoError(t, ev.Decode(&req))
	return req.SessionID, req
}

func getJSON(t *testing.T, s *lubantest.Server, token, path string, out any) int {
	t.Helper()
	resp := s.Request("GET", path, nil, token)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if out != nil && resp.StatusCode == 200 {
		require.NoError(t, json.Unmarshal(b, out), "%s", b)
	}
	return resp.StatusCode
}

func ids(l *api.InteractionList) []string {
	out := []string{}
	for _, it := range l.Interactions {
		out = append(out, it.ID)
	}
	return out
}

// TestInboxAcrossSessionsAndPrincipals: three sessions, two principals; each
// sees its own requests only, oldest first, with the session title and
// agent, and answered ones move to resolved with their receipt.
func TestInboxAcrossSessionsAndPrincipals(t *testing.T) {
	t.Parallel()
	s := start(t)
	const alice, bob = "test-token", "other-token"
	s1, r1 := chatAs(t, s, alice, "deploy the site")
	_, rb := chatAs(t, s, bob, "bob's question")
	s2, r2 := chatAs(t, s, alice, "plan the trip")

	var in api.InteractionList
	require.Equal(t, 200, getJSON(t, s, alice, "/api/interactions?status=pending", &in))
	require.Equal(t, []string{r1.ID, r2.ID}, ids(&in), "alice's two, oldest first, none of bob's")
	first := in.Interactions[0]
	require.Equal(t, s1, first.SessionID)
	require.Equal(t, "Which branch?", first.Title)
	require.Equal(t, "coder", first.Agent)
	require.NotEmpty(t, first.SessionTitle)
	require.Equal(t, api.StatusPending, first.Status)
	require.Nil(t, first.Receipt)
	require.True(t, first.Resumable)
	require.Empty(t, in.Next)

	require.Equal(t, 200, getJSON(t, s, alice, "/api/interactions", &in), "status defaults to pending")
	require.Len(t, in.Interactions, 2)
	require.Equal(t, 200, getJSON(t, s, bob, "/api/interactions?status=pending", &in))
	require.Equal(t, []string{rb.ID}, ids(&in))

	// Paging.
	require.Equal(t, 200, getJSON(t, s, alice, "/api/interactions?status=pending&limit=1", &in))
	require.Equal(t, []string{r1.ID}, ids(&in))
	require.Equal(t, r1.ID, in.Next)
	require.Equal(t, 200, getJSON(t, s, alice, "/api/interactions?status=pending&limit=1&after="+in.Next, &in))
	require.Equal(t, []string{r2.ID}, ids(&in))

	// Bad input: a clear 400, never another principal's rows.
	for _, q := range []string{"status=open", "limit=0", "limit=501", "limit=x", "after=" + rb.ID, "after=nope", "before=" + r1.ID, "status=resolved&after=" + r1.ID} {
		require.Equal(t, 400, getJSON(t, s, alice, "/api/interactions?"+q, nil), q)
	}

	// Answer both of alice's: they move to resolved, newest first.
	for _, c := range []struct{ sess, req, text string }{{s1, r1.ID, "main"}, {s2, r2.ID, "release"}} {
		resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": c.sess, "requestId": c.req, "customInput": c.text}, alice, "Accept", "application/json")
		require.Equal(t, 202, resp.StatusCode)
		resp.Body.Close()
	}
	require.Equal(t, 200, getJSON(t, s, alice, "/api/interactions?status=pending", &in))
	require.Empty(t, in.Interactions)
	require.Equal(t, 200, getJSON(t, s, alice, "/api/interactions?status=resolved", &in))
	require.Equal(t, []string{r2.ID, r1.ID}, ids(&in))
	require.Equal(t, api.StatusAnswered, in.Interactions[0].Status)
	require.NotNil(t, in.Interactions[0].Receipt)
	require.Equal(t, "release", in.Interactions[0].Receipt.CustomInput)
	require.False(t, in.Interactions[0].Resumable)
	require.Equal(t, 200, getJSON(t, s, alice, "/api/interactions?status=resolved&limit=1&before="+r2.ID, &in))
	require.Equal(t, []string{r1.ID}, ids(&in))
	require.Equal(t, 200, getJSON(t, s, bob, "/api/interactions?status=resolved", &in))
	require.Empty(t, in.Interactions)
	require.Equal(t, 200, getJSON(t, s, bob, "/api/interactions?status=pending", &in))
	require.Equal(t, []string{rb.ID}, ids(&in))
}

// TestSessionsPage: GET /api/sessions pages past 100 with before=.
func TestSessionsPage(t *testing.T) {
	t.Parallel()
	s := start(t)
	ctx := context.Background()
	for i := range 105 {
		_, err := s.Store.SessionCreate(ctx, &store.SessionCreateParams{ID: fmt.Sprintf("sess_%03d", i), Owner: principalOf("test-token"), Title: "t", Now: time.Unix(int64(i), 0)})
		require.NoError(t, err)
	}
	_, err := s.Store.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_other", Owner: principalOf("other-token"), Now: time.Unix(1000, 0)})
	require.NoError(t, err)
	var seen []string
	before := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		var l api.SessionList
		require.Equal(t, 200, getJSON(t, s, "", "/api/sessions?limit=40&before="+before, &l))
		for _, ss := range l.Sessions {
			seen = append(seen, ss.ID)
		}
		if l.Next == "" {
			break
		}
		before = l.Next
	}
	require.Len(t, seen, 105)
	require.Equal(t, "sess_104", seen[0])
	require.Equal(t, "sess_000", seen[104])
	var l api.SessionList
	require.Equal(t, 200, getJSON(t, s, "", "/api/sessions", &l))
	require.Len(t, l.Sessions, 100)
	require.Equal(t, "sess_005", l.Next, "the last of the page")
	require.Equal(t, 400, getJSON(t, s, "", "/api/sessions?before=sess_other", nil))
	require.Equal(t, 400, getJSON(t, s, "", "/api/sessions?limit=1000", nil))
}

// TestPrincipalEvents: GET /api/events carries the lifecycle events of every
// session of the caller, with its own ids, replays after Last-Event-ID, and
// never another principal's.
func TestPrincipalEvents(t *testing.T) {
	t.Parallel()
	s := start(t)
	const alice, bob = "test-token", "other-token"
	open := func(token string, last string) *lubantest.Stream {
		hdr := []string{}
		if last != "" {
			hdr = []string{"Last-Event-ID", last}
		}
		resp := s.Request("GET", "/api/events", nil, token, hdr...)
		require.Equal(t, 200, resp.StatusCode)
		require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
		return s.Open(resp, "principal-"+token)
	}
	aliceLive := open(alice, "")
	defer aliceLive.Close()
	bobLive := open(bob, "")
	defer bobLive.Close()

	s1, r1 := chatAs(t, s, alice, "first")
	_, rb := chatAs(t, s, bob, "bob")
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	ev, err := aliceLive.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, api.EventUserInputRequired, ev.Name)
	require.Equal(t, int64(1), ev.ID)
	var req api.InputRequest
	require.NoError(t, ev.Decode(&req))
	require.Equal(t, r1.ID, req.ID)
	require.Equal(t, s1, req.SessionID)

	ev, err = bobLive.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), ev.ID, "bob's own feed starts at 1 and never holds alice's events")
	require.NoError(t, ev.Decode(&req))
	require.Equal(t, rb.ID, req.ID)

	// Answer: user_input_resolved (with sessionId added), then done.
	resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": s1, "requestId": r1.ID, "customInput": "x"}, alice, "Accept", "application/json")
	require.Equal(t, 202, resp.StatusCode)
	resp.Body.Close()
	ev, err = aliceLive.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, api.EventUserInputResolved, ev.Name)
	require.Equal(t, int64(2), ev.ID)
	var rc struct {
		api.Receipt
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, ev.Decode(&rc))
	require.Equal(t, s1, rc.SessionID)
	require.Equal(t, r1.ID, rc.RequestID)
	ev, err = aliceLive.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, api.EventDone, ev.Name)
	require.Equal(t, int64(3), ev.ID)
	var done struct {
		api.DoneEvent
		SessionID string `json:"sessionId"`
	}
	require.NoError(t, ev.Decode(&done))
	require.Equal(t, s1, done.SessionID)
	require.Equal(t, api.RunCompleted, done.Status)

	// Replay after Last-Event-ID 1: the same two events, same ids.
	replay := open(alice, "1")
	defer replay.Close()
	for _, want := range []struct {
		id   int64
		name string
	}{{2, api.EventUserInputResolved}, {3, api.EventDone}} {
		ev, err := replay.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, want.id, ev.ID)
		require.Equal(t, want.name, ev.Name)
	}
	// ?after= works as well; a bad id is a 400.
	resp = s.Request("GET", "/api/events?after=2", nil, alice)
	require.Equal(t, 200, resp.StatusCode)
	st := s.Open(resp, "after")
	ev, err = st.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), ev.ID)
	st.Close()
	resp = s.Request("GET", "/api/events", nil, alice, "Last-Event-ID", "-"+strconv.Itoa(1))
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	resp.Body.Close()
}
