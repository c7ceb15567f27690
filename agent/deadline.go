package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// DefaultDeadlinePoll bounds how long the deadline scheduler sleeps without
// a wake-up (Options.DeadlinePoll).
const DefaultDeadlinePoll = time.Minute

// Timeout actions (docs/design.md §16 "Deadlines"): what a question's
// timeout does. The first four are a route's onTimeout; TimeoutExpire is
// the timeout of a question no route takes (--interaction-ttl): the
// question expires and its run ends expired.
const (
	TimeoutReject  = "reject"
	TimeoutApprove = "approve"
	TimeoutCancel  = "cancel"
	TimeoutDefault = "default"
	TimeoutExpire  = "expire"
)

// timeoutData is the Data of an interaction's timeout deadline.
type timeoutData struct {
	OnTimeout string `json:"onTimeout"`
}

// escalateData is the Data of an escalate deadline: the assignees it adds.
type escalateData struct {
	To []string `json:"to"`
}

// deadlinePlan is what a question's route says about its due times
// (docs/design.md §16): its timeout (0: Options.InteractionTTL) and what
// the timeout does, the delays of its reminders and its escalation.
type deadlinePlan struct {
	Timeout       time.Duration
	OnTimeout     string
	Remind        []time.Duration
	EscalateAfter time.Duration
	EscalateTo    []string
}

// specs are the deadlines of a question asked at now with the plan, for
// store.InteractionInsertParams: the timeout's data and the others.
func (p deadlinePlan) specs(now time.Time) (json.RawMessage, []store.DeadlineSpec) {
	on := p.OnTimeout
	if on == "" {
		on = TimeoutExpire
	}
	var out []store.DeadlineSpec
	for _, d := range p.Remind {
		out = append(out, store.DeadlineSpec{Kind: store.DeadlineRemind, DueAt: now.Add(d)})
	}
	if len(p.EscalateTo) > 0 {
		out = append(out, store.DeadlineSpec{Kind: store.DeadlineEscalate, DueAt: now.Add(p.EscalateAfter), Data: mustJSON(escalateData{To: p.EscalateTo})})
	}
	return mustJSON(timeoutData{OnTimeout: on}), out
}

// wakeDeadlines tells the scheduler of this process to look at the
// deadlines again (a question was just asked here).
func (r *Runner) wakeDeadlines() {
	select {
	case r.deadlineWake <- struct{}{}:
	default:
	}
}

// runDeadlines is the deadline scheduler (docs/design.md §16 "Deadlines"):
// it fires every due deadline, then sleeps until the earliest one not yet
// fired is due, a question is asked (here, or on any replica of a
// PostgreSQL store: every question writes a feed entry, store.FeedKey), or
// DeadlinePoll passed, whichever comes first. Each deadline fires through
// a conditional write, so of the replicas that all run this loop one fires
// it, once, and a restart finds whatever was not fired still due.
func (r *Runner) runDeadlines(ctx context.Context) {
	wake, unsub := r.st.Subscribe(store.FeedKey)
	defer unsub()
	for {
		r.fireDeadlines(ctx)
		wait := r.opts.DeadlinePoll
		if next, err := r.st.DeadlineNextDue(ctx); err == nil && !next.IsZero() {
			wait = min(wait, max(next.Sub(r.now()), time.Millisecond))
		} else if err != nil && ctx.Err() == nil {
			r.log.Error("deadlines: next due", "err", err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-r.deadlineWake:
		case <-t.C:
		}
		t.Stop()
	}
}

// fireDeadlines fires every deadline due now, earliest first.
func (r *Runner) fireDeadlines(ctx context.Context) {
	for ctx.Err() == nil {
		due, err := r.st.DeadlineListDue(ctx, &store.DeadlineListDueParams{Now: r.now(), Limit: 100})
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("deadlines: list due", "err", err)
			}
			return
		}
		for _, d := range due {
			if err := r.fireDeadline(ctx, d); err != nil && ctx.Err() == nil {
				r.log.Error("deadlines: fire", "requestId", d.RequestID, "kind", d.Kind, "err", err)
				// Left due: the next pass tries again, and the loop does
				// not spin on it now.
				return
			}
		}
		if len(due) < 100 {
			return
		}
	}
}

// errDeadlineLost rolls back a deadline's transaction whose conditional
// write lost (fired elsewhere, or its question resolved).
var errDeadlineLost = errors.New("agent: the deadline fired elsewhere or its question was resolved")

// fireDeadline fires one due deadline d. A deadline of a question no
// longer pending is only closed.
func (r *Runner) fireDeadline(ctx context.Context, d *store.Deadline) error {
	it, err := r.st.InteractionGet(ctx, d.RequestID)
	if errors.Is(err, store.ErrNotFound) {
		return r.closeDeadline(ctx, d)
	}
	if err != nil {
		return err
	}
	if it.Status != string(api.StatusPending) {
		return r.closeDeadline(ctx, d)
	}
	switch d.Kind {
	case store.DeadlineTimeout:
		var td timeoutData
		_ = json.Unmarshal(d.Data, &td)
		if err := r.timeout(ctx, it, td.OnTimeout); err != nil {
			return err
		}
		return r.closeDeadline(ctx, d)
	case store.DeadlineRemind, store.DeadlineEscalate:
		return r.notifyDeadline(ctx, it, d)
	}
	r.log.Warn("deadlines: unknown kind, closed", "requestId", d.RequestID, "kind", d.Kind)
	return r.closeDeadline(ctx, d)
}

// closeDeadline marks d done without acting: its question was resolved
// (or d is the timeout that just resolved it).
func (r *Runner) closeDeadline(ctx context.Context, d *store.Deadline) error {
	_, err := r.st.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: d.RequestID, Seq: d.Seq, Now: r.now()})
	return err
}

// notifyDeadline fires a reminder or an escalation of pending question it:
// in one transaction, the conditional write that fires d (only while the
// question is pending), an escalation's new assignees, the
// user_input_reminder event (to the feed and webhooks, which notify the
// people it names) and the audit and trace entries. A deadline that lost
// (fired by another process, or its question was answered meanwhile)
// writes nothing.
func (r *Runner) notifyDeadline(ctx context.Context, it *store.Interaction, d *store.Deadline) error {
	now := r.now()
	reason, action := api.ReminderReminder, "reminded"
	var notify []string
	if d.Kind == store.DeadlineEscalate {
		var ed escalateData
		_ = json.Unmarshal(d.Data, &ed)
		reason, action = api.ReminderEscalation, "escalated"
		var err error
		if notify, err = r.escalationTargets(ctx, it, ed.To); err != nil {
			return err
		}
	} else {
		var err error
		if notify, err = r.assigneesOf(ctx, it); err != nil {
			return err
		}
	}
	err := r.st.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: d.RequestID, Seq: d.Seq, Pending: true, Now: now})
		if err != nil {
			return err
		}
		if !won {
			return errDeadlineLost
		}
		if d.Kind == store.DeadlineEscalate {
			if err := r.addAssignees(ctx, tx, it, notify); err != nil {
				return err
			}
		}
		if _, err := r.emit(ctx, tx, it.SessionID, api.EventUserInputReminder, api.InputReminder{RequestID: it.ID, SessionID: it.SessionID, RunID: it.RunID,
			Reason: reason, Notify: notify, ExpiresAt: it.ExpiresAt}); err != nil {
			return err
		}
		r.audit(ctx, tx, it, action, "", map[string]any{"notify": notify, "dueAt": d.DueAt})
		r.trace(ctx, tx, &store.Run{ID: it.RunID, SessionID: it.SessionID}, "interaction", interactionTrace{RequestID: it.ID, ToolCallID: it.ToolCallID, Action: action})
		return nil
	})
	if errors.Is(err, errDeadlineLost) {
		return nil
	}
	return err
}

// assigneesOf are the people who may answer pending question it now: the
// session's owner.
func (r *Runner) assigneesOf(ctx context.Context, it *store.Interaction) ([]string, error) {
	ss, err := r.st.SessionGet(ctx, it.SessionID)
	if err != nil {
		return nil, err
	}
	return []string{ss.Owner}, nil
}

// escalationTargets are the people an escalation of it to "to" (person
// ids, group:<id>, owner) names.
func (r *Runner) escalationTargets(ctx context.Context, it *store.Interaction, to []string) ([]string, error) {
	var out []string
	for _, a := range to {
		if a == "owner" {
			own, err := r.assigneesOf(ctx, it)
			if err != nil {
				return nil, err
			}
			out = append(out, own...)
			continue
		}
		out = append(out, a)
	}
	return out, nil
}

// addAssignees lets people answer question it from now on, in tx.
func (r *Runner) addAssignees(ctx context.Context, tx store.Tx, it *store.Interaction, people []string) error {
	return nil
}

// timeout resolves pending question it when its timeout came due, with
// the action its route names (docs/design.md §16). A question resolved
// meanwhile is left as it is.
func (r *Runner) timeout(ctx context.Context, it *store.Interaction, action string) error {
	_, _, err := r.resolve(ctx, it, api.StatusExpired, api.Answer{}, nil)
	return err
}

// deadlinePlan is the deadline plan of a question of kind tool (the
// interaction's Tool) that run asks with the stored request: its route's,
// or with no route the default (timeout Options.InteractionTTL, the run
// expires).
func (r *Runner) deadlinePlan(run *store.Run, tool string, request json.RawMessage) deadlinePlan {
	return deadlinePlan{}
}
