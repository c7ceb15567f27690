package people

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"net"
	"strconv"
	"strings"
	texttemplate "text/template"
	"time"

	"github.com/wneessen/go-mail"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// EmailOptions configures NewEmail (`notify.email`, docs/design.md §17).
type EmailOptions struct {
	// SMTP is the server's host:port. Required.
	SMTP string
	// From is the sender address. Required.
	From string
	// Username and Password log in with SMTP AUTH when Username is set.
	Username, Password string
	// StartTLS requires STARTTLS before anything else is sent (a server
	// that does not offer it fails the attempt).
	StartTLS bool
	// TLS, when set, is the TLS configuration of STARTTLS (a private CA's
	// RootCAs); its ServerName defaults to SMTP's host.
	TLS *tls.Config
	// Timeout bounds one attempt (connect, send). Default 30s.
	Timeout time.Duration
	// Store reads sessions' titles. Required.
	Store store.Store
	// Recipients says who gets a mail; those without an email get none. Required.
	Recipients Recipients
	// Links makes the mails' links. Required.
	Links Links
	// Person finds the people a reminder, an escalation or a delegation
	// names (user_input_reminder); nil: those send no mail.
	Person Person
}

// Email is the email Channel (docs/design.md §17): one mail per recipient
// per question, text and HTML, with the question, its one-click answers
// as links to their confirmation pages and the action link. The mail is
// rendered when its outbox row is written, so every attempt sends the
// same bytes and the same Message-ID (a receiver can drop a repeat).
type Email struct {
	o    EmailOptions
	host string
	port int
}

// NewEmail checks o and returns the channel.
func NewEmail(o EmailOptions) (*Email, error) {
	host, port, err := net.SplitHostPort(o.SMTP)
	if err != nil || host == "" {
		return nil, fmt.Errorf("people: email smtp %q is not host:port", o.SMTP)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("people: email smtp %q: the port is not 1..65535", o.SMTP)
	}
	if o.From == "" || o.Store == nil || o.Recipients == nil || o.Links == nil {
		return nil, errors.New("people: EmailOptions.From, Store, Recipients and Links are required")
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	return &Email{o: o, host: host, port: n}, nil
}

// Prefix is "email:".
func (e *Email) Prefix() string { return "email:" }

// mailBody is an email row's Body: the whole message, rendered.
type mailBody struct {
	MessageID string `json:"messageId"`
	To        string `json:"to"`
	ToName    string `json:"toName,omitempty"`
	Subject   string `json:"subject"`
	Text      string `json:"text"`
	HTML      string `json:"html"`
	RequestID string `json:"requestId"`
}

// Email row types.
const (
	emailQuestion = "email.question"
	emailReminder = "email.reminder"
)

// Fan writes one mail per recipient with an email for a question
// (user_input_required: its recipients) and for a reminder, escalation or
// delegation (user_input_reminder: the people it names, while the
// question is pending); nothing for other entries.
func (e *Email) Fan(ctx context.Context, f *store.FeedEntry) ([]*store.WebhookDelivery, error) {
	req, _, err := decodeFeed(f)
	if err != nil {
		return nil, err
	}
	rm, err := decodeReminder(f)
	if err != nil {
		return nil, err
	}
	var rcpts []Recipient
	typ := emailQuestion
	switch {
	case req != nil:
		if rcpts, err = e.o.Recipients(ctx, f.Owner, req); err != nil {
			return nil, err
		}
	case rm != nil:
		typ = emailReminder
		if rcpts, req, err = reminderRecipients(ctx, e.o.Store, e.o.Person, rm); err != nil || req == nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	title := ""
	if ss, err := e.o.Store.SessionGet(ctx, f.SessionID); err == nil {
		title = ss.Title
	}
	var out []*store.WebhookDelivery
	for _, r := range rcpts {
		if r.Email == "" {
			continue
		}
		id := newMessageID()
		m, err := e.render(id, r, req, title, rm)
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		out = append(out, &store.WebhookDelivery{ID: id, Hook: e.Prefix() + r.ID, SessionID: f.SessionID, Type: typ, Body: body})
	}
	return out, nil
}

// mailView is what the templates see.
type mailView struct {
	Name, Session, Heading, Note, Title, Description, Action string
	Tool, Arguments                                          string
	Questions                                                []string
	Choices                                                  []mailChoice
	Expires                                                  string
}

type mailChoice struct{ Label, URL string }

var mailText = texttemplate.Must(texttemplate.New("text").Parse(`Hello {{.Name}},

{{.Heading}}{{if .Session}} (session "{{.Session}}"){{end}}:
{{- if .Note}}

  "{{.Note}}"
{{- end}}

  {{.Title}}
{{- if .Description}}

{{.Description}}
{{- end}}
{{- if .Tool}}

Tool: {{.Tool}}
Arguments: {{.Arguments}}
{{- end}}
{{- range .Questions}}
- {{.}}
{{- end}}
{{- if .Choices}}

Answer with one click (a page asks you to confirm):
{{range .Choices}}
  {{.Label}}: {{.URL}}
{{- end}}
{{- end}}

Open the question in luban: {{.Action}}

The links are yours alone and work until {{.Expires}} or until the question is answered.
`))

var mailHTML = htmltemplate.Must(htmltemplate.New("html").Parse(`<!doctype html>
<html><body style="font-family: sans-serif; line-height: 1.4">
<p>Hello {{.Name}},</p>
<p>{{.Heading}}{{if .Session}} (session “{{.Session}}”){{end}}:</p>
{{if .Note}}<blockquote style="white-space: pre-wrap">{{.Note}}</blockquote>{{end}}
<h2 style="font-size: 1.2em">{{.Title}}</h2>
{{if .Description}}<p style="white-space: pre-wrap">{{.Description}}</p>{{end}}
{{if .Tool}}<p>Tool: <code>{{.Tool}}</code></p><pre style="background: #f4f4f4; padding: 8px; white-space: pre-wrap">{{.Arguments}}</pre>{{end}}
{{if .Questions}}<ul>{{range .Questions}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Choices}}<p>{{range .Choices}}<a href="{{.URL}}" style="display: inline-block; margin: 0 8px 8px 0; padding: 8px 14px; border: 1px solid #888; border-radius: 6px; text-decoration: none">{{.Label}}</a> {{end}}</p>
<p style="color: #666; font-size: 0.9em">A page asks you to confirm before the answer counts.</p>{{end}}
<p><a href="{{.Action}}">Open the question in luban</a></p>
<p style="color: #666; font-size: 0.9em">The links are yours alone and work until {{.Expires}} or until the question is answered.</p>
</body></html>
`))

// render builds the mail of request req for recipient r: the question,
// or with rm set a reminder, escalation or delegation of it.
func (e *Email) render(id string, r Recipient, req *api.InputRequest, session string, rm *api.InputReminder) (*mailBody, error) {
	action, err := e.o.Links.ActionLink(req.ID, r.ID, "")
	if err != nil {
		return nil, err
	}
	v := mailView{Name: r.Name, Session: session, Heading: "luban has a question for you", Title: req.Title, Description: req.Description,
		Action: action, Expires: req.ExpiresAt.UTC().Format("2006-01-02 15:04 MST")}
	if v.Name == "" {
		v.Name = r.ID
	}
	subject := "Question: " + req.Title
	switch req.Tool {
	case api.ToolApproval:
		v.Heading = "An agent asks for your approval"
		v.Tool, v.Arguments = req.ToolName, prettyJSON(req.Arguments)
		subject = "Approval needed: " + req.ToolName
	case api.ToolElicitation:
		v.Heading = "A tool server asks for your input"
	}
	if rm != nil {
		v.Heading, v.Note = reminderHeading(rm), rm.Message
		subject = "Reminder: " + subject
		if rm.Reason != api.ReminderReminder {
			subject = "For you: " + strings.TrimPrefix(subject, "Reminder: ")
		}
	}
	for _, q := range req.Questions {
		v.Questions = append(v.Questions, q.Question)
	}
	for _, c := range Choices(req) {
		u, err := e.o.Links.ActionLink(req.ID, r.ID, c.Answer)
		if err != nil {
			return nil, err
		}
		v.Choices = append(v.Choices, mailChoice{Label: c.Label, URL: u})
	}
	var text, html bytes.Buffer
	if err := mailText.Execute(&text, v); err != nil {
		return nil, err
	}
	if err := mailHTML.Execute(&html, v); err != nil {
		return nil, err
	}
	return &mailBody{MessageID: strings.TrimPrefix(id, "msg_") + "@luban", To: r.Email, ToName: r.Name, Subject: oneLine(subject, 200),
		Text: text.String(), HTML: html.String(), RequestID: req.ID}, nil
}

// prettyJSON indents a JSON value for reading, or returns it as it is.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// oneLine folds s to one line of at most n runes (a subject header).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Send makes one SMTP conversation that sends the row's mail.
func (e *Email) Send(ctx context.Context, dl *store.WebhookDelivery) string {
	var m mailBody
	if err := json.Unmarshal(dl.Body, &m); err != nil {
		return "stored mail: " + err.Error()
	}
	msg := mail.NewMsg()
	if err := msg.From(e.o.From); err != nil {
		return "from: " + err.Error()
	}
	if err := msg.AddToFormat(m.ToName, m.To); err != nil {
		return "to: " + err.Error()
	}
	msg.Subject(m.Subject)
	msg.SetMessageIDWithValue(m.MessageID)
	msg.SetDate()
	msg.SetGenHeader(mail.Header("X-Luban-Request"), m.RequestID)
	msg.SetGenHeader(mail.Header("Auto-Submitted"), "auto-generated")
	msg.SetBodyString(mail.TypeTextPlain, m.Text)
	msg.AddAlternativeString(mail.TypeTextHTML, m.HTML)

	tlsCfg := &tls.Config{ServerName: e.host, MinVersion: tls.VersionTLS12}
	if e.o.TLS != nil {
		tlsCfg = e.o.TLS.Clone()
		if tlsCfg.ServerName == "" {
			tlsCfg.ServerName = e.host
		}
	}
	opts := []mail.Option{mail.WithPort(e.port), mail.WithTimeout(e.o.Timeout), mail.WithTLSConfig(tlsCfg), mail.WithTLSPolicy(mail.NoTLS)}
	if e.o.StartTLS {
		opts = append(opts, mail.WithTLSPolicy(mail.TLSMandatory))
	}
	if e.o.Username != "" {
		opts = append(opts, mail.WithSMTPAuth(mail.SMTPAuthAutoDiscover), mail.WithUsername(e.o.Username), mail.WithPassword(e.o.Password))
	}
	c, err := mail.NewClient(e.host, opts...)
	if err != nil {
		return err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, e.o.Timeout)
	defer cancel()
	if err := c.DialAndSendWithContext(ctx, msg); err != nil {
		return err.Error()
	}
	return ""
}
