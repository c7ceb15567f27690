package people_test

import (
	"context"
	"errors"
	"io"
	"net/http"
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
	"github.com/lubanhq/luban/signing"
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

// team is who the tests' questions go to: the session's owner (the
// principal of test-token, who may answer) as alice, bob, both with an
// email, and carol without one (who gets no mail).
func team(_ context.Context, owner string, _ *api.InputRequest) ([]people.Recipient, error) {
	return []people.Recipient{
		{ID: owner, Name: "Alice A.", Email: "alice@example.com"},
		{ID: "bob", Name: "Bob", Email: "bob@example.com"},
		{ID: "carol", Name: "Carol", Slack: "U0CAROL"},
	}, nil
}

// linksOf is the action links of s (signing.Links, as luban serve makes
// them).
func linksOf(t *testing.T, s *lubantest.Server, keys *signing.Keys) people.Links {
	return &signing.Links{Keys: keys, Base: s.URL, ExpiresAt: s.Runner.QuestionExpiry}
}

// emailStores runs fn on SQLite and, when LUBAN_TEST_POSTGRES is set, on
// PostgreSQL.
func emailStores(t *testing.T, script string, fn func(t *testing.T, s *lubantest.Server, links people.Links)) {
	run := func(t *testing.T, st store.Store) {
		keys, err := signing.Generate()
		require.NoError(t, err)
		sc, err := scripted.Parse([]byte(script))
		require.NoError(t, err)
		s := lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "coder", Store: st, Keys: keys})
		fn(t, s, linksOf(t, s, keys))
	}
	t.Run("sqlite", func(t *testing.T) {
		t.Parallel()
		run(t, nil)
	})
	t.Run("postgres", func(t *testing.T) {
		t.Parallel()
		pgtest.Skip(t)
		st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
		require.NoError(t, err)
		run(t, st)
	})
}

func newEmail(t *testing.T, s *lubantest.Server, srv *smtptest.Server, links people.Links) *people.Email {
	e, err := people.NewEmail(people.EmailOptions{SMTP: srv.Addr, From: "luban@example.com", Username: srv.Username, Password: srv.Password,
		StartTLS: true, TLS: srv.ClientTLS, Store: s.Store, Recipients: team, Links: links})
	require.NoError(t, err)
	return e
}

// linkIn finds the line "<label>: <url>" of a mail's text and returns the
// URL.
func linkIn(t *testing.T, text, label string) string {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		if u, ok := strings.CutPrefix(strings.TrimSpace(l), label+": "); ok {
			return u
		}
	}
	t.Fatalf("no %q link in %s", label, text)
	return ""
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// followLink opens an option link of a mail (the confirmation page: a GET
// never answers) and submits its answer as the page's form does.
func followLink(t *testing.T, link string, form url.Values) int {
	t.Helper()
	resp, err := noRedirect.Get(link)
	require.NoError(t, err)
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
	u, err := url.Parse(link)
	require.NoError(t, err)
	form.Set("grant", u.Query().Get("grant"))
	u.RawQuery = ""
	resp, err = noRedirect.PostForm(u.String(), form)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode
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
	emailStores(t, askChoice, func(t *testing.T, s *lubantest.Server, links people.Links) {
		srv := smtptest.Start(t, "")
		d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast,
			Channels: []people.Channel{newEmail(t, s, srv, links)}})
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
			action := linkIn(t, m.Text, "Open the question in luban")
			require.True(t, strings.HasPrefix(action, s.URL+"/q/"+req.ID+"?grant="), action)
			au, err := url.Parse(action)
			require.NoError(t, err)
			ship := linkIn(t, m.Text, "<b>Ship</b> it")
			for answer, link := range map[string]string{"ship": ship, "wait": linkIn(t, m.Text, "Wait")} {
				u, err := url.Parse(link)
				require.NoError(t, err)
				require.Equal(t, au.Path, u.Path)
				require.Equal(t, url.Values{"grant": {au.Query().Get("grant")}, "answer": {answer}}, u.Query(), "the action link with answer=<option id>")
			}
			require.Contains(t, m.Text, "Deploy <now> & then?")
			require.Contains(t, m.HTML, "Deploy &lt;now&gt; &amp; then?", "text is escaped in HTML")
			require.Contains(t, m.HTML, "&lt;b&gt;Ship&lt;/b&gt; it")
			require.NotContains(t, m.HTML, "<b>Ship")
			require.Contains(t, m.HTML, `href="`+strings.ReplaceAll(ship, "&", "&amp;")+`"`)
			require.Contains(t, m.HTML, `href="`+strings.ReplaceAll(action, "&", "&amp;")+`"`)
		}

		// Bob's grant is his alone: he may not answer alice's question.
		resp, err := http.Get(linkIn(t, byTo["bob@example.com"].Text, "<b>Ship</b> it"))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusForbidden, resp.StatusCode)
		require.Equal(t, api.StatusPending, interactionStatus(t, s, "test-token", req.ID).Status)
		// Alice answers with one click from her mail and a confirmation.
		require.Equal(t, http.StatusSeeOther, followLink(t, linkIn(t, byTo["alice@example.com"].Text, "<b>Ship</b> it"), url.Values{"selections": {"ship"}}))
		it := interactionStatus(t, s, "test-token", req.ID)
		require.Equal(t, api.StatusAnswered, it.Status)
		require.Equal(t, []string{"ship"}, it.Receipt.Selections)
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
	keys, err := signing.Generate()
	require.NoError(t, err)
	sc, err := scripted.Parse([]byte(askChoice))
	require.NoError(t, err)
	s := lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "coder", Keys: keys})
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
		Channels: []people.Channel{newEmail(t, s, srv, linksOf(t, s, keys))}})
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
	require.Equal(t, map[string]int{"email:" + principalOf("test-token"): 2, "email:bob": 1}, attempts)
	for _, m := range mails {
		if m.To[0] == "alice@example.com" {
			require.Equal(t, first.Load().Header.Get("Message-Id"), m.Header.Get("Message-Id"), "the same Message-ID on the retry")
			require.Equal(t, first.Load().Text, m.Text)
			require.Equal(t, first.Load().HTML, m.HTML)
		}
	}
}
