package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
)

// resolve consumes a pending interaction once (one conditional write) and, in
// the same transaction, writes the ToolResult of the original tool call, the
// user_input_resolved and tool_result events and the audit entry. An answer
// moves the run back to running (and this process drives it); a cancel or an
// expiry ends the run with no further model call. It returns a nil receipt
// when the write lost (already resolved, or expired for an answer), and the
// sequence number of the user_input_resolved event. An answer to a question
// whose run is no longer waiting for it is errNotWaiting and consumes
// nothing. A cancel or an expiry of a question whose run already ended only
// closes the question (its call keeps the result it has), so that no row is
// left that cannot be resolved. An approval (appr: the decision, nil for an
// expiry) is resolved the same way, except that approve and edit write no
// ToolResult: the run's next step runs the tool (docs/design.md §10).
func (r *Runner) resolve(ctx context.Context, it *store.Interaction, status api.Status, ans api.Answer, appr *approvalAnswer) (*api.Receipt, int64, error) {
	req, err := decodeRequest(it)
	if err != nil {
		if status == api.StatusAnswered {
			return nil, 0, err
		}
		// A stored request that no longer decodes is still closed: the
		// sweeper must not fail on it forever.
		req = &api.InputRequest{}
	}
	return r.resolveRequest(ctx, it, req, status, ans, appr)
}

// resolveRequest is resolve with the stored request already decoded (req,
// which it does not change), as Resolve has it after validating the answer.
func (r *Runner) resolveRequest(ctx context.Context, it *store.Interaction, req *api.InputRequest, status api.Status, ans api.Answer, appr *approvalAnswer) (*api.Receipt, int64, error) {
	if ans.Selections == nil {
		ans.Selections = []string{}
	}
	var result api.ToolResult
	switch status {
	case api.StatusAnswered:
		result = askuser.AnsweredResult(&req.Prompt, ans)
	case api.StatusCancelled, api.StatusExpired:
		result = closedResult(&req.Prompt, status)
	default:
		return nil, 0, fmt.Errorf("agent: cannot resolve as %q", status)
	}
	ansJSON, err := json.Marshal(ans)
	if err != nil {
		return nil, 0, err
	}
	withResult := true
	var summary any
	var approvalAns approval.Answer
	if isApproval(req) {
		var res *api.ToolResult
		var sum approval.AuditSummary
		approvalAns, res, sum = approvalOutcome(req, status, appr)
		ansJSON, summary, withResult = mustJSON(approvalAns), sum, res != nil
		if res != nil {
			result = *res
		}
	} else if isElicitation(it) {
		// An elicitation's call gets its result from the tool (or from
		// finish, which closes the run's open calls); the person's
		// answer, if any, goes to the server.
		withResult = false
		summary = elicitSummary(&req.Prompt, elicitMetaOf(it), &elicit.Answer{Cancelled: true})
	} else {
		summary = askuser.Summarize(&req.Prompt, ans)
	}
	// The assistant message holding the call is immutable once stored, so it
	// is found before the transaction, outside the single writer's lock.
	parent, idx, err := findCall(ctx, r.st, it.SessionID, it.ToolCallID)
	if err != nil {
		return nil, 0, err
	}
	now := r.now()
	var rc *api.Receipt
	var seq int64
	err = r.st.InTx(ctx, func(tx store.Tx) error {
		// An answer resumes a paused run: try that first, a conditional
		// write of the run's row, and read the row only when it loses.
		resumed := false
		var run *store.Run
		if status == api.StatusAnswered {
			ok, err := tx.RunResume(ctx, &store.RunResumeParams{ID: it.RunID, LeaseOwner: r.opts.InstanceID, LeaseUntil: now.Add(r.opts.LeaseDuration), Now: now})
			if err != nil {
				return err
			}
			if resumed = ok; ok {
				run = &store.Run{ID: it.RunID, SessionID: it.SessionID, Status: store.RunRunning}
			}
		}
		if run == nil {
			var err error
			if run, err = tx.RunGet(ctx, it.RunID); err != nil {
				return err
			}
		}
		// consume writes the question's own rows; it is called once the
		// run's row is written (every transaction of a run writes the run's
		// row first, so two of them wait for each other in one order).
		consume := func() error {
			won, err := tx.InteractionResolve(ctx, &store.InteractionResolveParams{ID: it.ID, SessionID: it.SessionID, Status: string(status), Answer: ansJSON, Now: now})
			if err != nil {
				return err
			}
			if !won {
				return errResolveLost
			}
			var receiptAns any = ans
			if isApproval(req) {
				receiptAns = approvalAns
			}
			rc = people.NewReceipt(it, status, receiptAns, now)
			ev, err := r.emit(ctx, tx, it.SessionID, api.EventUserInputResolved, rc)
			if err != nil {
				return err
			}
			seq = ev.Seq
			if withResult {
				_, err = r.writeResult(ctx, tx, run, parent, idx, model.ToolCall{ID: it.ToolCallID, Name: resultName(it, req)}, result)
			}
			if run.Status.Terminal() && errors.Is(err, store.ErrDuplicate) {
				err = nil
			}
			if err != nil {
				return err
			}
			r.audit(ctx, tx, it, string(status), "", summary)
			r.trace(ctx, tx, run, "interaction", interactionTrace{RequestID: it.ID, ToolCallID: it.ToolCallID, Action: string(status)})
			return nil
		}
		switch {
		case status == api.StatusAnswered && !resumed:
			return errNotWaiting
		case run.Status.Terminal():
			return consume()
		case resumed:
			if err := consume(); err != nil {
				return err
			}
			return tx.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: run.SessionID, Status: string(store.RunRunning), Now: now})
		}
		to := store.RunCancelled
		if status == api.StatusExpired {
			to = store.RunExpired
		}
		won, err := r.finish(ctx, tx, run, []store.RunStatus{store.RunWaitingInput, store.RunRunning}, to, nil, consume)
		if err == nil && !won {
			err = errResolveLost
		}
		return err
	})
	if errors.Is(err, errResolveLost) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if status == api.StatusAnswered {
		r.fault("answer_committed")
		r.driveRun(it.RunID)
	}
	if ch := r.waiter(it.ID); ch != nil && isElicitation(it) {
		// The call waiting here tells its server: cancel.
		select {
		case ch <- elicit.Answer{Cancelled: true}:
		default:
		}
	}
	return rc, seq, nil
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
	if err := tx.SessionSetStatus(ctx, &store.SessionSetStatusParams{ID: run.SessionID, Status: string(to), Now: now}); err != nil {
		return false, err
	}
	r.log.Info("run ended", "sessionId", run.SessionID, "runId", run.ID, "status", to)
	return true, nil
}

// closed emits the receipt, audit and trace entries of a question that
// finish closed (it, as InteractionResolveRun returned it) and returns the
// ToolResult its call gets.
func (r *Runner) closed(ctx context.Context, tx store.Tx, run *store.Run, it *store.Interaction, status api.Status) (api.ToolResult, error) {
	req, err := decodeRequest(it)
	if err != nil {
		req = &api.InputRequest{}
	}
	ans := api.Answer{Selections: []string{}, Cancelled: true}
	rc := people.NewReceipt(it, status, nil, it.ResolvedAt)
	if _, err := r.emit(ctx, tx, it.SessionID, api.EventUserInputResolved, rc); err != nil {
		return api.ToolResult{}, err
	}
	var summary any = askuser.Summarize(&req.Prompt, ans)
	if isApproval(req) {
		summary = approval.Summarize(&req.Prompt, approval.Answer{Cancelled: status == api.StatusCancelled}, "")
	}
	r.audit(ctx, tx, it, string(status), "", summary)
	r.trace(ctx, tx, run, "interaction", interactionTrace{RequestID: it.ID, ToolCallID: it.ToolCallID, Action: string(status)})
	return closedResult(&req.Prompt, status), nil
}

func (r *Runner) audit(ctx context.Context, ex store.Executor, it *store.Interaction, action, reason string, summary any) {
	var sum json.RawMessage
	if summary != nil {
		sum, _ = json.Marshal(summary)
	}
	err := ex.AuditInsert(ctx, &store.AuditInsertParams{SessionID: it.SessionID, RequestID: it.ID, ToolCallID: it.ToolCallID, RunID: it.RunID,
		Action: action, Reason: reason, Summary: sum, Now: r.now()})
	if err != nil {
		r.log.Error("audit insert", "err", err)
	}
	r.log.Info("interaction", "sessionId", it.SessionID, "requestId", it.ID, "toolCallId", it.ToolCallID, "runId", it.RunID,
		"action", action, "reason", reason, "summary", json.RawMessage(sum))
}

func (r *Runner) trace(ctx context.Context, ex store.Executor, run *store.Run, kind string, data any) {
	b, err := json.Marshal(data)
	if err == nil {
		err = ex.TraceInsert(ctx, &store.TraceInsertParams{SessionID: run.SessionID, RunID: run.ID, Kind: kind, Data: b, Now: r.now()})
	}
	if err != nil {
		r.log.Error("trace insert", "err", err)
	}
}

// findCall finds the assistant message holding toolCallID and the call's index.
func findCall(ctx context.Context, ex store.Executor, sessionID, toolCallID string) (string, int, error) {
	msgs, err := ex.MessageList(ctx, sessionID)
	if err != nil {
		return "", 0, err
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		var calls []model.ToolCall
		if json.Unmarshal(m.ToolCalls, &calls) != nil {
			continue
		}
		for j, c := range calls {
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
	if last == nil || len(last.ToolCalls) == 0 {
		return last, nil
	}
	var calls []model.ToolCall
	if err := json.Unmarshal(last.ToolCalls, &calls); err != nil {
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
			out = append(out, pendingCall{index: i, call: c})
		}
	}
	return last, out
}
