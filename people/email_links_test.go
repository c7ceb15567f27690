package people_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/smtptest"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/store/postgres"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// TestEmailActionLinkAnswers (docs/design.md §17, §29): a mail sent
// through a real SMTP server carries signed action links that work: the
// option link, followed as a mail scanner would, only shows a
// confirmation; its button answers once, as the mail's person, through
// the resolve transition; the link then shows the signed receipt. On
// SQLite and PostgreSQL.
func TestEmailActionLinkAnswers(t *testing.T) {
	t.Parallel()
	sc, err := scripted.Parse([]byte(askChoice))
	require.NoError(t, err)
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			keys, err := signing.Generate()
			require.NoError(t, err)
			o := lubantest.Options{Provider: scripted.New(sc), AgentName: "coder", Keys: keys}
			if backend == "postgres" {
				pgtest.Skip(t)
				st, err := postgres.Open(context.Background(), pgtest.Schema(t), nil)
				require.NoError(t, err)
				o.Store = st
			}
			s := lubantest.Start(t, o)
			srv := smtptest.Start(t, "")
			owner := principalOf("test-token")
			links := &signing.Links{Keys: keys, Base: s.URL, ExpiresAt: s.Runner.QuestionExpiry}
			e, err := people.NewEmail(people.EmailOptions{SMTP: srv.Addr, From: "luban@example.com", Username: srv.Username, Password: srv.Password,
				StartTLS: true, TLS: srv.ClientTLS, Store: s.Store, Links: links,
				Recipients: func(_ context.Context, who string, _ *api.InputRequest) ([]people.Recipient, error) {
					return []people.Recipient{{ID: who, Name: "Owner", Email: "owner@example.com"}}, nil
				}})
			require.NoError(t, err)
			d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Channels: []people.Channel{e}})
			require.NoError(t, err)
			runDispatcher(t, d)

			sess, req := chatAs(t, s, "test-token", "deploy")
			m := waitMails(t, srv, 1)[0]
			waitLink := regexp.MustCompile(`Wait: (\S+)`).FindStringSubmatch(m.Text)
			require.NotNil(t, waitLink, m.Text)
			u, err := url.Parse(waitLink[1])
			require.NoError(t, err)
			require.Equal(t, "/q/"+req.ID, u.Path)
			require.Equal(t, "wait", u.Query().Get("answer"))
			g, err := keys.VerifyGrant(u.Query().Get("grant"), req.ID, req.CreatedAt)
			require.NoError(t, err)
			require.Equal(t, owner, g.Person, "the grant names the mail's person")

			client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			get := func(link string) (int, string) {
				resp, err := client.Get(link)
				require.NoError(t, err)
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			code, body := get(waitLink[1])
			require.Equal(t, http.StatusOK, code)
			require.Contains(t, body, "Your answer: <strong>Wait</strong>")
			pending, err := s.Store.InteractionGet(context.Background(), req.ID)
			require.NoError(t, err)
			require.Equal(t, "pending", pending.Status, "following the link answered nothing")

			resp, err := client.PostForm(s.URL+"/q/"+req.ID, url.Values{"grant": {u.Query().Get("grant")}, "selections": {"wait"}})
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusSeeOther, resp.StatusCode)
			require.Eventually(t, func() bool {
				ss, err := s.Store.SessionGet(context.Background(), sess)
				return err == nil && ss.Status == "completed"
			}, waitFor, 5*time.Millisecond)
			it, err := s.Store.InteractionGet(context.Background(), req.ID)
			require.NoError(t, err)
			require.Equal(t, "answered", it.Status)
			c, err := signing.VerifyReceipt(it.ReceiptJWS, keys.PublicJWKS())
			require.NoError(t, err)
			require.Equal(t, owner, c.By)
			require.Equal(t, "answered", c.Decision)
			code, body = get(s.URL + resp.Header.Get("Location"))
			require.Equal(t, http.StatusOK, code)
			require.Contains(t, body, "Chosen: Wait")
			require.True(t, strings.Contains(body, `class="signed"`), "the receipt is marked signed")
		})
	}
}
