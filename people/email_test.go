package people_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/smtptest"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// askChoice asks one single-choice question whose labels need escaping in
// HTML, then ends the run.
const askChoice = `{"name": "ask-choice",
  "turns": [{"toolCalls": [{"name": "ask_user", "arguments": {"title": "Deploy <now> & then?", "mode": "single",
     "description": "Pick one.",
     "options": [{"id": "ship", "label": "<b>Ship</b> it"}, {"id": "wait", "label": "Wait"}]}}]}],
  "final": "ok: {{results}}"}`

// testLinks makes links of the form the action links have, on base.
type testLinks struct{ base string }

func (l testLinks) ActionLink(requestID, personID, answer string) (string, error) {
	u := l.base + "/q/" + url.PathEscape(requestID) + "?grant=" + url.QueryEscape("g-"+personID)
	if answer != "" {
		u += "&answer=" + url.QueryEscape(answer)
	}
	return u, nil
}

// team is who the tests' questions go to: two people with an email, one
// without (who gets no mail).
func team(context.Context, string, *api.InputRequest) ([]people.Recipient, error) {
	return []people.Recipient{
		{ID: "alice", Name: "Alice A.", Email: "alice@example.com"},
		{ID: "bob", Name: "Bob", Email: "bob@example.com"},
		{ID: "carol", Name: "Carol", Slack: "U0CAROL"},
	}, nil
}

// emailStores runs fn on SQLite and, when LUBAN_TEST_POSTGRES is set, on
// PostgreSQL.
func emailStores(t *testing.T, script string, fn func(t *testing.T, s *lubantest.Server)) {
	sc, err := scripted.Parse([]byte(script))
	require.NoError(t, err)
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		fn(t, lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "coder"}))
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pgtest.Skip(t)
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		fn(t, lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "coder", Store: st}))
	})
}

func newEmail(t *testing.T, s *lubantest.Server, srv *smtptest.Server) *people.Email {
	e, err := people.NewEmail(people.EmailOptions{SMTP: srv.Addr, From: "luban@example.com", Username: srv.Username, Password: srv.Password,
		StartTLS: true, TLS: srv.ClientTLS, Store: s.Store, Recipients: team, Links: testLinks{base: s.URL}})
	require.NoError(t, err)
	return e
}

func waitMails(t *testing.T, srv *smtptest.Server, n int) []*smtptest.Message {
	t.Helper()
	var got []*smtptest.Message
	deadline := time.After(waitFor)
	for len(got) < n {
		select {
		case m := <-srv.Messages:
			got = append(got, m)
		case <-deadline:
			t.Fatalf("%d of %d mails arrived", len(got), n)
		}
	}
	return got
}

// TestEmailOnePerAssignee: a single-choice question reaches a real SMTP
// server (STARTTLS, then AUTH PLAIN) as one mail per assignee with an
// email: text and HTML, the question, each option as a link with
// answer=<optionId>, the action link, labels escaped in the HTML. Each
// mail is one outbox row, delivered once; the answer sends no more mail.
func TestEmailOnePerAssignee(t *testing.T) {
	t.Parallel()
	emailStores(t, askChoice, func(t *testing.T, s *lubantest.Server) {
		srv := smtptest.Start(t, "")
		d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast,
			Channels: []people.Channel{newEmail(t, s, srv)}})
		require.NoError(t, err)
		stop := runDispatcher(t, d)

		sess, req := chatAs(t, s, "test-token", "deploy")
		mails := waitMails(t, srv, 2)
		byTo := map[string]*smtptest.Message{}
		for _, m := range mails {
			require.True(t, m.TLS, "STARTTLS before MAIL FROM")
			require.Equal(t, srv.Username, m.User, "logged in with AUTH")
			require.Equal(t, "luban@example.com", m.From)
			require.Len(t, m.To, 1)
			byTo[m.To[0]] = m
		}
		require.Len(t, byTo, 2)
		for _, who := range []string{"alice", "bob"} {
			m := byTo[who+"@example.com"]
			require.NotNil(t, m, who)
			require.Equal(t, "Question: Deploy <now> & then?", m.Header.Get("Subject"))
			require.Equal(t, req.ID, m.Header.Get("X-Luban-Request"))
			require.NotEmpty(t, m.Header.Get("Message-Id"))
			action := s.URL + "/q/" + req.ID + "?grant=g-" + who
			ship, wait := action+"&answer=ship", action+"&answer=wait"
			require.Contains(t, m.Text, "Deploy <now> & then?")
			require.Contains(t, m.Text, "<b>Ship</b> it: "+ship)
			require.Contains(t, m.Text, "Wait: "+wait)
			require.Contains(t, m.Text, "Open the question in luban: "+action+"\n")
			require.Contains(t, m.HTML, "Deploy &lt;now&gt; &amp; then?", "text is escaped in HTML")
			require.Contains(t, m.HTML, "&lt;b&gt;Ship&lt;/b&gt; it")
			require.NotContains(t, m.HTML, "<b>Ship")
			require.Contains(t, m.HTML, `href="`+strings.ReplaceAll(ship, "&", "&amp;")+`"`)
			require.Contains(t, m.HTML, `href="`+strings.ReplaceAll(action, "&", "&amp;")+`"`)
		}

		resp := s.Request("POST", "/api/chat/continue", map[string]any{"sessionId": sess, "requestId": req.ID, "selections": []string{"ship"}}, "", "Accept", "application/json")
		require.Equal(t, 202, resp.StatusCode)
		resp.Body.Close()
		require.Eventually(t, func() bool {
			ss, err := s.Store.SessionGet(context.Background(), sess)
			un, err2 := s.Store.FeedListUnfanned(context.Background(), 10)
			return err == nil && err2 == nil && ss.Status == "completed" && len(un) == 0
		}, waitFor, 5*time.Millisecond, "the run ends and its resolved and done entries are fanned out")
		stop()
		rows, err := s.Store.WebhookList(context.Background(), sess)
		require.NoError(t, err)
		require.Len(t, rows, 2, "one outbox row per mail, none for the answer")
		for _, r := range rows {
			require.True(t, strings.HasPrefix(r.Hook, "email:"), r.Hook)
			require.Equal(t, store.WebhookDelivered, r.Status)
			require.Equal(t, 1, r.Attempts)
		}
		require.Len(t, srv.All(), 2)
	})
}

// TestEmailRetried: a server that refuses a mail once (451) gets it again,
// byte for byte the same message with the same Message-ID.
func TestEmailRetried(t *testing.T) {
	t.Parallel()
	sc, err := scripted.Parse([]byte(askChoice))
	require.NoError(t, err)
	s := lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "coder"})
	srv := smtptest.Start(t, "")
	var refused atomic.Int32
	var first atomic.Pointer[smtptest.Message]
	srv.Fail = func(m *smtptest.Message) error {
		if m.To[0] == "alice@example.com" && refused.Add(1) == 1 {
			first.Store(m)
			return errors.New("try again later")
		}
		return nil
	}
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast,
		Channels: []people.Channel{newEmail(t, s, srv)}})
	require.NoError(t, err)
	stop := runDispatcher(t, d)
	sess, _ := chatAs(t, s, "test-token", "deploy")
	mails := waitMails(t, srv, 2)
	stop()
	require.Equal(t, int32(2), refused.Load(), "alice's mail was offered twice")
	rows, err := s.Store.WebhookList(context.Background(), sess)
	require.NoError(t, err)
	attempts := map[string]int{}
	for _, r := range rows {
		require.Equal(t, store.WebhookDelivered, r.Status)
		attempts[r.Hook] = r.Attempts
	}
	require.Equal(t, map[string]int{"email:alice": 2, "email:bob": 1}, attempts)
	for _, m := range mails {
		if m.To[0] == "alice@example.com" {
			require.Equal(t, first.Load().Header.Get("Message-Id"), m.Header.Get("Message-Id"), "the same Message-ID on the retry")
			require.Equal(t, first.Load().Text, m.Text)
			require.Equal(t, first.Load().HTML, m.HTML)
		}
	}
}
