package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/slack-go/slack"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
)

// Slack enables POST /api/slack/interactions (docs/design.md §17): the
// clicks on the buttons of luban's Slack messages. The request carries no
// bearer token; Slack's signature is its authentication.
type Slack struct {
	// SigningSecret is the Slack app's signing secret: a request whose
	// X-Slack-Signature (v0, HMAC-SHA256 of "v0:<timestamp>:<body>") does
	// not match, or whose X-Slack-Request-Timestamp is more than 5 minutes
	// away from now, is 401. Required.
	SigningSecret string
	// ShowReceipt updates the Slack message at (channelID, ts) to the
	// receipt of requestID, once it is resolved. Nil: the message is left
	// as it is (the outbox updates it when the resolution is fanned out).
	ShowReceipt func(ctx context.Context, channelID, ts, requestID string) error
}

// maxSlackBody bounds an interaction payload (Slack's are a few KiB).
const maxSlackBody = 64 << 10

// handleSlackInteractions answers a Slack button click: 401 for a request
// Slack did not sign (or signed more than 5 minutes ago), 403 for a Slack
// user who is no person of `people:`, 200 for a click that answered or
// that asks nothing (the "Answer in luban" link, other payload types), and
// for a click that could not answer the status of POST /api/chat/continue
// (409 already resolved, 410 expired, 404, 422) with its error body; a
// click on a question resolved before updates the message to the receipt.
func (s *Server) handleSlackInteractions(w http.ResponseWriter, r *http.Request) {
	sl := s.opts.Slack
	if sl == nil {
		writeError(w, http.StatusNotFound, api.ErrorDetail{Code: api.CodeNotFound, Message: "Slack is not configured here (notify.slack)"})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxSlackBody))
	if err != nil {
		if s.bodyFailed(w, r, err) {
			return
		}
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "the body could not be read"})
		return
	}
	sv, err := slack.NewSecretsVerifier(r.Header, sl.SigningSecret)
	if err == nil {
		_, _ = sv.Write(body)
		err = sv.Ensure()
	}
	if err != nil {
		msg := "the request is not signed by Slack with this app's signing secret"
		if errors.Is(err, slack.ErrExpiredTimestamp) {
			msg = "the request's X-Slack-Request-Timestamp is more than 5 minutes away from now"
		}
		writeError(w, http.StatusUnauthorized, api.ErrorDetail{Code: api.CodeUnauthorized, Message: msg})
		return
	}
	form, err := url.ParseQuery(string(body))
	var cb slack.InteractionCallback
	if err == nil {
		err = json.Unmarshal([]byte(form.Get("payload")), &cb)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "the body is not a Slack interaction payload (payload=<JSON>)"})
		return
	}
	person := s.slackPerson(cb.User.ID)
	if person == "" {
		writeError(w, http.StatusForbidden, api.ErrorDetail{Code: api.CodeUnknownSlackUser, Message: "this Slack user is not one of luban's people (people[].slack)"})
		return
	}
	var btn *api.SlackButton
	if cb.Type == slack.InteractionTypeBlockActions {
		for _, a := range cb.ActionCallback.BlockActions {
			if a.ActionID != api.SlackActionAnswer {
				continue
			}
			var b api.SlackButton
			if json.Unmarshal([]byte(a.Value), &b) != nil || b.R == "" || b.S == "" {
				writeError(w, http.StatusBadRequest, api.ErrorDetail{Code: api.CodeInvalidRequest, Message: "the button's value is not luban's"})
				return
			}
			btn = &b
			break
		}
	}
	if btn == nil {
		w.WriteHeader(http.StatusOK) // a link click or anything else: nothing to answer
		return
	}
	req := api.ContinueRequest{SessionID: btn.S, RequestID: btn.R}
	switch btn.K {
	case api.SlackKindApproval:
		req.Decision = api.Decision(btn.A)
	default:
		req.Selections = []string{btn.A}
	}
	// No SessionID: an assignee need not see the session; who may answer
	// is Resolve's own rule (403 not_assignee).
	_, err = s.opts.Runner.Resolve(r.Context(), agent.ResolveParams{By: person, RequestID: req.RequestID,
		Answer: req, Surface: agent.SurfaceSlack})
	channel, ts := cb.Container.ChannelID, cb.Container.MessageTs
	if channel == "" {
		channel, ts = cb.Channel.ID, cb.Message.Timestamp
	}
	status, _ := errorFor(err)
	if err == nil || status == http.StatusConflict || status == http.StatusGone {
		s.slackReceipt(r.Context(), channel, ts, req.RequestID)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// slackReceipt updates the clicked message to the receipt, bounded so
// that Slack (which waits 3 seconds) gets its answer in time.
func (s *Server) slackReceipt(ctx context.Context, channel, ts, requestID string) {
	if s.opts.Slack.ShowReceipt == nil || channel == "" || ts == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	if err := s.opts.Slack.ShowReceipt(ctx, channel, ts, requestID); err != nil {
		s.log.Warn("slack: update the message to the receipt", "request", requestID, "err", err)
	}
}

// slackPerson is the id of the person whose `slack` is user, or "".
func (s *Server) slackPerson(user string) string {
	if user == "" {
		return ""
	}
	for _, p := range s.opts.People.People() {
		if p.Slack == user {
			return p.ID
		}
	}
	return ""
}
