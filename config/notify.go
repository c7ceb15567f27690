package config

import (
	"net"
	"net/mail"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Notify is the `notify:` section (docs/design.md §17): how people hear of
// the questions they are to answer besides the page.
type Notify struct {
	// Email is `notify.email`; nil when not configured.
	Email *Email
	// Slack is `notify.slack`; nil when not configured.
	Slack *Slack
}

// Email is `notify.email`: an SMTP server that takes luban's mail.
type Email struct {
	// SMTP is host:port. Required.
	SMTP string
	// From is the sender address ("luban <luban@example.com>" or a bare
	// address). Required.
	From string
	// Username and Password log in with SMTP AUTH; a password needs
	// StartTLS (it is never sent in clear text).
	Username, Password string
	// StartTLS requires STARTTLS before anything is sent. Default true.
	StartTLS bool
	Line     int
}

// Slack is `notify.slack`: a Slack app's bot token and signing secret.
type Slack struct {
	// BotToken is the app's bot token (xoxb-…), for chat.postMessage and
	// chat.update. Required.
	BotToken string
	// SigningSecret verifies the requests Slack sends to POST
	// /api/slack/interactions. Required.
	SigningSecret string
	// APIURL is Slack's Web API base URL, ending with '/'. Default
	// DefaultSlackAPIURL.
	APIURL string
	Line   int
}

// DefaultSlackAPIURL is Slack's Web API.
const DefaultSlackAPIURL = "https://slack.com/api/"

func (p *parser) notify(n *yaml.Node, key string, nt *Notify) {
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"email": func(key string, v *yaml.Node) { nt.Email = p.email(v, key) },
		"slack": func(key string, v *yaml.Node) { nt.Slack = p.slack(v, key) },
	})
}

func (p *parser) email(n *yaml.Node, key string) *Email {
	e := &Email{Line: n.Line, StartTLS: true}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"smtp": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			host, port, err := net.SplitHostPort(s)
			if n, perr := strconv.Atoi(port); err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
				p.errf(v, key, "%q is not host:port (e.g. smtp.example.com:587)", clip(s))
				return
			}
			e.SMTP = s
		},
		"from": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			if _, err := mail.ParseAddress(s); err != nil {
				p.errf(v, key, "%q is not an email address", clip(s))
				return
			}
			e.From = s
		},
		"username": p.strInto(&e.Username),
		"password": p.strInto(&e.Password),
		"starttls": func(key string, v *yaml.Node) {
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				p.errf(v, key, "must be true or false")
				return
			}
			e.StartTLS = v.Value == "true"
		},
	})
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for _, k := range []string{"smtp", "from"} {
		if !hasKey(n, k) {
			p.errf(n, key+"."+k, "notify.email needs %s", k)
		}
	}
	if e.Password != "" && e.Username == "" {
		p.errf(n, key+".username", "a password needs a username")
	}
	if e.Password != "" && !e.StartTLS {
		p.errf(n, key+".starttls", "a password is sent only over TLS: set starttls: true")
	}
	return e
}

func (p *parser) slack(n *yaml.Node, key string) *Slack {
	s := &Slack{Line: n.Line, APIURL: DefaultSlackAPIURL}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"botToken": func(key string, v *yaml.Node) {
			t, ok := p.str(v, key)
			if !ok {
				return
			}
			if !strings.HasPrefix(t, "xoxb-") {
				p.errf(v, key, "a bot token starts with xoxb- (the app's Bot User OAuth Token)")
				return
			}
			s.BotToken = t
		},
		"signingSecret": func(key string, v *yaml.Node) {
			t, ok := p.str(v, key)
			if !ok {
				return
			}
			if len(t) < 16 || strings.ContainsAny(t, " \t\r\n") {
				p.errf(v, key, "the app's signing secret is a long string without spaces")
				return
			}
			s.SigningSecret = t
		},
		"apiUrl": func(key string, v *yaml.Node) {
			u, ok := p.str(v, key)
			if !ok {
				return
			}
			if err := checkURL(u); err != nil {
				p.errf(v, key, "%v", err)
				return
			}
			if !strings.HasSuffix(u, "/") {
				u += "/"
			}
			s.APIURL = u
		},
	})
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for _, k := range []string{"botToken", "signingSecret"} {
		if !hasKey(n, k) {
			p.errf(n, key+"."+k, "notify.slack needs %s", k)
		}
	}
	return s
}
