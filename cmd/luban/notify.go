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
// file or the section). Questions go to the session owner's person of
// dir (routes' assignees when they are applied); links makes their signed
// action links (signing.Links on server.publicUrl).
func newNotifiers(st store.Store, file *config.File, dir *principal.Directory, links people.Links) (*notifiers, error) {
	n := &notifiers{}
	if file == nil {
		return n, nil
	}
	rcpts, person := ownerRecipients(dir), personOf(dir)
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

// ownerRecipients is who hears of a question: the person whose id is the
// session's owner (a token outside people: reaches nobody).
func ownerRecipients(dir *principal.Directory) people.Recipients {
	return func(_ context.Context, owner string, _ *api.InputRequest) ([]people.Recipient, error) {
		p := dir.Get(owner)
		if p == nil {
			return nil, nil
		}
		return []people.Recipient{{ID: p.ID, Name: p.Name, Email: p.Email, Slack: p.Slack}}, nil
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
