package people_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/fakeslack"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/internal/testkit/smtptest"
	"github.com/lubanhq/luban/model/scripted"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/signing"
	"github.com/lubanhq/luban/store"
)

// remind appends a user_input_reminder event for req naming notify, as the
// deadline scheduler does when a route's remind:, escalate: or a
// delegation comes due (its feed entry is what the channels read).
func remind(t *testing.T, s *lubantest.Server, req api.InputRequest, reason, from, msg string, notify ...string) {
	t.Helper()
	b, err := json.Marshal(api.InputReminder{RequestID: req.ID, SessionID: req.SessionID, RunID: req.RunID, Reason: reason, Notify: notify,
		From: from, Message: msg, ExpiresAt: req.ExpiresAt})
	require.NoError(t, err)
	_, err = s.Store.EventAppend(context.Background(), &store.EventAppendParams{SessionID: req.SessionID, Name: api.EventUserInputReminder, Data: b})
	require.NoError(t, err)
}

// waitNotified waits until the Slack message to person about requestID is
// recorded (store.NotifyMessage), as it is once chat.postMessage returned.
func waitNotified(t *testing.T, s *lubantest.Server, requestID, person string) {
	t.Helper()
	require.Eventually(t, func() bool {
		msgs, err := s.Store.NotifyMessageList(context.Background(), requestID)
		require.NoError(t, err)
		for _, m := range msgs {
			if m.Channel == "slack" && m.Person == person {
				return true
			}
		}
		return false
	}, waitFor, 5*time.Millisecond, "the Slack message to %s about %s recorded", person, requestID)
}

// TestRemindersNotify: a reminder mails the people it names (one mail
// each, the question and its links again, "Reminder:" in the subject); a
// delegation's mail carries who handed it over and their message; in
// Slack a reminder is a reply in the question's thread, and someone with
// no message yet (an escalation's new assignee) gets the question.
func TestRemindersNotify(t *testing.T) {
	t.Parallel()
	keys, err := signing.Generate()
	require.NoError(t, err)
	sc, err := scripted.Parse([]byte(askChoice))
	require.NoError(t, err)
	s := lubantest.Start(t, lubantest.Options{Provider: scripted.New(sc), AgentName: "coder", Keys: keys})
	owner := principalOf("test-token")
	dirOf := map[string]people.Recipient{
		owner:   {ID: owner, Name: "Alice", Email: "alice@example.com", Slack: "UALICE"},
		"bob":   {ID: "bob", Name: "Bob", Email: "bob@example.com", Slack: "UBOB"},
		"carol": {ID: "carol", Name: "Carol"},
	}
	person := func(id string) (people.Recipient, bool) { r, ok := dirOf[id]; return r, ok }
	ownerOnly := func(_ context.Context, owner string, _ *api.InputRequest) ([]people.Recipient, error) {
		return []people.Recipient{dirOf[owner]}, nil
	}
	srv := smtptest.Start(t, "")
	email, err := people.NewEmail(people.EmailOptions{SMTP: srv.Addr, From: "luban@example.com", Username: srv.Username, Password: srv.Password,
		StartTLS: true, TLS: srv.ClientTLS, Store: s.Store, Recipients: ownerOnly, Person: person, Links: linksOf(t, s, keys)})
	require.NoError(t, err)
	fake := fakeslack.Start(t, slackToken)
	sl, err := people.NewSlack(people.SlackOptions{BotToken: slackToken, APIURL: fake.URL, Store: s.Store, Recipients: ownerOnly, Person: person, Links: linksOf(t, s, keys)})
	require.NoError(t, err)
	d, err := people.NewDispatcher(people.DispatcherOptions{Store: s.Store, ID: "inst_test", Backoff: fast, Channels: []people.Channel{email, sl}})
	require.NoError(t, err)
	runDispatcher(t, d)

	_, req := chatAs(t, s, "test-token", "deploy")
	first := waitMails(t, srv, 1)[0]
	require.Equal(t, "Question: Deploy <now> & then?", first.Header.Get("Subject"))
	post := waitCall(t, fake, "the question", isPost)
	// The reply goes to the question's message, which the channel records
	// just after chat.postMessage returns: remind only once it is recorded.
	waitNotified(t, s, req.ID, owner)

	remind(t, s, req, api.ReminderReminder, "", "", owner, "nobody-known")
	m := waitMails(t, srv, 1)[0]
	require.Equal(t, []string{"alice@example.com"}, m.To)
	require.Equal(t, "Reminder: Question: Deploy <now> & then?", m.Header.Get("Subject"))
	require.Contains(t, m.Text, "Reminder: a question still waits for your answer")
	require.Contains(t, linkIn(t, m.Text, "<b>Ship</b> it"), "answer=ship")
	reply := waitCall(t, fake, "the reminder", isPost)
	require.Equal(t, post.Channel, reply.Channel, "in alice's DM")
	require.Contains(t, reply.Text, "Reminder")

	remind(t, s, req, api.ReminderDelegation, "Alice", "Can you take this? <b>urgent</b>", "bob", "carol")
	m = waitMails(t, srv, 1)[0]
	require.Equal(t, []string{"bob@example.com"}, m.To, "carol has no email")
	require.Equal(t, "For you: Question: Deploy <now> & then?", m.Header.Get("Subject"))
	require.Contains(t, m.Text, "Alice handed you this question")
	require.Contains(t, m.Text, "Can you take this? <b>urgent</b>")
	require.Contains(t, m.HTML, "Can you take this? &lt;b&gt;urgent&lt;/b&gt;")
	bobs := waitCall(t, fake, "bob's question", isPost)
	require.Equal(t, "DBOB", bobs.Channel, "bob had no message: he gets the question")
	require.NotNil(t, bobs.Button("<b>Ship</b> it"))
	require.True(t, strings.HasPrefix(bobs.Text, "Question:"))
}
