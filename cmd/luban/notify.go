package main

import (
	"context"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/principal"
	"github.com/lubanhq/luban/server"
	"github.com/lubanhq/luban/store"
)

// notifiers are the email and Slack channels of `notify:` (docs/design.md
// §17) and the server's side of Slack (its button clicks).
type notifiers struct {
	channels []people.Channel
	slack    *server.Slack
}

// newNotifiers builds the channels of file's `notify:` (none without a
// file or the section). Questions go to their assignees (assignees:
// agent.Runner.Assignees) as people of dir; links makes their signed
// action links (signing.Links on server.publicUrl).
func newNotifiers(st store.Store, file *config.File, dir *principal.Directory, assignees func(ctx context.Context, requestID string) ([]string, error), links people.Links) (*notifiers, error) {
	n := &notifiers{}
	if file == nil {
		return n, nil
	}
	person := personOf(dir)
	rcpts := assigneeRecipients(assignees, person)
	if e := file.Notify.Email; e != nil {
		ch, err := people.NewEmail(people.EmailOptions{SMTP: e.SMTP, From: e.From, Username: e.Username, Password: e.Password, StartTLS: e.StartTLS,
			Store: st, Recipients: rcpts, Person: person, Links: links})
		if err != nil {
			return nil, err
		}
		n.channels = append(n.channels, ch)
	}
	if s := file.Notify.Slack; s != nil {
		ch, err := people.NewSlack(people.SlackOptions{BotToken: s.BotToken, APIURL: s.APIURL, Store: st, Recipients: rcpts, Person: person, Links: links})
		if err != nil {
			return nil, err
		}
		n.channels = append(n.channels, ch)
		n.slack = &server.Slack{SigningSecret: s.SigningSecret, ShowReceipt: ch.ShowReceipt}
	}
	return n, nil
}

// assigneeRecipients is who hears of a question: its assignees (the
// route's people, else the session's owner) who are people of the
// directory (a token outside people: reaches nobody).
func assigneeRecipients(assignees func(ctx context.Context, requestID string) ([]string, error), person people.Person) people.Recipients {
	return func(ctx context.Context, _ string, req *api.InputRequest) ([]people.Recipient, error) {
		ids, err := assignees(ctx, req.ID)
		if err != nil {
			return nil, err
		}
		var out []people.Recipient
		for _, id := range ids {
			if r, ok := person(id); ok {
				out = append(out, r)
			}
		}
		return out, nil
	}
}

// personOf finds the people reminders, escalations and delegations name.
func personOf(dir *principal.Directory) people.Person {
	return func(id string) (people.Recipient, bool) {
		p := dir.Get(id)
		if p == nil {
			return people.Recipient{}, false
		}
		return people.Recipient{ID: p.ID, Name: p.Name, Email: p.Email, Slack: p.Slack}, true
	}
}
