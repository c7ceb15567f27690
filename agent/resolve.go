package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// resolved is what resolveInteraction committed: the receipt, the Seq of
// the user_input_resolved event and, for a resolution that resumed the run
// here, the run's state as committed (the driver continues from it).
type resolved struct {
	receipt *api.Receipt
	seq     int64
	state   *state
	// resumed: the resolution resumed the run (false for one of several
	// questions while others are pending, and for every other effect);
	// waiting: it would have resumed the run, which waits on others.
	resumed, waiting bool
	// last is the Seq of the last event the resolution appended.
	last int64
}

// resolveInteraction is THE resolve transition (docs/design.md §15): every
// surface that resolves an interaction — an answer through Resolve
// (continue, AG-UI, /mcp, the inbox, later action links and Slack), the
// expiry sweep, a cancel, a deadline's timeout (res.by "timeout"), an MCP
// server's session lost to a restart — comes here with a resolution its
// caller validated (kind.validate for a person's answer, closingResolution
// otherwise). The interaction's kind decides what is written
// (kind.apply); one transaction writes the run's row first (resume it, or
// end it for a cancel or an expiry; an in-call elicitation leaves it
// running), then the one conditional write of the interaction (WHERE
// status = 'pending': exactly once, whoever races), the receipt
// (people.NewReceipt), the user_input_resolved event, the ToolResult of
// the call that waits when the kind writes one, the audit and trace
// entries. After the commit the waiter gets the outcome: the run is driven
// from the committed state, or the MCP server's call hears the answer.
//
// in.run, when set, is the run as read before (a waiting run's row does
// not change until it is resumed or ended, so it is the state a resume
// commits); in.msgs, when set, the session's messages. Errors:
// errResolveLost (someone else resolved it first, or the run ended
// meanwhile: nothing written), errNotWaiting (an answer whose run is no
// longer waiting for it: nothing written). A cancel or an expiry of a
// question whose run already ended only closes the question.
func (r *Runner) resolveInteraction(ctx context.Context, in *answering, res resolution) (*resolved, error) {
	it := in.it
	out := in.kind.apply(in, res)
	var parent string
	var idx int
	if out.result != nil {
		// The assistant message holding the call is immutable once stored, so it
		// is found before the transaction, outside the single writer's lock.
		var err error
		if parent, idx, err = r.findCall(ctx, in, it.ToolCallID); err != nil {
			return nil, err
		}
	}
	now := r.now()
	var done resolved
	var stored *store.Message
	var resumed *store.Run
	var firstEv, lastEv *store.Event
	// sure: the answer is expected to resume its run (the run was read
	// waiting and, when the messages were read, this is its one call
	// without a result), so the resume is a MustWin write; should it
	// lose, the transaction runs again without (docs/design.md §34).
	sure := out.effect == effResume && (in.run == nil || in.run.Status == store.RunWaitingInput) &&
		(in.msgs == nil || onlyMissing(in.msgs, it.RunID, it.ToolCallID))
	write := func(tx store.Tx) error {
		done, stored, resumed = resolved{}, nil, nil
		firstEv, lastEv = nil, nil
		// consume writes the question's own rows once the run's row is
		// written (every transaction of a run writes the run's row first,
		// so two of them wait for each other in one order).
		consume := func(run *store.Run) error {
			rc := r.receipt(ctx, in, res, out, now)
			won, err := tx.InteractionResolve(ctx, &store.InteractionResolveParams{ID: it.ID, SessionID: it.SessionID, Status: string(res.status), Answer: out.stored, Now: now,
				ReceiptJWS: rc.Signature, DecidedBy: it.DecidedBy, MustWin: true})
			if err != nil {
				return err
			}
			if !won {
				return errResolveLost
			}
			var rows store.RowsInsertParams
			done.receipt = r.resolvedRows(&rows, run, in, res, out, rc)
			// The ToolResult rides in the same call; for a run that
			// ended already, its call may have one (finish wrote it).
			late := out.result != nil && run.Status.Terminal()
			if out.result != nil && !late {
				m, tr, ev := r.resultRows(run, parent, idx, model.ToolCall{ID: it.ToolCallID, Name: out.resultName}, *out.result)
				rows.Messages = append(rows.Messages, m)
				rows.Events = append(rows.Events, ev)
				rows.Traces = append(rows.Traces, nil) // tr goes first, in place
				copy(rows.Traces[1:], rows.Traces)
				rows.Traces[0] = tr
			}
			ins, err := tx.RowsInsert(ctx, &rows)
			if err != nil {
				return err
			}
			// The numbers are read once the transaction is committed: a
			// store may number the events at the commit (a MustWin resume
			// on PostgreSQL, docs/design.md §34).
			firstEv, lastEv = ins.Events[0], ins.Events[len(ins.Events)-1]
			if len(ins.Messages) > 0 {
				stored = ins.Messages[0]
			}
			if late {
				_, err = r.writeResult(ctx, tx, run, parent, idx, model.ToolCall{ID: it.ToolCallID, Name: out.resultName}, *out.result)
				if errors.Is(err, store.ErrDuplicate) {
					err = nil
				}
			}
			return err
		}
		switch out.effect {
		case effNone:
			return consume(&store.Run{ID: it.RunID, SessionID: it.SessionID})
		case effResume:
			// The run resumes on the last of its questions
			// (docs/design.md §32): when another is still pending, the
			// run's row is held (written, left waiting) so that the
			// resolutions of one run take turns, and the last of them
			// resumes it.
			until := now.Add(r.opts.LeaseDuration)
			// The params and the one id they resolve, in one allocation.
			rp := &struct {
				store.RunResumeParams
				ids [1]string
			}{ids: [1]string{it.ID}}
			rp.RunResumeParams = store.RunResumeParams{ID: it.RunID, LeaseOwner: r.opts.InstanceID, LeaseUntil: until, Now: now, Settled: true, Resolving: rp.ids[:], MustWin: sure}
			resume := &rp.RunResumeParams
			ok, err := tx.RunResume(ctx, resume)
			if err != nil {
				return err
			}
			held := false
			if !ok {
				if held, err = tx.RunHold(ctx, &store.RunHoldParams{ID: it.RunID, Now: now}); err != nil {
					return err
				}
				if !held {
					return errNotWaiting
				}
			}
			run := &store.Run{ID: it.RunID, SessionID: it.SessionID, Status: store.RunWaitingInput}
			if in.run != nil {
				run = new(store.Run)
				*run = *in.run
			}
			if ok {
				run.Status, run.LeaseOwner, run.LeaseUntil, run.UpdatedAt = store.RunRunning, r.opts.InstanceID, until, now
			}
			// RunResume set the session running too.
			if err := consume(run); err != nil {
				return err
			}
			if held {
				resume.Resolving, resume.MustWin = nil, false
				if ok, err = tx.RunResume(ctx, resume); err != nil || !ok {
					return err
				}
				run.Status, run.LeaseOwner, run.LeaseUntil, run.UpdatedAt = store.RunRunning, r.opts.InstanceID, until, now
			}
			resumed = run
			return nil
		}
		run, err := tx.RunGet(ctx, it.RunID)
		if err != nil {
			return err
		}
		switch {
		case out.effect == effInCall:
			if run.Status != store.RunRunning {
				return errNotWaiting
			}
			if err := consume(run); err != nil {
				return err
			}
			return tx.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: run.SessionID, Status: string(store.RunRunning), Now: now})
		case run.Status.Terminal():
			return consume(run)
		}
		to := store.RunCancelled
		if res.status == api.StatusExpired {
			to = store.RunExpired
		}
		won, err := r.finish(endedBy(ctx, res), tx, run, []store.RunStatus{store.RunWaitingInput, store.RunRunning}, to, nil, func() error { return consume(run) })
		if err == nil && !won {
			err = errResolveLost
		}
		return err
	}
	err := r.st.InTx(ctx, write)
	if sure && errors.Is(err, store.ErrLost) {
		// The resume or the resolution lost: the resume's loss is not
		// the answer's (the run may hold for another question), so the
		// transaction runs again with a resume that may lose.
		sure = false
		err = r.st.InTx(ctx, write)
	}
	if errors.Is(err, store.ErrLost) {
		// The resolution lost after all (MustWin: the store failed the
		// transaction instead of reporting it).
		err = errResolveLost
	}
	if err != nil {
		return nil, err
	}
	if firstEv != nil {
		done.seq, done.last = firstEv.Seq, lastEv.Seq
	}
	done.resumed = resumed != nil
	done.waiting = out.effect == effResume && resumed == nil
	switch {
	case out.effect == effResume && resumed == nil:
		// One of several questions: the run waits on the others.
		r.fault("answer_committed")
	case out.effect == effResume:
		r.fault("answer_committed")
		if in.msgs != nil && onlyMissing(in.msgs, it.RunID, it.ToolCallID) {
			// The messages as read, and this call's result, are the
			// session as committed; with other calls of the message
			// waiting too, another question's result may have been
			// committed since the read, so the driver reads them.
			msgs := in.msgs[:len(in.msgs):len(in.msgs)]
			if stored != nil {
				msgs = append(msgs, stored)
			}
			done.state = &state{run: resumed, msgs: msgs}
		}
		st := done.state
		if st != nil {
			copied := *st.run
			st = &state{run: &copied, msgs: st.msgs}
		}
		r.driveFrom(it.RunID, st)
	case out.effect == effInCall:
		r.fault("answer_committed")
		// The call waiting here hears the answer; one waiting in another
		// live process reads it from the store (awaitElicitation).
		if ch := r.waiter(it.ID); ch != nil {
			a, _ := res.answer.(elicit.Answer)
			select {
			case ch <- a:
			default:
			}
		}
	case out.effect == effEnd:
		if ch := r.waiter(it.ID); ch != nil {
			// The call waiting here tells its server: cancel.
			select {
			case ch <- elicit.Answer{Cancelled: true}:
			default:
			}
		}
	}
	return &done, nil
}

// onlyMissing reports whether toolCallID is the one call of run's last
// assistant message in msgs that has no ToolResult.
func onlyMissing(msgs []*store.Message, runID, toolCallID string) bool {
	_, missing := missingCalls(msgs, runID)
	return len(missing) == 1 && missing[0].call.ID == toolCallID
}

// resolvedRows adds to rows what every resolution of in writes beside its
// conditional write (resolveInteraction's, or finish's for the questions a
// run left open): the user_input_resolved event with rc, the receipt
// (Runner.receipt), the trace and the audit entries (the audit entry
// carries the receipt's signature). It returns rc.
func (r *Runner) resolvedRows(rows *store.RowsInsertParams, run *store.Run, in *answering, res resolution, out outcome, rc *api.Receipt) *api.Receipt {
	rows.Events = append(rows.Events, &store.EventAppendParams{SessionID: in.it.SessionID, Name: api.EventUserInputResolved, Data: mustJSON(rc), Now: r.now()})
	rows.Traces = append(rows.Traces, r.traceRow(run, "interaction", out.trace))
	rows.Audits = append(rows.Audits, r.auditRow(in.it, string(res.status), res.reason, withReceipt(out.summary, rc.Signature)))
	return rc
}

// errResolveLost rolls back a resolve whose conditional write lost.
var errResolveLost = errors.New("agent: the interaction was resolved by someone else")

// errNotWaiting: an answer came for a question whose run is not waiting for
// it (the run ended). Nothing was written.
var errNotWaiting = errors.New("agent: the question's run is not waiting for an answer")

// closedResult is the ToolResult of a question closed without an answer.
func closedResult(p *api.Prompt, status api.Status) api.ToolResult {
	if p.Tool == api.ToolApproval {
		if status == api.StatusExpired {
			return approval.ExpiredResult(p)
		}
		return approval.CancelledResult(p)
	}
	if status == api.StatusExpired {
		return askuser.ExpiredResult(p)
	}
	return askuser.CancelledResult(p)
}

// finish ends a run in status to (conditionally from one of from), in tx.
// Everything the run left open is closed in the same transaction: every
// question still pending is resolved (cancelled, or expired when the run
// expires) with its receipt, ToolResult, audit and trace entries, and every
// other tool call of the run that has no ToolResult yet gets one saying it
// was not run (or, when its tool started, that it was interrupted and may
// have taken effect), so the transcript stays valid for the next run's
// model calls.
// errEv, when not nil, is emitted before done. extra, when not nil, writes
// the rows of whatever ended the run (a question's own resolution) right
// after the run's row; its error rolls the transaction back.
func (r *Runner) finish(ctx context.Context, tx store.Tx, run *store.Run, from []store.RunStatus, to store.RunStatus, errEv *api.ErrorEvent, extra func() error) (bool, error) {
	return r.finishRun(ctx, tx, run, &store.RunFinishParams{ID: run.ID, From: from, To: to, Now: r.now()}, errEv, extra)
}

// finishRun is finish with the run's row written as p says (p.Error is
// set from errEv).
func (r *Runner) finishRun(ctx context.Context, tx store.Tx, run *store.Run, p *store.RunFinishParams, errEv *api.ErrorEvent, extra func() error) (bool, error) {
	now, to := p.Now, p.To
	if errEv != nil {
		p.Error = encodeRunError(errEv)
	}
	won, err := tx.RunFinish(ctx, p)
	if err != nil || !won {
		return won, err
	}
	if extra != nil {
		if err := extra(); err != nil {
			return false, err
		}
	}
	// A run completes on an assistant message without tool calls while it
	// is running, and a running run has no pending question (the pause is
	// conditional on it): skip reading the session inside the writer's
	// transaction.
	var msgs []*store.Message
	open := map[string]*store.Interaction{}
	closeAs := api.StatusCancelled
	if to == store.RunExpired {
		closeAs = api.StatusExpired
	}
	if to != store.RunCompleted {
		ans := api.Answer{Selections: []string{}, Cancelled: true}
		its, err := tx.InteractionResolveRun(ctx, &store.InteractionResolveRunParams{SessionID: run.SessionID, RunID: run.ID,
			Status: string(closeAs), Answer: mustJSON(ans), Now: now})
		if err != nil {
			return false, err
		}
		for _, it := range its {
			open[it.ToolCallID] = it
		}
		if msgs, err = tx.MessageList(ctx, run.SessionID); err != nil {
			return false, err
		}
	}
	if last, missing := missingCalls(msgs, run.ID); last != nil {
		var started map[string]bool
		if len(missing) > 0 {
			if started, err = startedCalls(ctx, tx, run); err != nil {
				return false, err
			}
		}
		for _, mc := range missing {
			res := endedResult(mc.call.Name, to, started[mc.call.ID])
			if it := open[mc.call.ID]; it != nil {
				delete(open, mc.call.ID)
				if res, err = r.closed(ctx, tx, run, it, closeAs); err != nil {
					return false, err
				}
			}
			if _, err := r.writeResult(ctx, tx, run, last.ID, mc.index, mc.call, res); err != nil {
				return false, err
			}
		}
	}
	for _, it := range open {
		// A question whose call already has a result: close it all the same.
		if _, err := r.closed(ctx, tx, run, it, closeAs); err != nil {
			return false, err
		}
	}
	if errEv != nil {
		errEv.RunID = run.ID
		if _, err := r.emit(ctx, tx, run.SessionID, api.EventError, errEv); err != nil {
			return false, err
		}
	}
	if _, err := r.emit(ctx, tx, run.SessionID, api.EventDone, api.DoneEvent{RunID: run.ID, Status: api.RunStatus(to)}); err != nil {
		return false, err
	}
	// RunFinish set the session's status.
	r.info(&runEndedSite, "run ended", slog.String("sessionId", run.SessionID), slog.String("runId", run.ID), slog.String("status", string(to)))
	return true, nil
}

// closed writes the rows of a question that finish closed (it, as
// InteractionResolveRun returned it, resolved as status) through its kind,
// as resolveInteraction writes any resolution, and returns the ToolResult
// its call gets.
func (r *Runner) closed(ctx context.Context, tx store.Tx, run *store.Run, it *store.Interaction, status api.Status) (api.ToolResult, error) {
	in, _ := newAnswering(it)
	res := closingResolution(status, api.Answer{Selections: []string{}, Cancelled: true})
	out := in.kind.apply(in, res)
	rc := r.receipt(ctx, in, res, out, it.ResolvedAt)
	if rc.Signature != "" {
		// The row was closed by InteractionResolveRun, before its
		// receipt existed: its signature is stored now, in the same
		// transaction.
		if err := tx.InteractionSign(ctx, &store.InteractionSignParams{ID: it.ID, ReceiptJWS: rc.Signature}); err != nil {
			return api.ToolResult{}, err
		}
	}
	var rows store.RowsInsertParams
	r.resolvedRows(&rows, run, in, res, out, rc)
	if _, err := tx.RowsInsert(ctx, &rows); err != nil {
		return api.ToolResult{}, err
	}
	return closedResult(&in.req.Prompt, status), nil
}

func (r *Runner) audit(ctx context.Context, ex store.Executor, it *store.Interaction, action, reason string, summary any) {
	if err := ex.AuditInsert(ctx, r.auditRow(it, action, reason, summary)); err != nil {
		r.log.Error("audit insert", "err", err)
	}
}

// runEndedSite and interactionSite are the call sites of the "run ended"
// and "interaction" log lines.
var runEndedSite, interactionSite logSite

// auditRow is the audit entry of interaction it (docs/design.md §5), also
// written to the log.
func (r *Runner) auditRow(it *store.Interaction, action, reason string, summary any) *store.AuditInsertParams {
	var sum json.RawMessage
	if summary != nil {
		sum, _ = json.Marshal(summary)
	}
	r.info(&interactionSite, "interaction", slog.String("sessionId", it.SessionID), slog.String("requestId", it.ID),
		slog.String("toolCallId", it.ToolCallID), slog.String("runId", it.RunID), slog.String("action", action), slog.String("reason", reason),
		slog.Any("summary", json.RawMessage(sum)))
	return &store.AuditInsertParams{SessionID: it.SessionID, RequestID: it.ID, ToolCallID: it.ToolCallID, RunID: it.RunID,
		Action: action, Reason: reason, Summary: sum, Now: r.now()}
}

func (r *Runner) trace(ctx context.Context, ex store.Executor, run *store.Run, kind string, data any) {
	if err := ex.TraceInsert(ctx, r.traceRow(run, kind, data)); err != nil {
		r.log.Error("trace insert", "err", err)
	}
}

// traceRow is a trace entry of run.
func (r *Runner) traceRow(run *store.Run, kind string, data any) *store.TraceInsertParams {
	return &store.TraceInsertParams{SessionID: run.SessionID, RunID: run.ID, Kind: kind, Data: mustJSON(data), Now: r.now()}
}

// findCall finds the assistant message holding toolCallID and the call's
// index, in in.msgs when they were read (else it reads them, and keeps
// them in in).
func (r *Runner) findCall(ctx context.Context, in *answering, toolCallID string) (string, int, error) {
	if in.msgs == nil {
		msgs, err := r.st.MessageList(ctx, in.it.SessionID)
		if err != nil {
			return "", 0, err
		}
		in.msgs = msgs
	}
	msgs := in.msgs
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" {
			continue
		}
		for j, c := range storedCalls(m) {
			if c.ID == toolCallID {
				return m.ID, j, nil
			}
		}
	}
	return "", 0, fmt.Errorf("agent: no assistant message holds tool call %s", toolCallID)
}

type pendingCall struct {
	index int
	call  model.ToolCall
}

// missingCalls returns the run's last assistant message and those of its
// tool calls that have no ToolResult yet, in call order.
func missingCalls(msgs []*store.Message, runID string) (*store.Message, []pendingCall) {
	var last *store.Message
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].RunID == runID && msgs[i].Role == "assistant" {
			last = msgs[i]
			break
		}
	}
	if last == nil {
		return nil, nil
	}
	calls := storedCalls(last)
	if len(calls) == 0 {
		return last, nil
	}
	done := map[string]bool{}
	for _, m := range msgs {
		if m.Role == "tool" && m.ParentID == last.ID {
			done[m.ToolCallID] = true
		}
	}
	var out []pendingCall
	for i, c := range calls {
		if !done[c.ID] {
			out = append(out, pendingCall{index: i, call: model.ToolCall(c)})
		}
	}
	return last, out
}
