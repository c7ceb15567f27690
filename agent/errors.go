package agent

import (
	"errors"
	"fmt"

	"github.com/lubanhq/luban/api"
)

// Errors returned by the Runner. server/errors.go maps them to the statuses
// and codes of docs/design.md §3.
var (
	// ErrSessionNotFound: the session does not exist or belongs to another
	// principal (404 session_not_found).
	ErrSessionNotFound = errors.New("session not found")
	// ErrInteractionNotFound: the request does not exist or belongs to
	// another session (404 interaction_not_found).
	ErrInteractionNotFound = errors.New("interaction not found")
	// ErrNotAssignee: the request was assigned by a route (docs/design.md
	// §16) and the caller is not one of its assignees, or is the owner
	// approving their own agent's call under selfApproval: false (403
	// not_assignee). Nothing was consumed.
	ErrNotAssignee = errors.New("you are not one of the people this request waits for")
	// ErrAlreadyDecided: the caller's decision on an approval that needs a
	// quorum is already recorded (409 already_decided). Nothing changed.
	ErrAlreadyDecided = errors.New("your decision on this request is already recorded; it waits for the other approvers")
	// ErrRunInProgress: the session's run is running (409 run_in_progress).
	ErrRunInProgress = errors.New("a run is in progress in this session")
	// ErrInteractionExpired: the request passed its expiresAt (410 interaction_expired).
	ErrInteractionExpired = errors.New("the request has expired")
	// ErrNotResumable: the stored state cannot be resumed, e.g. its agent no
	// longer exists (410 not_resumable).
	ErrNotResumable = errors.New("the run cannot be resumed (its state did not survive a restart, or its agent is gone); start the task again")
	// ErrPayloadTooLarge: free text above askuser.MaxCustomInput or a
	// message above MaxMessageRunes (413 payload_too_large).
	ErrPayloadTooLarge = errors.New("payload too large")
	// ErrInvalidRequest: a required field is missing (400 invalid_request).
	ErrInvalidRequest = errors.New("invalid request")
)

// RequestFieldError is ErrInvalidRequest (400 invalid_request) naming the
// fields of the body at fault, each with its api.FieldCode, so a client can
// word it: Msg is the English sentence after "invalid request: ".
type RequestFieldError struct {
	Msg     string
	Details []api.FieldError
}

// Error is "invalid request: " + Msg.
func (e *RequestFieldError) Error() string { return ErrInvalidRequest.Error() + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrInvalidRequest) hold.
func (e *RequestFieldError) Unwrap() error { return ErrInvalidRequest }

// PayloadTooLargeError is ErrPayloadTooLarge (413 payload_too_large) for
// free text over its bound, naming the field with api.DetailTooLong and
// params {max, got, unit: "characters"} so a client can show the limit.
type PayloadTooLargeError struct {
	Msg     string
	Details []api.FieldError
}

// Error is "payload too large: " + Msg.
func (e *PayloadTooLargeError) Error() string { return ErrPayloadTooLarge.Error() + ": " + e.Msg }

// Unwrap makes errors.Is(err, ErrPayloadTooLarge) hold.
func (e *PayloadTooLargeError) Unwrap() error { return ErrPayloadTooLarge }

// textTooLong is a PayloadTooLargeError of one field holding got characters, max allowed.
func textTooLong(field string, got, max int) error {
	return textsTooLong(tooLongText{field, got, max})
}

// tooLongText is a field holding got characters, max allowed.
type tooLongText struct {
	field    string
	got, max int
}

// textsTooLong is a PayloadTooLargeError listing every field of ts (at least
// one), in order: a 413, like a 422, lists every problem.
func textsTooLong(ts ...tooLongText) error {
	e := &PayloadTooLargeError{}
	for _, t := range ts {
		msg := fmt.Sprintf("%s is longer than %d characters", t.field, t.max)
		if e.Msg == "" {
			e.Msg = msg
		}
		e.Details = append(e.Details, api.FieldError{Field: t.field, Code: api.DetailTooLong, Params: map[string]any{"max": t.max, "got": t.got, "unit": "characters"}, Message: msg})
	}
	if len(ts) > 1 {
		e.Msg += fmt.Sprintf(" (and %d more)", len(ts)-1)
	}
	return e
}

// fieldRequest is a RequestFieldError of one field.
func fieldRequest(field string, code api.FieldCode, params map[string]any, msg string) error {
	return &RequestFieldError{Msg: msg, Details: []api.FieldError{{Field: field, Code: code, Params: params, Message: msg}}}
}

// InteractionPendingError: a new message was sent while a question is
// pending (409 interaction_pending); Pending is that question.
type InteractionPendingError struct {
	Pending *api.InputRequest
}

// Error says a question is waiting in the session.
func (e *InteractionPendingError) Error() string {
	return "a question is waiting for an answer in this session"
}

// AlreadyResolvedError: the request was already answered, cancelled or
// expired (409 already_resolved); Receipt is how it was resolved.
type AlreadyResolvedError struct {
	Receipt *api.Receipt
}

// Error names how the request was resolved.
func (e *AlreadyResolvedError) Error() string {
	return "the request was already " + string(e.Receipt.Status)
}

// InteractionExpiredError: the request is past its expiresAt (410
// interaction_expired, docs/design.md §3). Receipt is the expired receipt once the
// request has been resolved as expired. It unwraps to ErrInteractionExpired.
type InteractionExpiredError struct {
	Receipt *api.Receipt
}

// Error is ErrInteractionExpired's text.
func (e *InteractionExpiredError) Error() string { return ErrInteractionExpired.Error() }

// Unwrap returns ErrInteractionExpired.
func (e *InteractionExpiredError) Unwrap() error { return ErrInteractionExpired }
