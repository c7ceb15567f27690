package config_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/config"
)

// TestNotify: notify.email and notify.slack are read with their defaults
// (starttls on, Slack's own API), secrets from the environment.
func TestNotify(t *testing.T) {
	t.Parallel()
	src := `notify:
  email:
    smtp: smtp.example.com:587
    from: luban <luban@example.com>
    username: luban
    password: ${SMTP_PASSWORD}
  slack:
    botToken: ${SLACK_BOT_TOKEN}
    signingSecret: 8f742231b10e8888abcd99yyyzzz85a5
`
	f, err := config.Parse("c.yaml", []byte(src), env(map[string]string{"SMTP_PASSWORD": "pw", "SLACK_BOT_TOKEN": "xoxb-1-2-abc"}))
	require.NoError(t, err)
	require.Equal(t, &config.Email{SMTP: "smtp.example.com:587", From: "luban <luban@example.com>", Username: "luban", Password: "pw", StartTLS: true, Line: 3}, f.Notify.Email)
	require.Equal(t, &config.Slack{BotToken: "xoxb-1-2-abc", SigningSecret: "8f742231b10e8888abcd99yyyzzz85a5", APIURL: "https://slack.com/api/", Line: 8}, f.Notify.Slack)

	f, err = config.Parse("c.yaml", []byte("notify:\n  email: {smtp: 'localhost:25', from: a@b.c, starttls: false}\n  slack: {botToken: xoxb-x, signingSecret: 0123456789abcdef0, apiUrl: 'http://127.0.0.1:9/api'}\n"), env(nil))
	require.NoError(t, err)
	require.False(t, f.Notify.Email.StartTLS)
	require.Equal(t, "http://127.0.0.1:9/api/", f.Notify.Slack.APIURL)
}

// Bad notify config refuses to start, naming the key and its line.
func TestNotifyErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, src, want string }{
		{"smtp not host:port", "notify:\n  email: {smtp: smtp.example.com, from: a@b.c}\n", `c.yaml:2: notify.email.smtp: "smtp.example.com" is not host:port (e.g. smtp.example.com:587)`},
		{"bad from", "notify:\n  email: {smtp: 'h:25', from: nobody}\n", `c.yaml:2: notify.email.from: "nobody" is not an email address`},
		{"no from", "notify:\n  email:\n    smtp: 'h:25'\n", `c.yaml:3: notify.email.from: notify.email needs from`},
		{"password in clear", "notify:\n  email: {smtp: 'h:25', from: a@b.c, username: u, password: p, starttls: false}\n", `c.yaml:2: notify.email.starttls: a password is sent only over TLS: set starttls: true`},
		{"starttls not bool", "notify:\n  email: {smtp: 'h:25', from: a@b.c, starttls: yes please}\n", `c.yaml:2: notify.email.starttls: must be true or false`},
		{"unknown email key", "notify:\n  email: {smtp: 'h:25', from: a@b.c, port: 25}\n", `c.yaml:2: notify.email.port: unknown key (known here: from, password, smtp, starttls, username)`},
		{"bot token", "notify:\n  slack: {botToken: xoxp-user, signingSecret: 0123456789abcdef0}\n", `c.yaml:2: notify.slack.botToken: a bot token starts with xoxb- (the app's Bot User OAuth Token)`},
		{"no signing secret", "notify:\n  slack:\n    botToken: xoxb-1\n", `c.yaml:3: notify.slack.signingSecret: notify.slack needs signingSecret`},
		{"api url", "notify:\n  slack: {botToken: xoxb-1, signingSecret: 0123456789abcdef0, apiUrl: 'ftp://x/'}\n", `c.yaml:2: notify.slack.apiUrl: "ftp://x/" is not an http or https URL`},
		{"unknown channel", "notify:\n  sms: {}\n", `c.yaml:2: notify.sms: unknown key (known here: email, slack)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse("c.yaml", []byte(c.src), env(nil))
			require.EqualError(t, err, c.want)
		})
	}
}
