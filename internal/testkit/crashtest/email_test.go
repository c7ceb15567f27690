package crashtest

import (
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/smtptest"
)

// publicBase is server.publicUrl of the processes: the base of the mailed
// links, which the test points at whichever process is running (a real
// deployment's proxy does the same).
const publicBase = "https://luban.example.test"

// TestEmailKill9BetweenSendAndAnswer: a question of alice (a person with
// an email) is mailed through a real SMTP server (STARTTLS, AUTH) by a
// `luban serve` that is then killed with SIGKILL, either by the test after
// the mail was delivered, or by itself right before the mail left
// (LUBAN_FAULT=webhook_send, after the outbox row committed). A new
// process on the same database file mails what was not sent (no lost
// mail) and sends nothing twice that was delivered; alice answers through
// the mail's option link and its confirmation page on the new process,
// and the run ends (docs/design.md §17, §30).
func TestEmailKill9BetweenSendAndAnswer(t *testing.T) {
	for _, kill := range []string{"after_send", "webhook_send"} {
		t.Run(kill, func(t *testing.T) {
			t.Parallel()
			fake := fakeopenai.New(t)
			fake.Push(askTurn("call_mail"), endTurn())
			srv := smtptest.Start(t, "")
			dir := t.TempDir()
			certFile := filepath.Join(dir, "smtp.pem")
			require.NoError(t, os.WriteFile(certFile, srv.CertPEM, 0o600))
			cfg := filepath.Join(dir, "luban.yaml")
			require.NoError(t, os.WriteFile(cfg, []byte(`server:
  publicUrl: `+publicBase+`
people:
  - id: alice
    name: Alice
    email: alice@example.com
    tokens: [alice-token]
notify:
  email:
    smtp: `+srv.Addr+`
    from: luban <luban@example.com>
    username: `+srv.Username+`
    password: `+srv.Password+`
`), 0o600))
			db := filepath.Join(dir, "luban.db")
			// p1's LUBAN_WEBHOOK_TIMEOUT of 1s makes the delivery lease it
			// may die holding (3 × the timeout) run out soon; p2 keeps
			// the default, so that a mail a loaded machine sends slowly is
			// not claimed again by p2 itself and sent twice.
			env := []string{"LUBAN_CONFIG=" + cfg, "SSL_CERT_FILE=" + certFile}
			opts := lubantest.ProcOptions{Bin: lubanBin, Name: "p1", DB: db, ModelURL: fake.URL(),
				Env: append(append([]string{}, env...), "LUBAN_WEBHOOK_TIMEOUT=1s")}
			if kill == "webhook_send" {
				opts.Env = append(opts.Env, "LUBAN_FAULT=webhook_send")
			}
			p1 := lubantest.StartProc(t, opts)
			alice := lubantest.Attach(t, p1.URL, "alice-token")
			// p1 may die before the client reads the question, or before
			// the stream's first write reached it (the session id is then
			// the one of the question pending after the restart).
			var evs []lubantest.Event
			if st, err := alice.TryChat("", userMessage); err == nil {
				evs, _ = st.Until("user_input_required", waitEvents)
				st.Close()
			}
			var q struct{ ID, SessionID string }
			ev, ok := lubantest.Find(evs, "session")
			if ok {
				require.NoError(t, ev.Decode(&q))
			}
			require.True(t, ok || kill == "webhook_send", "the session event comes before the model is called")

			var mail *smtptest.Message
			if kill == "after_send" {
				select {
				case mail = <-srv.Messages:
				case <-time.After(waitEvents):
					t.Fatalf("no mail:\n%s", p1.Log())
				}
				waitMailRecorded(t, alice, q.SessionID)
				p1.Kill9()
			} else {
				p1.WaitFault()
				require.Empty(t, srv.All(), "the process died before the mail left")
			}

			opts.Name, opts.Env = "p2", env
			p2 := lubantest.StartProc(t, opts)
			alice2 := lubantest.Attach(t, p2.URL, "alice-token")
			var pending api.InteractionList
			require.Equal(t, 200, alice2.JSON("GET", "/api/interactions?status=pending", nil, &pending))
			require.Len(t, pending.Interactions, 1)
			q.ID = pending.Interactions[0].ID
			if q.SessionID == "" {
				q.SessionID = pending.Interactions[0].SessionID
			}
			require.Equal(t, q.SessionID, pending.Interactions[0].SessionID)
			if mail == nil {
				select {
				case mail = <-srv.Messages:
				case <-time.After(waitEvents):
					t.Fatalf("the mail was not sent after the restart:\n%s", p2.Log())
				}
			}
			require.Equal(t, []string{"alice@example.com"}, mail.To)
			require.True(t, mail.TLS)
			require.Contains(t, mail.Text, "请选择执行方式")

			// Alice clicks "先分析" in the mail: the link now reaches p2.
			link := ""
			for _, l := range strings.Split(mail.Text, "\n") {
				if u, ok := strings.CutPrefix(strings.TrimSpace(l), "先分析: "); ok {
					link = u
				}
			}
			require.True(t, strings.HasPrefix(link, publicBase+"/q/"+q.ID+"?"), "option link in %s", mail.Text)
			link = p2.URL + strings.TrimPrefix(link, publicBase)
			noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			resp, err := noRedirect.Get(link)
			require.NoError(t, err)
			page, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode, "%s", page)
			u, err := url.Parse(link)
			require.NoError(t, err)
			resp, err = noRedirect.PostForm(p2.URL+"/q/"+q.ID, url.Values{"grant": {u.Query().Get("grant")}, "selections": {"safe"}})
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusSeeOther, resp.StatusCode, "answered through the action link")

			done := alice2.EventsUntil(q.SessionID, 0, "done", waitEvents)
			_, ok = lubantest.Find(done, "done")
			require.True(t, ok, "the run ended after the answer")
			p2.Term() // waits for the dispatcher's attempts in flight
			require.Len(t, srv.All(), 1, "one mail: none lost, none sent twice")
		})
	}
}

// waitMailRecorded waits until the session's trace shows the mail's
// attempt as delivered (the outcome committed), so that the kill comes
// between the send and the answer, not inside the send.
func waitMailRecorded(t *testing.T, s *lubantest.Server, sessionID string) {
	t.Helper()
	var tr struct {
		Trace []struct {
			Kind string         `json:"kind"`
			Data map[string]any `json:"data"`
		} `json:"trace"`
	}
	deadline := time.Now().Add(waitEvents)
	for time.Now().Before(deadline) {
		require.Equal(t, 200, s.JSON("GET", "/api/sessions/"+sessionID+"/trace", nil, &tr))
		for _, e := range tr.Trace {
			if e.Kind == "webhook" && e.Data["url"] == "email:alice" && e.Data["status"] == "delivered" {
				return
			}
		}
	}
	t.Fatal("the mail's delivery was not recorded")
}
