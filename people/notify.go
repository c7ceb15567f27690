package people

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// Recipient is one person a notification goes to (docs/design.md §17): a
// person of the `people:` directory with where to reach them. Email or
// Slack may be empty; a channel skips a recipient it cannot reach.
type Recipient struct {
	ID, Name, Email, Slack string
}

// Recipients returns who must hear of request req of a session owned by
// owner: its assignees (Runner.Assignees: its route's people, else the session's owner),
// each once.
type Recipients func(ctx context.Context, owner string, req *api.InputRequest) ([]Recipient, error)

// Person returns the person of id with where to reach them, ok false for
// an id of nobody in the directory (a token's principal).
type Person func(id string) (Recipient, bool)

// Links makes the absolute links a notification carries (docs/design.md
// §17): the action link of one interaction for one person, and with answer
// set (an option id of a single choice, or "approve" / "reject" of an
// approval) the link that opens its confirmation page.
type Links interface {
	ActionLink(requestID, personID, answer string) (string, error)
}

// Channel is one way of reaching people besides webhooks (email, Slack;
// docs/design.md §30): it turns a feed entry into outbox rows of its own
// (one per message) and sends each row once per attempt. Its rows live in
// the webhook outbox (store.WebhookDelivery) with Hook = Prefix() + the
// recipient's person id, so they are leased, retried with backoff for the
// retry window and survive restarts exactly as webhook deliveries do (at
// least once).
type Channel interface {
	// Prefix marks the channel's rows in the Hook column ("email:",
	// "slack:"); it ends with ':' so it never looks like a URL.
	Prefix() string
	// Fan returns the rows of feed entry f (nil when it concerns nobody
	// this channel reaches). Each row's Hook is Prefix()+person id, unique
	// per entry; ID, SessionID, Type and Body are set, Body being all the
	// attempt needs.
	Fan(ctx context.Context, f *store.FeedEntry) ([]*store.WebhookDelivery, error)
	// Send makes one attempt of row dl: "" when it was delivered, else what
	// failed (the row is retried until the window has passed).
	Send(ctx context.Context, dl *store.WebhookDelivery) string
}

// channelOf returns the channel whose rows hook names, or nil.
func (d *Dispatcher) channelOf(hook string) Channel {
	for _, c := range d.o.Channels {
		if strings.HasPrefix(hook, c.Prefix()) {
			return c
		}
	}
	return nil
}

// fanChannels adds every channel's rows of f to p.
func (d *Dispatcher) fanChannels(ctx context.Context, f *store.FeedEntry, p *store.WebhookEnqueueParams) error {
	for _, c := range d.o.Channels {
		rows, err := c.Fan(ctx, f)
		if err != nil {
			return fmt.Errorf("%s fan out: %w", strings.TrimSuffix(c.Prefix(), ":"), err)
		}
		p.Deliveries = append(p.Deliveries, rows...)
	}
	return nil
}

// decodeReminder decodes a user_input_reminder feed entry, nil for other
// entries.
func decodeReminder(f *store.FeedEntry) (*api.InputReminder, error) {
	if f.Name != api.EventUserInputReminder {
		return nil, nil
	}
	var rm api.InputReminder
	if err := json.Unmarshal(f.Data, &rm); err != nil {
		return nil, fmt.Errorf("feed entry %s/%d: %w", f.Owner, f.Seq, err)
	}
	return &rm, nil
}

// reminderRecipients are the people a reminder names whom person knows,
// each once, with the stored request it is about (nil, nil when the
// interaction is gone or resolved).
func reminderRecipients(ctx context.Context, st store.Store, person Person, rm *api.InputReminder) ([]Recipient, *api.InputRequest, error) {
	if person == nil {
		return nil, nil, nil
	}
	it, err := st.InteractionGet(ctx, rm.RequestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if it.Status != string(api.StatusPending) {
		return nil, nil, nil
	}
	req, err := decodeStored(it)
	if err != nil {
		return nil, nil, err
	}
	var out []Recipient
	seen := map[string]bool{}
	for _, id := range rm.Notify {
		if r, ok := person(id); ok && !seen[id] {
			seen[id] = true
			out = append(out, r)
		}
	}
	return out, req, nil
}

// reminderHeading is the first line of a reminder for a person.
func reminderHeading(rm *api.InputReminder) string {
	switch rm.Reason {
	case api.ReminderEscalation:
		return "A question was escalated to you; it still waits for an answer"
	case api.ReminderDelegation:
		if rm.From != "" {
			return rm.From + " handed you this question"
		}
		return "This question was handed to you"
	}
	return "Reminder: a question still waits for your answer"
}

// decodeFeed decodes a user_input_required feed entry's request, or a
// user_input_resolved one's receipt; other entries give (nil, nil, nil).
func decodeFeed(f *store.FeedEntry) (*api.InputRequest, *api.Receipt, error) {
	switch f.Name {
	case api.EventUserInputRequired:
		var req api.InputRequest
		if err := json.Unmarshal(f.Data, &req); err != nil {
			return nil, nil, fmt.Errorf("feed entry %s/%d: %w", f.Owner, f.Seq, err)
		}
		return &req, nil, nil
	case api.EventUserInputResolved:
		var rc api.Receipt
		if err := json.Unmarshal(f.Data, &rc); err != nil {
			return nil, nil, fmt.Errorf("feed entry %s/%d: %w", f.Owner, f.Seq, err)
		}
		return nil, &rc, nil
	}
	return nil, nil, nil
}

// Choice is one answer a notification offers as a link or a button: an
// option of a single choice, or approve / reject of an approval.
type Choice struct {
	// Answer is what the action link's answer= carries: the option id, or
	// the decision.
	Answer string
	Label  string
	// Style is "primary" or "danger" for an approval's decisions, "" else.
	Style string
}

// Choices returns the one-click answers of req (docs/design.md §17): the
// options of a single-choice ask_user question, approve and reject for an
// approval; nil for everything else (answered on the action link's page).
func Choices(req *api.InputRequest) []Choice {
	switch {
	case req.Tool == api.ToolApproval:
		return []Choice{{Answer: string(api.DecisionApprove), Label: "Approve", Style: "primary"}, {Answer: string(api.DecisionReject), Label: "Reject", Style: "danger"}}
	case req.Tool == api.ToolAskUser && req.Mode == api.ModeSingle:
		out := make([]Choice, 0, len(req.Options))
		for _, o := range req.Options {
			out = append(out, Choice{Answer: o.ID, Label: o.Label})
		}
		return out
	}
	return nil
}

// ChoiceAnswer is the answer body of choice answer for req (its option
// selected, or the decision), ok false when answer is none of req's
// Choices.
func ChoiceAnswer(req *api.InputRequest, answer string) (api.ContinueRequest, bool) {
	for _, c := range Choices(req) {
		if c.Answer != answer {
			continue
		}
		if req.Tool == api.ToolApproval {
			return api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Decision: api.Decision(answer)}, true
		}
		return api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Selections: []string{answer}}, true
	}
	return api.ContinueRequest{}, false
}

// Outcome words a receipt in one line for a person ("Answered: Yes",
// "Approved", "Expired"), with the option labels of req when known.
func Outcome(req *api.InputRequest, rc *api.Receipt) string {
	switch rc.Status {
	case api.StatusCancelled:
		return "Cancelled"
	case api.StatusExpired:
		return "Expired"
	case api.StatusNotResumable:
		return "Closed: the run can no longer continue"
	}
	switch rc.Decision {
	case api.DecisionApprove:
		return "Approved"
	case api.DecisionEdit:
		return "Approved with edited arguments"
	case api.DecisionReject:
		return "Rejected"
	case api.DecisionAccept:
		return "Accepted"
	case api.DecisionDecline:
		return "Declined"
	}
	var parts []string
	for _, s := range rc.Selections {
		label := s
		if req != nil {
			for _, o := range req.Options {
				if o.ID == s {
					label = o.Label
				}
			}
		}
		parts = append(parts, label)
	}
	if rc.CustomInput != "" {
		parts = append(parts, rc.CustomInput)
	}
	for _, a := range rc.Answers {
		parts = append(parts, strings.Join(append(append([]string{}, a.Selected...), nonEmpty(a.Other)...), ", "))
	}
	if len(parts) == 0 {
		return "Answered"
	}
	return "Answered: " + strings.Join(parts, "; ")
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
