package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

// Approvals (docs/design.md §10) ride the interaction pipeline of questions: a call
// whose tool the agent's policy marks "always" is put in front of a person
// by the same pause transition (an interaction of tool "approval"), answered
// through Resolve with the same checks (duplicate, session, expiry,
// resumable), resolved by the same transition, cancelled and expired the
// same way. What differs is decided here: approve and edit resolve without
// a ToolResult, and the run's next step runs the tool once (with the edited
// arguments for edit); reject writes an error ToolResult and the run
// continues with the model's next turn.

func isApproval(req *api.InputRequest) bool {
	return req != nil && req.Tool == api.ToolApproval
}

// approvalDecision validates an answer body b to approval request req and
// returns the resolution status and the normalized answer. A message longer
// than approval.MaxMessageLen is a *PayloadTooLargeError; an answer that
// breaks the request (or carries a question's fields) is an
// *askuser.AnswerError; either consumes nothing. A cancel is never
// validated.
func (r *Runner) approvalDecision(req *api.InputRequest, b api.ContinueRequest) (api.Status, approval.Answer, error) {
	a := approval.AnswerOf(b)
	if a.Cancelled {
		return api.StatusCancelled, approval.Answer{Cancelled: true}, nil
	}
	if err := askFieldsOnApproval(api.Answer{Selections: b.Selections, CustomInput: b.CustomInput, Answers: b.Answers}); err != nil {
		return "", approval.Answer{}, err
	}
	if n := utf8.RuneCountInString(a.Message); n > approval.MaxMessageLen {
		return "", approval.Answer{}, textTooLong("message", n, approval.MaxMessageLen)
	}
	norm, err := approval.ValidateAnswer(&req.Prompt, a)
	if err == nil && norm.Decision == api.DecisionEdit {
		// Valid under the schema; the tool's own rules (a path inside the
		// workspace) are checked before the approval resolves, so an edit the
		// tool would refuse is a 422 that leaves the request pending.
		if ds := r.tools.CheckArgs(req.ToolName, norm.Arguments); len(ds) > 0 {
			details := make([]api.FieldError, len(ds))
			for i, d := range ds {
				details[i] = api.FieldError{Field: "arguments." + d.Field, Code: d.Code, Params: d.Params, Message: d.Message}
			}
			err = &askuser.AnswerError{Details: details}
		}
	}
	if err != nil {
		return "", approval.Answer{}, err
	}
	return api.StatusAnswered, norm, nil
}

// joinFieldErrors renders a tool's argument problems for the model:
// "path: …; content: …".
func joinFieldErrors(ds []api.FieldError) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Field + ": " + d.Message
	}
	return strings.Join(parts, "; ")
}

// askFieldsOnApproval refuses a question's answer fields sent to an
// approval (docs/design.md §10: an approval is answered with decision): non-empty
// selections, customInput or answers are a 422 invalid_answer naming them,
// and nothing is consumed. Empty ones (selections: [], customInput: "") are
// what generic clients send and are allowed.
func askFieldsOnApproval(a api.Answer) error {
	const msg = "an approval is answered with decision (approve, edit or reject), not with a question's fields"
	var ds []api.FieldError
	if len(a.Selections) > 0 {
		ds = append(ds, api.FieldError{Field: "selections", Code: api.DetailConflictWithKind, Message: msg})
	}
	if a.CustomInput != "" {
		ds = append(ds, api.FieldError{Field: "customInput", Code: api.DetailConflictWithKind, Message: msg})
	}
	if len(a.Answers) > 0 {
		ds = append(ds, api.FieldError{Field: "answers", Code: api.DetailConflictWithKind, Message: msg})
	}
	if len(ds) > 0 {
		return &askuser.AnswerError{Details: ds}
	}
	return nil
}

// approvalFieldsOnAsk refuses an approval's fields (decision, arguments,
// message, remember) sent to a question: a 422 invalid_answer naming them,
// so a client that mixed up two requests learns it instead of answering a
// question with nothing.
func approvalFieldsOnAsk(a approval.Answer) error {
	const msg = "goes with an approval (tool: approval); this request is a question: answer it with selections, customInput or answers"
	var ds []api.FieldError
	if a.Decision != "" {
		ds = append(ds, api.FieldError{Field: "decision", Code: api.DetailConflictWithKind, Message: msg})
	}
	if t := strings.TrimSpace(string(a.Arguments)); t != "" && t != "null" {
		ds = append(ds, api.FieldError{Field: "arguments", Code: api.DetailConflictWithKind, Message: msg})
	}
	if a.Message != "" {
		ds = append(ds, api.FieldError{Field: "message", Code: api.DetailConflictWithKind, Message: msg})
	}
	if a.Remember != "" {
		ds = append(ds, api.FieldError{Field: "remember", Code: api.DetailConflictWithKind, Message: msg})
	}
	if len(ds) > 0 {
		return &askuser.AnswerError{Details: ds}
	}
	return nil
}

// approvalOutcome is what resolving an approval writes: the answer as
// stored (its receipt is read from it), the ToolResult written with it (nil
// for approve and edit: the tool runs in the run's next step) and the audit
// summary naming principal, who decided. a is the zero Answer for an
// expiry.
func approvalOutcome(req *api.InputRequest, status api.Status, a approval.Answer, principal string) (ans approval.Answer, res *api.ToolResult, summary approval.AuditSummary) {
	ans = a
	decided := status == api.StatusAnswered || decidedByTimeout(status, a)
	if !decided {
		ans = approval.Answer{Cancelled: status == api.StatusCancelled}
		if status == api.StatusExpired && a.Decision == api.DecisionCancel {
			ans.Decision = a.Decision // a timeout that ended the run says so
		}
	}
	switch {
	case !decided:
		x := closedResult(&req.Prompt, status)
		res = &x
	case ans.Decision == api.DecisionReject:
		x := approval.RejectedResult(&req.Prompt, ans.Message)
		res = &x
	}
	return ans, res, approval.Summarize(&req.Prompt, ans, principal)
}

// decidedByTimeout reports whether an approval resolved with status and
// answer a was decided by its timeout (approve or reject, status expired):
// it then runs the tool, or declines it, as a person's decision would.
func decidedByTimeout(status api.Status, a approval.Answer) bool {
	return status == api.StatusExpired && (a.Decision == api.DecisionApprove || a.Decision == api.DecisionReject)
}

// resultName is the tool name of the ToolResult that resolving it writes:
// the approved tool's for an approval, the ask tool's otherwise.
func resultName(it *store.Interaction, req *api.InputRequest) string {
	if isApproval(req) && req.ToolName != "" {
		return req.ToolName
	}
	return it.Tool
}

// approvalView is what decide needs to know about a session's approvals:
// the approval interactions by tool call id, and the tools approved with
// remember: "session" (docs/design.md §10; the decision lives in the interaction's
// stored answer, so it survives restarts and shows in audit and receipt).
type approvalView struct {
	byCall     map[string]*store.Interaction
	remembered map[string]bool
}

// needsApprovals reports whether a missing call of the run's last message
// is one the agent's policy may put in front of a person (approval.Policy
// Requires: whatever its arguments; decide evaluates the conditions).
func needsApprovals(agent *Agent, msgs []*store.Message, runID string) bool {
	if agent == nil {
		return false
	}
	_, missing := missingCalls(msgs, runID)
	for _, pc := range missing {
		if agent.Approval.Requires(pc.call.Name) {
			return true
		}
	}
	return false
}

func (r *Runner) loadApprovals(ctx context.Context, sessionID string) (*approvalView, error) {
	its, err := r.st.InteractionList(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	v := &approvalView{byCall: map[string]*store.Interaction{}, remembered: map[string]bool{}}
	for _, it := range its {
		if it.Tool != api.ToolApproval {
			continue
		}
		v.byCall[it.ToolCallID] = it
		if it.Status != string(api.StatusAnswered) {
			continue
		}
		var a approval.Answer
		if json.Unmarshal(it.Answer, &a) != nil || a.Remember != api.RememberSession || a.Decision == api.DecisionReject {
			continue
		}
		if req, err := decodeRequest(it); err == nil && req.ToolName != "" {
			v.remembered[req.ToolName] = true
		}
	}
	return v, nil
}

// approvedCall marks an actTool whose call was approved: by a person
// (Edited holds the arguments they gave, nil for approve) or by an earlier
// remember: "session" (Remembered).
type approvedCall struct {
	prompt     *api.Prompt
	edited     json.RawMessage
	remembered bool
	// receipt is the signed receipt of the person's approval ("" when
	// remembered or unsigned): the tool gets it (tool.ApprovalReceipt).
	receipt string
}

// decideApproval is decide's choice for a call whose tool needs approval:
// ask (a new or still pending approval), run the tool (approved, edited or
// remembered), or a ToolResult that needs no tool (invalid arguments, a
// rejected, cancelled or expired approval whose result is not stored yet).
func decideApproval(in decideInput, parent string, pc pendingCall) action {
	c := pc.call
	errResult := func(msg string) action {
		return action{kind: actResult, parent: parent, call: pc, result: api.ToolResult{Content: msg, IsError: true}}
	}
	var v approvalView
	if in.approvals != nil {
		v = *in.approvals
	}
	if it := v.byCall[c.ID]; it != nil {
		req, err := decodeRequest(it)
		if err != nil {
			return errResult("not run: the approval request cannot be read: " + err.Error())
		}
		var a approval.Answer
		switch api.Status(it.Status) {
		case api.StatusPending:
			return action{kind: actAsk, parent: parent, call: pc, prompt: &req.Prompt}
		case api.StatusAnswered:
			if err := json.Unmarshal(it.Answer, &a); err != nil {
				return errResult("not run: the approval cannot be read: " + err.Error())
			}
		default:
			// A timeout that approved or rejected decided as a person
			// would have (docs/design.md §16 "Deadlines").
			if json.Unmarshal(it.Answer, &a) != nil || !decidedByTimeout(api.Status(it.Status), a) {
				return action{kind: actResult, parent: parent, call: pc, result: closedResult(&req.Prompt, api.Status(it.Status))}
			}
		}
		switch a.Decision {
		case api.DecisionApprove:
			return action{kind: actTool, parent: parent, call: pc, approved: &approvedCall{prompt: &req.Prompt, receipt: it.ReceiptJWS}}
		case api.DecisionEdit:
			edited := pc
			edited.call.Arguments = string(a.Arguments)
			return action{kind: actTool, parent: parent, call: edited, approved: &approvedCall{prompt: &req.Prompt, edited: a.Arguments, receipt: it.ReceiptJWS}}
		default:
			return action{kind: actResult, parent: parent, call: pc, result: approval.RejectedResult(&req.Prompt, a.Message)}
		}
	}
	var spec model.ToolSpec
	if in.spec != nil {
		spec = in.spec(c.Name)
	}
	p, err := approval.NewPrompt(spec, c.Arguments)
	var ae *approval.ArgsError
	if errors.As(err, &ae) {
		return errResult(ae.Error())
	}
	if err != nil {
		return errResult("not run: " + err.Error())
	}
	if in.check != nil {
		if ds := in.check(c.Name, p.Arguments); len(ds) > 0 {
			// The tool would refuse the call (a path outside the workspace):
			// the model hears why, as for arguments that break the schema.
			return errResult((&approval.ArgsError{Tool: c.Name, Msg: joinFieldErrors(ds)}).Error())
		}
	}
	if v.remembered[c.Name] {
		return action{kind: actTool, parent: parent, call: pc, approved: &approvedCall{prompt: p, remembered: true}}
	}
	return action{kind: actAsk, parent: parent, call: pc, prompt: p}
}

// runApproved runs an approved call once. For an edit the model is told
// what the user changed (approval.EditedResult). A call of a tool that is
// not idempotent which a crash interrupted is not run again: its result
// says so and that it may or may not have taken effect (docs/design.md §10).
func (r *Runner) runApproved(ctx context.Context, run *store.Run, act action) (api.ToolResult, error) {
	c := act.call.call
	if act.approved.remembered {
		r.trace(ctx, r.st, run, "approval", map[string]any{"toolCallId": c.ID, "name": c.Name, "action": "remembered"})
	}
	entry, _ := r.tools.Get(c.Name)
	if act.approved.receipt != "" {
		ctx = tool.WithApprovalReceipt(ctx, act.approved.receipt)
	}
	res, err := r.runTool(ctx, run, entry.Tool, entry.Idempotent, c)
	if err != nil {
		return res, err
	}
	if res.IsError && res.Content == interruptedToolMessage {
		return approval.InterruptedResult(c.Name), nil
	}
	if act.approved.edited != nil {
		res = approval.EditedResult(act.approved.prompt, act.approved.edited, res)
	}
	return res, nil
}

// callIdentity is the tool.Call of c in run (docs/design.md §9): the session's
// owner is the principal; SessionID+ToolCallID is the idempotency key.
func (r *Runner) callIdentity(ctx context.Context, run *store.Run, c model.ToolCall) tool.Call {
	call := tool.Call{SessionID: run.SessionID, RunID: run.ID, ToolCallID: c.ID, Agent: run.Agent}
	if s, err := r.st.SessionGet(ctx, run.SessionID); err == nil {
		call.Principal = s.Owner
	}
	return call
}
