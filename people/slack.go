package people

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// SlackOptions configures NewSlack (`notify.slack`, docs/design.md §17).
type SlackOptions struct {
	// BotToken is the app's bot token (xoxb-…). Required.
	BotToken string
	// APIURL is Slack's Web API base URL, ending with '/'. Default
	// https://slack.com/api/.
	APIURL string
	// Store reads interactions and records posted messages. Required.
	Store store.Store
	// Recipients says who gets a message; those without a Slack id get
	// none. Required.
	Recipients Recipients
	// Links makes the "Answer in luban" links. Required.
	Links Links
	// Person finds the people a reminder, an escalation or a delegation
	// names (user_input_reminder); nil: those send nothing.
	Person Person
	// Timeout bounds one Web API call. Default 10s.
	Timeout time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Slack is the Slack Channel (docs/design.md §17): a Block Kit message
// (chat.postMessage) to each recipient's Slack user id, with a button per
// one-click answer (single choice, approve / reject) and an "Answer in
// luban" link button; when the question is resolved, wherever, each
// message is updated to the receipt (chat.update). Slack's clicks come
// back to POST /api/slack/interactions (package server).
type Slack struct {
	o   SlackOptions
	api *slack.Client
}

// Slack row types.
const (
	slackQuestion = "slack.question"
	slackReceipt  = "slack.receipt"
	slackReminder = "slack.reminder"
	slackChannel  = "slack"
)

// NewSlack checks o and returns the channel.
func NewSlack(o SlackOptions) (*Slack, error) {
	if o.BotToken == "" || o.Store == nil || o.Recipients == nil || o.Links == nil {
		return nil, errors.New("people: SlackOptions.BotToken, Store, Recipients and Links are required")
	}
	if o.APIURL == "" {
		o.APIURL = "https://slack.com/api/"
	}
	if !strings.HasSuffix(o.APIURL, "/") {
		o.APIURL += "/"
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	client := &http.Client{Timeout: o.Timeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Slack{o: o, api: slack.New(o.BotToken, slack.OptionAPIURL(o.APIURL), slack.OptionHTTPClient(client))}, nil
}

// Prefix is "slack:".
func (s *Slack) Prefix() string { return "slack:" }

// slackRow is a Slack row's Body.
type slackRow struct {
	RequestID string `json:"requestId"`
	Person    string `json:"person"`
	User      string `json:"user"` // the Slack user id
	// Heading and Note are a reminder's first line and a delegation's
	// message.
	Heading string `json:"heading,omitempty"`
	Note    string `json:"note,omitempty"`
}

// Fan writes one row per recipient with a Slack id: a message to post for
// a question, an update to the receipt for a resolution, a reply to the
// question's message (or the question, for whom has none) for a
// reminder, escalation or delegation.
func (s *Slack) Fan(ctx context.Context, f *store.FeedEntry) ([]*store.WebhookDelivery, error) {
	req, rc, err := decodeFeed(f)
	if err != nil {
		return nil, err
	}
	rm, err := decodeReminder(f)
	if err != nil {
		return nil, err
	}
	if rm != nil {
		rcpts, req, err := reminderRecipients(ctx, s.o.Store, s.o.Person, rm)
		if err != nil || req == nil {
			return nil, err
		}
		var out []*store.WebhookDelivery
		for _, r := range rcpts {
			if r.Slack == "" {
				continue
			}
			body, err := json.Marshal(slackRow{RequestID: req.ID, Person: r.ID, User: r.Slack, Heading: reminderHeading(rm), Note: rm.Message})
			if err != nil {
				return nil, err
			}
			out = append(out, &store.WebhookDelivery{ID: newMessageID(), Hook: s.Prefix() + r.ID, SessionID: f.SessionID, Type: slackReminder, Body: body})
		}
		return out, nil
	}
	if req == nil && rc == nil {
		return nil, nil
	}
	typ := slackQuestion
	if rc != nil {
		typ = slackReceipt
		it, err := s.o.Store.InteractionGet(ctx, rc.RequestID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if req, err = decodeStored(it); err != nil {
			return nil, err
		}
	}
	rcpts, err := s.o.Recipients(ctx, f.Owner, req)
	if err != nil {
		return nil, err
	}
	var out []*store.WebhookDelivery
	for _, r := range rcpts {
		if r.Slack == "" {
			continue
		}
		body, err := json.Marshal(slackRow{RequestID: req.ID, Person: r.ID, User: r.Slack})
		if err != nil {
			return nil, err
		}
		out = append(out, &store.WebhookDelivery{ID: newMessageID(), Hook: s.Prefix() + r.ID, SessionID: f.SessionID, Type: typ, Body: body})
	}
	return out, nil
}

// decodeStored decodes a stored interaction's request.
func decodeStored(it *store.Interaction) (*api.InputRequest, error) {
	var req api.InputRequest
	if err := json.Unmarshal(it.Request, &req); err != nil {
		return nil, fmt.Errorf("stored request %s: %w", it.ID, err)
	}
	req.ID, req.SessionID = it.ID, it.SessionID
	return &req, nil
}

// Send posts the question (or, when it was resolved meanwhile, its
// receipt) or updates the posted message to the receipt.
func (s *Slack) Send(ctx context.Context, dl *store.WebhookDelivery) string {
	var row slackRow
	if err := json.Unmarshal(dl.Body, &row); err != nil {
		return "stored row: " + err.Error()
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	var err error
	switch dl.Type {
	case slackQuestion:
		err = s.post(ctx, row)
	case slackReceipt:
		err = s.updateAll(ctx, row.RequestID, row.Person)
	case slackReminder:
		err = s.remind(ctx, row)
	default:
		err = fmt.Errorf("unknown slack row type %q", dl.Type)
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

// post sends the question to row.User and records where the message is.
// A question resolved before it is posted is posted as its receipt; one
// resolved while it was being posted is updated to it at once (the
// resolution's own update may have found no message yet).
func (s *Slack) post(ctx context.Context, row slackRow) error {
	it, err := s.o.Store.InteractionGet(ctx, row.RequestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the session was deleted: nothing to ask
	}
	if err != nil {
		return err
	}
	req, err := decodeStored(it)
	if err != nil {
		return err
	}
	text, blocks, err := s.message(it, req, row.Person)
	if err != nil {
		return err
	}
	channel, ts, err := s.api.PostMessageContext(ctx, row.User, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	if err != nil {
		return fmt.Errorf("chat.postMessage: %w", err)
	}
	if err := s.o.Store.NotifyMessagePut(ctx, &store.NotifyMessage{RequestID: it.ID, Channel: slackChannel, Person: row.Person, SessionID: it.SessionID,
		Address: channel, Ref: ts, CreatedAt: s.o.Now()}); err != nil {
		return err
	}
	if it.Status != string(api.StatusPending) {
		return nil
	}
	if now, err := s.o.Store.InteractionGet(ctx, it.ID); err == nil && now.Status != string(api.StatusPending) {
		return s.update(ctx, now, req, channel, ts)
	}
	return nil
}

// remind replies to the person's message about the question (in its
// thread, also sent to the conversation so that it notifies), or posts the
// question when they have none yet (an escalation's new assignee).
func (s *Slack) remind(ctx context.Context, row slackRow) error {
	msgs, err := s.o.Store.NotifyMessageList(ctx, row.RequestID)
	if err != nil {
		return err
	}
	for _, m := range msgs {
		if m.Channel != slackChannel || m.Person != row.Person {
			continue
		}
		text := mrkdwn(row.Heading)
		if row.Note != "" {
			text += "\n> " + mrkdwn(row.Note)
		}
		if link, err := s.o.Links.ActionLink(row.RequestID, row.Person, ""); err == nil {
			text += "\n<" + link + "|Answer in luban>"
		}
		if _, _, err := s.api.PostMessageContext(ctx, m.Address, slack.MsgOptionText(text, false), slack.MsgOptionTS(m.Ref), slack.MsgOptionBroadcast()); err != nil {
			return fmt.Errorf("chat.postMessage: %w", err)
		}
		return nil
	}
	return s.post(ctx, row)
}

// updateAll updates person's posted messages about requestID to its
// receipt; with none posted yet there is nothing to do (the post shows
// the receipt itself).
func (s *Slack) updateAll(ctx context.Context, requestID, person string) error {
	msgs, err := s.o.Store.NotifyMessageList(ctx, requestID)
	if err != nil {
		return err
	}
	var it *store.Interaction
	var req *api.InputRequest
	for _, m := range msgs {
		if m.Channel != slackChannel || (person != "" && m.Person != person) {
			continue
		}
		if it == nil {
			if it, err = s.o.Store.InteractionGet(ctx, requestID); err != nil {
				return err
			}
			if req, err = decodeStored(it); err != nil {
				return err
			}
		}
		if err := s.update(ctx, it, req, m.Address, m.Ref); err != nil {
			return err
		}
	}
	return nil
}

// ShowReceipt updates the message at (channelID, ts) to the receipt of
// requestID (a click on a question resolved elsewhere, docs/design.md
// §17); a request still pending is left alone.
func (s *Slack) ShowReceipt(ctx context.Context, channelID, ts, requestID string) error {
	it, err := s.o.Store.InteractionGet(ctx, requestID)
	if err != nil {
		return err
	}
	if it.Status == string(api.StatusPending) {
		return nil
	}
	req, err := decodeStored(it)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, s.o.Timeout)
	defer cancel()
	return s.update(ctx, it, req, channelID, ts)
}

func (s *Slack) update(ctx context.Context, it *store.Interaction, req *api.InputRequest, channel, ts string) error {
	text, blocks := receiptBlocks(req, ReceiptOf(it))
	if _, _, _, err := s.api.UpdateMessageContext(ctx, channel, ts, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...)); err != nil {
		return fmt.Errorf("chat.update: %w", err)
	}
	return nil
}

// message is the Block Kit message of it for person: the question with
// its buttons while it is pending, else its receipt.
func (s *Slack) message(it *store.Interaction, req *api.InputRequest, person string) (string, []slack.Block, error) {
	if it.Status != string(api.StatusPending) {
		text, blocks := receiptBlocks(req, ReceiptOf(it))
		return text, blocks, nil
	}
	link, err := s.o.Links.ActionLink(req.ID, person, "")
	if err != nil {
		return "", nil, err
	}
	blocks := questionBlocks(req)
	kind := api.SlackKindSingle
	if req.Tool == api.ToolApproval {
		kind = api.SlackKindApproval
	}
	var buttons []slack.BlockElement
	for _, c := range Choices(req) {
		v, _ := json.Marshal(api.SlackButton{R: req.ID, S: req.SessionID, K: kind, A: c.Answer})
		b := slack.NewButtonBlockElement(api.SlackActionAnswer, string(v), plain(c.Label, 75))
		if c.Style != "" {
			b = b.WithStyle(slack.Style(c.Style))
		}
		buttons = append(buttons, b)
	}
	open := slack.NewButtonBlockElement(api.SlackActionOpen, req.ID, plain("Answer in luban", 75)).WithURL(link)
	buttons = append(buttons, open)
	blocks = append(blocks, slack.NewActionBlock("luban_actions", buttons...))
	return fallback(req), blocks, nil
}

// questionBlocks shows the question: its title, description, an
// approval's tool and arguments, an AskUser batch's questions.
func questionBlocks(req *api.InputRequest) []slack.Block {
	heading := "luban has a question for you"
	switch req.Tool {
	case api.ToolApproval:
		heading = "An agent asks for your approval"
	case api.ToolElicitation:
		heading = "A tool server asks for your input"
	}
	blocks := []slack.Block{
		slack.NewContextBlock("luban_context", plain(heading, 150)),
		slack.NewHeaderBlock(plain(req.Title, 150)),
	}
	if req.Description != "" {
		blocks = append(blocks, slack.NewSectionBlock(plain(req.Description, 3000), nil, nil))
	}
	if req.Tool == api.ToolApproval {
		args := prettyJSON(req.Arguments)
		blocks = append(blocks, slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType,
			"Tool `"+mrkdwn(req.ToolName)+"`\n```"+mrkdwn(clipRunes(args, 2800))+"```", false, false), nil, nil))
	}
	for _, q := range req.Questions {
		blocks = append(blocks, slack.NewSectionBlock(plain("• "+q.Question, 3000), nil, nil))
	}
	return blocks
}

// receiptBlocks shows a resolved question: its title and the outcome, no
// buttons.
func receiptBlocks(req *api.InputRequest, rc *api.Receipt) (string, []slack.Block) {
	out := Outcome(req, rc)
	return req.Title + ": " + out, []slack.Block{
		slack.NewHeaderBlock(plain(req.Title, 150)),
		slack.NewSectionBlock(plain(out, 3000), nil, nil),
		slack.NewContextBlock("luban_receipt", plain("Resolved "+rc.ResolvedAt.UTC().Format("2006-01-02 15:04 MST")+" · "+string(rc.Status), 150)),
	}
}

// fallback is the notification text of a question (shown where blocks
// are not).
func fallback(req *api.InputRequest) string {
	if req.Tool == api.ToolApproval {
		return "Approval needed: " + req.ToolName
	}
	return "Question: " + req.Title
}

// plain is a plain_text object of s clipped to n runes (Slack's limits).
func plain(s string, n int) *slack.TextBlockObject {
	if s == "" {
		s = " "
	}
	return slack.NewTextBlockObject(slack.PlainTextType, clipRunes(s, n), false, false)
}

func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// mrkdwn escapes text for Slack's mrkdwn (&, <, > are its control
// characters), so a person's or model's text shows as text.
func mrkdwn(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "```", "`\u200b``").Replace(s)
}
