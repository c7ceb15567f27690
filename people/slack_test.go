package people_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/fakeslack"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

const (
	slackSecret = "8f742231b10e8888abcd99yyyzzz85a5"
	slackToken  = "xoxb-1-2-test"
)

// slackRig is a luban with Slack configured: alice (Slack UALICE) owns
// the sessions, the fake Web API records what luban sends.
type slackRig struct {
	s    *lubantest.Server
	api  *fakeslack.API
	ch   *people.Slack
	stop func()
}

func (r *slackRig) endpoint() string { return r.s.URL + api.SlackInteractionsPath }

// ownerRecipients is the owner's person of dir: who gets the message
// until routes name assignees.
func ownerRecipients(dir *principal.Directory) people.Recipients {
	return func(_ context.Context, owner string, _ *api.InputRequest) ([]people.Recipient, error) {
		p := dir.Get(owner)
		if p == nil {
			return nil, nil
		}
		return []people.Recipient{{ID: p.ID, Name: p.Name, Email: p.Email, Slack: p.Slack}}, nil
	}
}

func startSlack(t *testing.T, st store.Store, script string) *slackRig {
	sc, err := scripted.Parse([]byte(script))
	require.NoError(t, err)
	dir, err := principal.NewDirectory([]principal.Person{
		{ID: "alice", Name: "Alice", Slack: "UALICE", Tokens: []string{"alice-token"}},
		{ID: "bob", Name: "Bob", Slack: "UBOB", Tokens: []string{"bob-token"}},
	})
	require.NoError(t, err)
	keys, err := signing.Generate()
	require.NoError(t, err)
	sl := &server.Slack{SigningSecret: slackSecret}
	s := lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "coder", People: dir, Store: st, Slack: sl, Keys: keys})
	fake := fakeslack.Start(t, slackToken)
	ch, err := people.NewSlack(people.SlackOptions{BotToken: slackToken, APIURL: fake.URL, Store: s.Store, Recipients: ownerRecipients(dir), Links: linksOf(t, s, keys)})
	require.NoError(t, err)
	sl.ShowReceipt = ch.ShowReceipt
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Channels: []people.Channel{ch}})
	require.NoError(t, err)
	return &slackRig{s: s, api: fake, ch: ch, stop: runDispatcher(t, d)}
}

// slackStores runs fn on SQLite and, when LUBAN_TEST_POSTGRES is set, on
// PostgreSQL.
func slackStores(t *testing.T, script string, fn func(t *testing.T, r *slackRig)) {
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, startSlack(t, nil, script))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pgtest.Skip(t)
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		fn(t, startSlack(t, st, script))
	})
}

// waitCall reads calls until one satisfies ok.
func waitCall(t *testing.T, a *fakeslack.API, what string, ok func(c fakeslack.Call) bool) fakeslack.Call {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case c := <-a.Calls:
			if ok(c) {
				return c
			}
		case <-deadline:
			t.Fatalf("no %s; calls: %+v", what, a.All())
		}
	}
}

func isPost(c fakeslack.Call) bool { return c.Method == "chat.postMessage" }

// updatedTo reports a chat.update of message ts whose text says want.
func updatedTo(ts, want string) func(c fakeslack.Call) bool {
	return func(c fakeslack.Call) bool {
		return c.Method == "chat.update" && c.TS == ts && strings.Contains(c.AllText(), want)
	}
}

// click is a click by user on the button labelled label of message post.
func click(t *testing.T, post fakeslack.Call, user, label string) fakeslack.Click {
	t.Helper()
	b := post.Button(label)
	require.NotNil(t, b, "button %q in %s", label, post.AllText())
	return fakeslack.Click{User: user, Channel: post.Channel, TS: post.TS, ActionID: b.ActionID, Value: b.Value, Label: label}
}

func interactionStatus(t *testing.T, s *lubantest.Server, token, id string) api.InboxItem {
	t.Helper()
	var it api.InboxItem
	require.Equal(t, 200, getJSON(t, s, token, "/api/interactions/"+id, &it))
	return it
}

// TestSlackAnswerByButton: a single-choice question reaches the owner's
// Slack as a Block Kit message (chat.postMessage to their user id) with a
// button per option and an "Answer in luban" link; a click, signed as
// Slack signs it, answers as that person through the one resolve, and the
// message becomes the receipt (chat.update). A second click is 409 and
// shows the receipt again.
func TestSlackAnswerByButton(t *testing.T) {
	t.Parallel()
	slackStores(t, askChoice, func(t *testing.T, r *slackRig) {
		sess, req := chatAs(t, r.s, "alice-token", "deploy")
		post := waitCall(t, r.api, "chat.postMessage", isPost)
		require.Equal(t, "DALICE", post.Channel, "a DM to alice's Slack user id")
		require.Equal(t, "Question: Deploy <now> & then?", post.Text)
		require.Contains(t, post.AllText(), "Deploy <now> & then?", "plain text, shown as written")
		ship := post.Button("<b>Ship</b> it")
		require.NotNil(t, ship)
		require.Equal(t, api.SlackActionAnswer, ship.ActionID)
		var v api.SlackButton
		require.NoError(t, json.Unmarshal([]byte(ship.Value), &v))
		require.Equal(t, api.SlackButton{R: req.ID, S: sess, K: api.SlackKindSingle, A: "ship"}, v)
		open := post.Button("Answer in luban")
		require.NotNil(t, open)
		require.True(t, strings.HasPrefix(open.URL, r.s.URL+"/q/"+req.ID+"?grant="), open.URL)
		resp, err := http.Get(open.URL)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, 200, resp.StatusCode, "the link opens alice's question")

		// The link button's click is reported too, and answers nothing.
		code, _ := fakeslack.Send(t, r.endpoint(), slackSecret, click(t, post, "UALICE", "Answer in luban"), nil)
		require.Equal(t, 200, code)
		require.Equal(t, api.StatusPending, interactionStatus(t, r.s, "alice-token", req.ID).Status)

		code, body := fakeslack.Send(t, r.endpoint(), slackSecret, click(t, post, "UALICE", "<b>Ship</b> it"), nil)
		require.Equal(t, 200, code, "%s", body)
		it := interactionStatus(t, r.s, "alice-token", req.ID)
		require.Equal(t, api.StatusAnswered, it.Status)
		require.Equal(t, []string{"ship"}, it.Receipt.Selections)
		up := waitCall(t, r.api, "the receipt", updatedTo(post.TS, "Answered: <b>Ship</b> it"))
		require.Equal(t, "DALICE", up.Channel)
		require.Nil(t, up.Button("Wait"), "the receipt has no buttons")

		code, body = fakeslack.Send(t, r.endpoint(), slackSecret, click(t, post, "UALICE", "Wait"), nil)
		require.Equal(t, http.StatusConflict, code)
		var eb api.ErrorBody
		require.NoError(t, json.Unmarshal(body, &eb))
		require.Equal(t, api.CodeAlreadyResolved, eb.Error.Code)
		waitCall(t, r.api, "the receipt after the second click", updatedTo(post.TS, "Answered: <b>Ship</b> it"))
		require.Equal(t, []string{"ship"}, interactionStatus(t, r.s, "alice-token", req.ID).Receipt.Selections, "the first answer stands")
	})
}

// TestSlackUpdatedWhenResolvedElsewhere: a question answered on the page
// turns its Slack message into the receipt (from the user_input_resolved
// feed entry, through the outbox).
func TestSlackUpdatedWhenResolvedElsewhere(t *testing.T) {
	t.Parallel()
	slackStores(t, askChoice, func(t *testing.T, r *slackRig) {
		sess, req := chatAs(t, r.s, "alice-token", "deploy")
		post := waitCall(t, r.api, "chat.postMessage", isPost)
		resp := r.s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess, "requestId": req.ID, "selections": []string{"wait"}}, "alice-token", "Accept", "application/json")
		require.Equal(t, 202, resp.StatusCode)
		resp.Body.Close()
		waitCall(t, r.api, "the receipt", updatedTo(post.TS, "Answered: Wait"))
	})
}

// TestSlackRacesThePage: a Slack click and the page answer the same
// question at once: exactly one wins, the other gets 409, and the Slack
// message ends as the receipt of the winner.
func TestSlackRacesThePage(t *testing.T) {
	t.Parallel()
	slackStores(t, askChoice, func(t *testing.T, r *slackRig) {
		sess, req := chatAs(t, r.s, "alice-token", "deploy")
		post := waitCall(t, r.api, "chat.postMessage", isPost)
		c := click(t, post, "UALICE", "<b>Ship</b> it")
		start := make(chan struct{})
		var wg sync.WaitGroup
		var slackCode, pageCode int
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			slackCode, _ = fakeslack.Send(t, r.endpoint(), slackSecret, c, nil)
		}()
		go func() {
			defer wg.Done()
			<-start
			resp := r.s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess, "requestId": req.ID, "selections": []string{"wait"}}, "alice-token", "Accept", "application/json")
			pageCode = resp.StatusCode
			resp.Body.Close()
		}()
		close(start)
		wg.Wait()
		slackWon, pageWon := slackCode == 200, pageCode == 202
		require.True(t, slackWon != pageWon, "exactly one winner (slack %d, page %d)", slackCode, pageCode)
		if slackWon {
			require.Equal(t, http.StatusConflict, pageCode)
		} else {
			require.Equal(t, http.StatusConflict, slackCode)
		}
		it := interactionStatus(t, r.s, "alice-token", req.ID)
		want := "Answered: Wait"
		if slackCode == 200 {
			want = "Answered: <b>Ship</b> it"
			require.Equal(t, []string{"ship"}, it.Receipt.Selections)
		} else {
			require.Equal(t, []string{"wait"}, it.Receipt.Selections)
		}
		waitCall(t, r.api, "the winner's receipt", updatedTo(post.TS, want))
	})
}

// TestSlackRefusesUnsigned: a payload with a wrong signature, one signed
// more than 5 minutes ago, one without Slack's headers (all 401), and a
// well-signed click of a Slack user who is no person (403) answer
// nothing: the question stays pending.
func TestSlackRefusesUnsigned(t *testing.T) {
	t.Parallel()
	r := startSlack(t, nil, askChoice)
	_, req := chatAs(t, r.s, "alice-token", "deploy")
	post := waitCall(t, r.api, "chat.postMessage", isPost)
	c := click(t, post, "UALICE", "<b>Ship</b> it")

	code, body := fakeslack.Send(t, r.endpoint(), "another-apps-signing-secret", c, nil)
	require.Equal(t, http.StatusUnauthorized, code, "%s", body)
	code, _ = fakeslack.Send(t, r.endpoint(), slackSecret, c, func(h http.Header) {
		h.Set("X-Slack-Signature", "v0="+strings.Repeat("0", 64))
	})
	require.Equal(t, http.StatusUnauthorized, code)
	old := c
	old.At = time.Now().Add(-6 * time.Minute)
	code, body = fakeslack.Send(t, r.endpoint(), slackSecret, old, nil)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, string(body), "5 minutes")
	code, _ = fakeslack.Send(t, r.endpoint(), slackSecret, c, func(h http.Header) {
		h.Del("X-Slack-Signature")
		h.Del("X-Slack-Request-Timestamp")
	})
	require.Equal(t, http.StatusUnauthorized, code)
	// A replay with a timestamp changed after signing does not verify.
	code, _ = fakeslack.Send(t, r.endpoint(), slackSecret, c, func(h http.Header) {
		h.Set("X-Slack-Request-Timestamp", strconv.FormatInt(time.Now().Unix()+1, 10))
	})
	require.Equal(t, http.StatusUnauthorized, code)

	stranger := c
	stranger.User = "UMALLORY"
	code, body = fakeslack.Send(t, r.endpoint(), slackSecret, stranger, nil)
	require.Equal(t, http.StatusForbidden, code)
	var eb api.ErrorBody
	require.NoError(t, json.Unmarshal(body, &eb))
	require.Equal(t, api.CodeUnknownSlackUser, eb.Error.Code)

	// Bob is a person, but alice's unrouted question is hers alone: for
	// him it does not exist (docs/design.md §28).
	bob := c
	bob.User = "UBOB"
	code, body = fakeslack.Send(t, r.endpoint(), slackSecret, bob, nil)
	require.Equal(t, http.StatusNotFound, code, "%s", body)
	require.NoError(t, json.Unmarshal(body, &eb))
	require.Equal(t, api.CodeInteractionNotFound, eb.Error.Code)

	// A bearer token is no way in either: this route takes Slack's signature only.
	resp := r.s.Request("POST", api.SlackInteractionsPath, nil, "alice-token")
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp.Body.Close()

	require.Equal(t, api.StatusPending, interactionStatus(t, r.s, "alice-token", req.ID).Status, "nothing was answered")
	for _, call := range r.api.All() {
		require.NotEqual(t, "chat.update", call.Method, "nothing to update")
	}
}
