package agent

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// ErrDelegateNotAssignee: the caller of a delegate is not one of the
// question's assignees (403 not_assignee).
var ErrDelegateNotAssignee = errors.New("only an assignee may hand this question on")

// DelegationError is a delegate the question cannot take (422
// invalid_delegation, docs/design.md §16): to the caller, to someone who is
// not in people:, to someone who already is an assignee, or of a question
// no route assigned. Nothing was written.
type DelegationError struct {
	Msg     string
	Details []api.FieldError
}

// Error is the reason.
func (e *DelegationError) Error() string { return e.Msg }

// DelegateParams hands pending question RequestID from By (an assignee)
// to person To with Message (POST /api/interactions/{id}/delegate).
type DelegateParams struct {
	By, RequestID, To, Message string
}

// Delegate hands a pending question from an assignee to another person
// (docs/design.md §16): in one transaction the caller stops being an
// assignee (a conditional write: only while the question is pending and
// the caller has not decided) and To becomes one, a user_input_reminder
// (reason delegation, from, message) tells To, and the audit trail records
// it. Errors: ErrInteractionNotFound (unknown), ErrDelegateNotAssignee
// (the caller is not an assignee), *AlreadyResolvedError,
// *InteractionExpiredError, *DelegationError, *PayloadTooLargeError (a
// message over api.MaxDelegateMessage).
func (r *Runner) Delegate(ctx context.Context, p DelegateParams) (*api.DelegateResult, error) {
	it, err := r.st.InteractionGet(ctx, p.RequestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInteractionNotFound
	}
	if err != nil {
		return nil, err
	}
	assignees, err := r.assigneesOf(ctx, r.st, it)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(assignees, p.By) {
		// Anyone else, the owner and a former assignee included (docs/design.md §16).
		return nil, ErrDelegateNotAssignee
	}
	switch it.Status {
	case string(api.StatusPending):
	case string(api.StatusExpired):
		return nil, &InteractionExpiredError{Receipt: receiptOf(it)}
	default:
		return nil, &AlreadyResolvedError{Receipt: receiptOf(it)}
	}
	if n := utf8.RuneCountInString(p.Message); n > api.MaxDelegateMessage {
		return nil, textsTooLong(tooLongText{"message", n, api.MaxDelegateMessage})
	}
	to := strings.TrimSpace(p.To)
	bad := func(code api.FieldCode, msg string) error {
		return &DelegationError{Msg: msg, Details: []api.FieldError{{Field: "to", Code: code, Message: msg}}}
	}
	switch {
	case to == "":
		return nil, bad(api.DetailRequired, "name the person to hand the question to")
	case to == p.By:
		return nil, bad(api.DetailNotAllowed, "you cannot hand a question to yourself")
	case r.opts.People == nil || r.opts.People.Get(to) == nil:
		return nil, bad(api.DetailInvalid, "\""+clipText(to)+"\" is not a person of people:")
	case slices.Contains(assignees, to):
		return nil, bad(api.DetailDuplicate, "\""+to+"\" may answer this question already")
	case len(it.Route) == 0:
		return nil, bad(api.DetailNotAllowed, "a question no route assigned is answered by its session's owner; a route can name others")
	}
	now := r.now()
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.AssigneeDelegate(ctx, &store.AssigneeDelegateParams{RequestID: it.ID, From: p.By, To: to, Now: now})
		if err != nil {
			return err
		}
		if !won {
			return errResolveLost
		}
		if _, err := r.emitTo(ctx, tx, it.SessionID, api.EventUserInputReminder, api.InputReminder{RequestID: it.ID, SessionID: it.SessionID, RunID: it.RunID,
			Reason: api.ReminderDelegation, Notify: []string{to}, From: p.By, Message: p.Message, ExpiresAt: it.ExpiresAt}, []string{to}); err != nil {
			return err
		}
		r.audit(ctx, tx, it, "delegated", "", map[string]any{"from": p.By, "to": to, "messageLength": utf8.RuneCountInString(p.Message)})
		r.trace(ctx, tx, &store.Run{ID: it.RunID, SessionID: it.SessionID}, "interaction", interactionTrace{RequestID: it.ID, ToolCallID: it.ToolCallID, Action: "delegated"})
		return nil
	})
	if errors.Is(err, errResolveLost) {
		// Resolved, or the caller decided or delegated, since it was read.
		cur, gerr := r.st.InteractionGet(ctx, it.ID)
		if gerr != nil {
			return nil, gerr
		}
		switch cur.Status {
		case string(api.StatusPending):
			return nil, ErrDelegateNotAssignee
		case string(api.StatusExpired):
			return nil, &InteractionExpiredError{Receipt: receiptOf(cur)}
		}
		return nil, &AlreadyResolvedError{Receipt: receiptOf(cur)}
	}
	if err != nil {
		return nil, err
	}
	now2, err := r.assigneesOf(ctx, r.st, it)
	if err != nil {
		return nil, err
	}
	return &api.DelegateResult{RequestID: it.ID, From: r.actor(p.By), To: r.actor(to), Assignees: r.actors(now2)}, nil
}

// clipText shortens s for an error message.
func clipText(s string) string {
	if utf8.RuneCountInString(s) <= 64 {
		return s
	}
	return string([]rune(s)[:64]) + "…"
}
