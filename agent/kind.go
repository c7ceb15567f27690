package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/people"
	"github.com/lubanhq/luban/store"
)

// An interaction (docs/design.md §15) is a question a run or an MCP host
// waits on. Its kind decides the three things that differ between kinds:
// how a person's answer is validated, what a resolution stores and shows,
// and what the waiter gets. Everything else — who may answer (mayAnswer),
// the checks on the stored row (duplicate, session, expiry, resumable), the
// exactly-once conditional write, the receipt, the user_input_resolved
// event, the audit and trace entries — is resolveInteraction's, the same
// for every kind.
type kind interface {
	// name is the kind's name in docs/design.md §15's table: "ask",
	// "approval", "elicitation-form", "elicitation-url", "host-question",
	// "frontend-tool" (docs/design.md §21).
	name() string
	// validate turns an answer body into a resolution, or returns the
	// error that refuses it with nothing consumed: an *askuser.AnswerError
	// (422 invalid_answer, audited as rejected), a *PayloadTooLargeError
	// (413), or a kind's own refusal (an MCP server's in-call question that
	// can no longer reach it: *NotResumableError).
	validate(ctx context.Context, r *Runner, in *answering, b api.ContinueRequest, by string) (resolution, error)
	// apply is what resolution res writes and what the waiter gets.
	apply(in *answering, res resolution) outcome
}

// answering is one stored interaction as the resolve transition needs it:
// the row, its request decoded once, its kind and, when read, its run.
type answering struct {
	it   *store.Interaction
	req  *api.InputRequest
	kind kind
	// run is the interaction's run as read before the transition (nil:
	// not read); msgs the session's messages (nil: not read).
	run  *store.Run
	msgs []*store.Message
}

// newAnswering decodes it's request and picks its kind. A request that no
// longer decodes is still closed (an expiry, a cancel) as an empty question.
func newAnswering(it *store.Interaction) (*answering, error) {
	req, err := decodeRequest(it)
	in := &answering{it: it, req: req}
	if err != nil {
		in.req = &api.InputRequest{}
	}
	in.kind = kindOf(it, in.req)
	return in, err
}

// kindOf is the kind of a stored interaction.
func kindOf(it *store.Interaction, req *api.InputRequest) kind {
	switch {
	case it.Tool == api.ToolElicitation && req.Prompt.Mode == api.ModeURL:
		return elicitKind{mode: api.ModeURL}
	case it.Tool == api.ToolElicitation:
		return elicitKind{mode: api.ModeForm}
	case req.Tool == api.ToolApproval:
		return approvalKind{}
	case req.Tool == api.ToolFrontend:
		return frontendKind{}
	case req.Source != nil:
		return hostKind{}
	}
	return askKind{}
}

// resolution is what an interaction is resolved to: its status and answer
// (an api.Answer, approval.Answer or elicit.Answer; nil for none), who
// resolved it and, for a resolution no person gave, closing (an expiry, the
// run's cancel or end, an MCP server's session lost to a restart).
type resolution struct {
	status  api.Status
	answer  any
	by      string
	closing bool
	// reason is the audit entry's reason ("restarted" for not_resumable).
	reason string
	// timedOut is the action of the timeout that resolved the question
	// (status expired, by "timeout": deadline.go), "" otherwise; the kind
	// applies answer as the action says (docs/design.md §16 "Deadlines").
	timedOut api.Decision
}

// closingResolution is the resolution of a question no person answered:
// expired or cancelled (the run's cancel, its end), with ans the answer
// stored (nil: the kind's empty answer).
func closingResolution(status api.Status, ans any) resolution {
	return resolution{status: status, answer: ans, closing: true}
}

// effect is what a resolution does to the interaction's run.
type effect int

const (
	// effResume moves the waiting run back to running (one conditional
	// write); this process drives it from the state the transition
	// committed.
	effResume effect = iota
	// effInCall leaves the run running: an MCP server's tool call waits
	// for the answer in this (or another live) process.
	effInCall
	// effEnd ends the run (cancelled or expired) in the same transaction.
	effEnd
	// effNone writes only the interaction's own rows.
	effNone
)

// outcome is what resolving writes, as a kind's apply decides it.
type outcome struct {
	// stored is the interaction's answer column; receipt the answer the
	// receipt shows (people.NewReceipt).
	stored  json.RawMessage
	receipt any
	// result is the ToolResult of the call that waits (nil: none is
	// written with the resolution), under the tool name resultName.
	result     *api.ToolResult
	resultName string
	summary    any // the audit entry's summary
	trace      any // the interaction trace entry's data
	effect     effect
}

// askKind is ask_user / AskUser (docs/design.md §2): the answer becomes the
// ToolResult of the model's call and the run resumes; a cancel ends it.
type askKind struct{}

func (askKind) name() string { return "ask" }

func (askKind) validate(_ context.Context, r *Runner, in *answering, b api.ContinueRequest, by string) (resolution, error) {
	ans := api.Answer{Selections: b.Selections, CustomInput: b.CustomInput, Cancelled: b.Cancelled, Answers: b.Answers}
	if ans.Cancelled {
		return resolution{status: api.StatusCancelled, answer: api.Answer{Selections: []string{}, Cancelled: true}, by: by}, nil
	}
	if err := approvalFieldsOnAsk(approval.AnswerOf(b)); err != nil {
		return resolution{}, err
	}
	var long []tooLongText
	if n := utf8.RuneCountInString(ans.CustomInput); n > askuser.MaxCustomInput {
		long = append(long, tooLongText{"customInput", n, askuser.MaxCustomInput})
	}
	for i, a := range ans.Answers {
		if n := utf8.RuneCountInString(a.Other); n > askuser.MaxCustomInput {
			long = append(long, tooLongText{fmt.Sprintf("answers[%d].other", i), n, askuser.MaxCustomInput})
		}
	}
	if len(long) > 0 {
		return resolution{}, textsTooLong(long...)
	}
	norm, err := askuser.ValidateAnswer(&in.req.Prompt, ans, askuser.AnswerOptions{Workspace: r.opts.Workspace})
	if err != nil {
		return resolution{}, err
	}
	return resolution{status: api.StatusAnswered, answer: norm, by: by}, nil
}

func (askKind) apply(in *answering, res resolution) outcome {
	ans, _ := res.answer.(api.Answer)
	if ans.Selections == nil {
		ans.Selections = []string{}
	}
	out := outcome{stored: mustJSON(ans), receipt: ans, summary: askuser.Summarize(&in.req.Prompt, ans), resultName: in.it.Tool,
		trace: interactionTrace{RequestID: in.it.ID, ToolCallID: in.it.ToolCallID, Action: string(res.status)}, effect: effEnd}
	var result api.ToolResult
	switch {
	case res.status == api.StatusAnswered:
		result, out.effect = askuser.AnsweredResult(&in.req.Prompt, ans), effResume
	case res.timedOut != "" && res.timedOut != api.DecisionCancel:
		// The timeout answered with the recommended options, or with
		// none: the model hears that nobody answered. The run goes on.
		result, out.effect = closedResult(&in.req.Prompt, res.status), effResume
		if res.timedOut == api.DecisionDefault {
			result = askuser.AnsweredResult(&in.req.Prompt, ans)
		}
	default:
		result = closedResult(&in.req.Prompt, res.status)
	}
	if res.timedOut != "" {
		t := people.AskTimeout{Answer: ans, Decision: res.timedOut}
		out.stored, out.receipt = mustJSON(t), t
	}
	out.result = &result
	if res.status == api.StatusNotResumable {
		out.result, out.effect = nil, effNone
	}
	return out
}

// hostKind is a question an MCP host asked through luban's MCP server
// (docs/design.md §11): validated and applied as an ask; its ToolResult is
// what the host reads back, and the run that holds it completes.
type hostKind struct{ askKind }

func (hostKind) name() string { return "host-question" }

// approvalKind is a person's approval of a tool call (docs/design.md §10):
// approve and edit write no ToolResult (the run's next step runs the tool),
// reject writes an error ToolResult and the run continues; a cancel ends
// the run.
type approvalKind struct{}

func (approvalKind) name() string { return "approval" }

func (approvalKind) validate(_ context.Context, r *Runner, in *answering, b api.ContinueRequest, by string) (resolution, error) {
	status, a, err := r.approvalDecision(in.req, b)
	return resolution{status: status, answer: a, by: by}, err
}

func (approvalKind) apply(in *answering, res resolution) outcome {
	a, _ := res.answer.(approval.Answer)
	ans, result, summary := approvalOutcome(in.req, res.status, a, res.by)
	out := outcome{stored: mustJSON(ans), receipt: ans, result: result, resultName: resultName(in.it, in.req), summary: summary,
		trace: interactionTrace{RequestID: in.it.ID, ToolCallID: in.it.ToolCallID, Action: string(res.status)}, effect: effEnd}
	if res.status == api.StatusAnswered || decidedByTimeout(res.status, a) {
		out.effect = effResume
	}
	return out
}

// elicitKind is an MCP server's elicitation (docs/design.md §11), form or
// URL mode: the answer goes to the server (over the session of the call
// that waits, or with the call made again for input_required), never into
// a ToolResult; a person's decline or cancel is an answer too. Only an
// expiry or the run's end closes it, and ends the run.
type elicitKind struct{ mode api.Mode }

func (k elicitKind) name() string { return "elicitation-" + string(k.mode) }

func (elicitKind) validate(ctx context.Context, r *Runner, in *answering, b api.ContinueRequest, by string) (resolution, error) {
	norm, err := elicit.ValidateAnswer(&in.req.Prompt, elicit.Answer{Decision: b.Decision, Content: b.Content, Cancelled: b.Cancelled})
	if err != nil {
		return resolution{}, err
	}
	if elicitMetaOf(in.it).Kind == elicitSession && r.waiter(in.it.ID) == nil && !r.elicitLive(ctx, in.it, in.run) {
		// No process can hand the answer to the server any more.
		rc, err := r.closeNotResumable(ctx, in)
		if err != nil {
			return resolution{}, err
		}
		if rc == nil {
			return resolution{}, ErrNotResumable
		}
		return resolution{}, &NotResumableError{Receipt: rc}
	}
	status := api.StatusAnswered
	if norm.Cancelled {
		status = api.StatusCancelled
	}
	return resolution{status: status, answer: norm, by: by}, nil
}

func (elicitKind) apply(in *answering, res resolution) outcome {
	meta := elicitMetaOf(in.it)
	a, ok := res.answer.(elicit.Answer)
	if !ok || res.closing {
		a = elicit.Answer{Cancelled: true}
	}
	out := outcome{stored: mustJSON(a), receipt: a, summary: elicitSummary(&in.req.Prompt, meta, &a),
		trace: map[string]any{"requestId": in.it.ID, "toolCallId": elicit.ModelCallID(in.it.ToolCallID), "action": res.status, "kind": meta.Kind}}
	switch {
	case res.status == api.StatusNotResumable:
		out.receipt, out.summary, out.effect = nil, nil, effNone
	case res.closing:
		out.effect = effEnd
	case meta.Kind == elicitInputRequired:
		out.effect = effResume
	default:
		out.effect = effInCall
	}
	return out
}
