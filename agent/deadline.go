package agent

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/elicit"
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

// runDeadlines is the deadline scheduler (docs/design.md §16 "Deadlines"):
// it fires every due deadline, then sleeps until the earliest one not yet
// fired is due, a question is asked (here, or on any replica of a
// PostgreSQL store: the commit that inserts a question's deadlines wakes
// store.DeadlineKey), or DeadlinePoll passed, whichever comes first. A
// wake by a new question reads only the earliest due time and fires only
// when something is due by then. Each deadline fires through a
// conditional write, so of the replicas that all run this loop one fires
// it, once, and a restart finds whatever was not fired still due.
func (r *Runner) runDeadlines(ctx context.Context) {
	wake, unsub := r.st.Subscribe(store.DeadlineKey)
	defer unsub()
	fire := true
	for {
		failed := false
		if fire {
			failed = r.fireDeadlines(ctx)
		}
		wait := r.opts.DeadlinePoll
		next, err := r.st.DeadlineNextDue(ctx)
		if err != nil && ctx.Err() == nil {
			r.log.Error("deadlines: next due", "err", err)
		}
		if err == nil && !next.IsZero() {
			if !fire && !next.After(r.now()) {
				// A new question's deadline is already due: fire now.
				fire = true
				continue
			}
			wait = min(wait, max(next.Sub(r.now()), time.Millisecond))
		}
		if failed {
			// A deadline that could not fire stays due: try it again in a
			// second, not in a loop.
			wait = max(wait, deadlineRetry)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			fire = false
		case <-t.C:
			fire = true
		}
		t.Stop()
	}
}

// deadlineRetry is how soon the scheduler tries a deadline again that
// failed to fire (a database error).
const deadlineRetry = time.Second

// fireDeadlines fires every deadline due now, earliest first, and reports
// whether one failed (it stays due; the others still fire).
func (r *Runner) fireDeadlines(ctx context.Context) (failed bool) {
	for ctx.Err() == nil {
		due, err := r.st.DeadlineListDue(ctx, &store.DeadlineListDueParams{Now: r.now(), Limit: 100})
		if err != nil {
			if ctx.Err() == nil {
				r.log.Error("deadlines: list due", "err", err)
			}
			return true
		}
		for _, d := range due {
			if err := r.fireDeadline(ctx, d); err != nil && ctx.Err() == nil {
				r.log.Error("deadlines: fire", "requestId", d.RequestID, "kind", d.Kind, "err", err)
				failed = true
			}
		}
		if len(due) < 100 || failed {
			return failed
		}
	}
	return failed
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
// user_input_reminder event (to the feeds of the people it names, the
// owner's and webhooks, which notify them) and the audit and trace
// entries. A deadline that lost (fired by another process, or its question
// was answered meanwhile) writes nothing.
func (r *Runner) notifyDeadline(ctx context.Context, it *store.Interaction, d *store.Deadline) error {
	now := r.now()
	reason, action := api.ReminderReminder, "reminded"
	assignees, err := r.assigneesOf(ctx, r.st, it)
	if err != nil {
		return err
	}
	notify := assignees
	var added []string
	if d.Kind == store.DeadlineEscalate {
		reason, action = api.ReminderEscalation, "escalated"
		var ed escalateData
		_ = json.Unmarshal(d.Data, &ed)
		owner := ""
		if rt := routeOf(it); rt != nil {
			owner = rt.Owner
		}
		notify = nil
		for _, p := range r.expand(ed.To, owner) {
			if p != "" && !slices.Contains(assignees, p) {
				notify = append(notify, p)
			}
		}
		added = notify
	}
	if notify == nil {
		notify = []string{}
	}
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		won, err := tx.DeadlineFire(ctx, &store.DeadlineFireParams{RequestID: d.RequestID, Seq: d.Seq, Pending: true, Now: now})
		if err != nil {
			return err
		}
		if !won {
			return errDeadlineLost
		}
		if len(added) > 0 {
			if err := tx.AssigneeAdd(ctx, &store.AssigneeAddParams{RequestID: it.ID, Persons: added, Via: store.AssigneeEscalation, Now: now}); err != nil {
				return err
			}
		}
		if _, err := r.emitTo(ctx, tx, it.SessionID, api.EventUserInputReminder, api.InputReminder{RequestID: it.ID, SessionID: it.SessionID, RunID: it.RunID,
			Reason: reason, Notify: notify, ExpiresAt: it.ExpiresAt}, notify); err != nil {
			return err
		}
		r.audit(ctx, tx, it, action, "", map[string]any{"notify": notify, "dueAt": d.DueAt})
		r.trace(ctx, tx, &store.Run{ID: it.RunID, SessionID: it.SessionID}, "interaction", interactionTrace{RequestID: it.ID, ToolCallID: it.ToolCallID, Action: action})
		return nil
	})
	if errors.Is(err, errDeadlineLost) {
		return nil
	}
	if err == nil {
		r.fault("deadline_committed")
	}
	return err
}

// ByTimeout is the principal of a resolution by a deadline's timeout
// (docs/design.md §16 "Deadlines": receipts say by timeout).
const ByTimeout = "timeout"

// timeout resolves pending question it when its timeout came due, with
// action (its route's onTimeout, TimeoutExpire without a route), through
// the resolve transition. A question resolved meanwhile is left as it is.
func (r *Runner) timeout(ctx context.Context, it *store.Interaction, action string) error {
	in, _ := newAnswering(it)
	run, ok := r.resumable(ctx, it)
	if !ok {
		// Nothing can go on from this question (its run ended, or its
		// agent is gone): it is closed as an expiry.
		action = TimeoutExpire
	}
	in.run = run
	_, err := r.resolveInteraction(ctx, in, timeoutResolution(in, action))
	if errors.Is(err, errNotWaiting) && action != TimeoutExpire {
		// The run stopped waiting between the read and the write.
		in.run = nil
		_, err = r.resolveInteraction(ctx, in, timeoutResolution(in, TimeoutExpire))
	}
	if errors.Is(err, errResolveLost) || errors.Is(err, errNotWaiting) {
		return nil
	}
	return err
}

// storedTimeout is the action stored with question it's timeout deadline
// (TimeoutExpire when there is none).
func (r *Runner) storedTimeout(ctx context.Context, it *store.Interaction) (string, error) {
	ds, err := r.st.DeadlineList(ctx, it.ID)
	if err != nil {
		return "", err
	}
	for _, d := range ds {
		if d.Kind == store.DeadlineTimeout {
			var td timeoutData
			_ = json.Unmarshal(d.Data, &td)
			return td.OnTimeout, nil
		}
	}
	return TimeoutExpire, nil
}

// timeoutResolution is what a timeout with action does to question in
// (docs/design.md §16): status expired, by timeout, and
//   - an approval: approve runs the tool once, reject (and default: an
//     approval has no default) declines it, and the run goes on;
//   - an ask (ask_user, AskUser, a host's question): default answers with
//     its recommended options (approve is read as default), reject (or a
//     question without recommended options) tells the model nobody
//     answered, and the run goes on;
//   - an elicitation: every action but cancel declines it for the server;
//   - cancel, and the expiry of a question no route takes, end the run
//     (expired) as --interaction-ttl always did.
func timeoutResolution(in *answering, action string) resolution {
	expire := closingResolution(api.StatusExpired, nil)
	expire.by = ByTimeout
	if action == TimeoutCancel {
		expire.timedOut = api.DecisionCancel
		if _, ok := in.kind.(approvalKind); ok {
			expire.answer = approval.Answer{Decision: api.DecisionCancel, Cancelled: true}
		}
	}
	switch action {
	case TimeoutReject, TimeoutApprove, TimeoutDefault:
	default:
		return expire
	}
	res := resolution{status: api.StatusExpired, by: ByTimeout}
	switch in.kind.(type) {
	case approvalKind:
		res.timedOut = api.DecisionReject
		if action == TimeoutApprove {
			res.timedOut = api.DecisionApprove
		}
		a := approval.Answer{Decision: res.timedOut}
		if a.Decision == api.DecisionReject {
			a.Message = "no answer before the timeout"
		}
		res.answer = a
	case elicitKind:
		res.timedOut, res.answer = api.DecisionDecline, elicit.Answer{Decision: api.DecisionDecline}
	default:
		ans := api.Answer{Selections: []string{}}
		res.timedOut = api.DecisionReject
		if action != TimeoutReject {
			if def, ok := recommendedAnswer(&in.req.Prompt); ok {
				ans, res.timedOut = def, api.DecisionDefault
			}
		}
		res.answer = ans
	}
	return res
}

// recommendedAnswer is a question's own default answer: its recommended
// options (ask_user: single takes the first, multiple and toggle every
// one; AskUser: each question's option whose label ends with
// "(Recommended)"). ok is false when the question has none to give.
func recommendedAnswer(p *api.Prompt) (api.Answer, bool) {
	ans := api.Answer{Selections: []string{}}
	switch p.Mode {
	case api.ModeSingle, api.ModeMultiple, api.ModeToggle:
		for _, o := range p.Options {
			if o.Recommended {
				ans.Selections = append(ans.Selections, o.ID)
				if p.Mode == api.ModeSingle {
					break
				}
			}
		}
		return ans, len(ans.Selections) > 0
	case api.ModeQuestions:
		for _, q := range p.Questions {
			pick := ""
			for _, o := range q.Options {
				if strings.HasSuffix(strings.TrimSpace(o.Label), "(Recommended)") {
					pick = o.Label
					break
				}
			}
			if pick == "" {
				return api.Answer{}, false
			}
			ans.Answers = append(ans.Answers, api.QuestionAnswer{Question: q.Question, Selected: []string{pick}})
		}
		return ans, len(ans.Answers) > 0
	}
	return ans, false
}

// deadlines is the deadline plan of a question the assignment a assigned
// (docs/design.md §16): its route's reminders, escalation and onTimeout
// (default when the route names none); a question no route took (a nil
// assignment) has only its timeout, at Options.InteractionTTL, which
// expires it and ends its run.
func (a *assignment) deadlines() deadlinePlan {
	if a == nil {
		return deadlinePlan{OnTimeout: TimeoutExpire}
	}
	rt := a.route
	p := deadlinePlan{Timeout: rt.Timeout, OnTimeout: rt.OnTimeout, Remind: rt.Remind}
	if p.OnTimeout == "" {
		p.OnTimeout = TimeoutDefault
	}
	if e := rt.Escalate; e != nil {
		p.EscalateAfter, p.EscalateTo = e.After, e.To
	}
	return p
}
