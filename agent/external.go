package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// externalAgent is the agent name of a run that holds a question another
// program asked (an MCP host, docs/design.md §11): it has no model. The "@" keeps it
// apart from every configured agent's name.
const externalAgent = "@external"

// ErrInvalidArguments: an outside program's ask arguments break the §2
// schema or its rules; the message says precisely what (docs/design.md §2).
var ErrInvalidArguments = errors.New("invalid arguments")

// AskParams puts a question an outside program asked in front of Owner
// (docs/design.md §11 "luban as an MCP server"). Tool is api.ToolAskUser or
// api.ToolAskUserBatch and Arguments its JSON arguments (§2 schemas,
// validated exactly like a model's). SessionID, when set, names a session
// of Owner to ask in; empty creates one titled by the question. Source is
// stored in the InputRequest.
type AskParams struct {
	Owner, SessionID string
	Tool             string
	Arguments        json.RawMessage
	Source           *api.InputSource
}

// Ask creates the question as a run of its own whose only step is the ask:
// the same interaction row, user_input_required event, audit and trace
// entries as a model's call, answered through Resolve like any other. The
// run completes once the question is resolved. It returns the pending
// InputRequest. Errors: ErrInvalidArguments (nothing stored), ErrSessionNotFound,
// *InteractionPendingError (the session already waits on a question),
// ErrRunInProgress.
func (r *Runner) Ask(ctx context.Context, p AskParams) (*api.InputRequest, error) {
	if !askuser.IsAskTool(p.Tool) {
		return nil, fmt.Errorf("%w: %q is not an ask tool", ErrInvalidArguments, p.Tool)
	}
	prompt, err := askuser.ParseArgs(p.Tool, string(p.Arguments))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidArguments, err)
	}
	if p.SessionID != "" {
		if _, err := r.session(ctx, p.Owner, p.SessionID); err != nil {
			return nil, err
		}
	}
	call := model.ToolCall{ID: NewID("call"), Name: p.Tool, Arguments: string(p.Arguments)}
	run, _, _, err := r.start(ctx, newRun{sessionID: p.SessionID, owner: p.Owner, title: titleOf(prompt.Title), agent: externalAgent, call: &call})
	if err != nil {
		return nil, err
	}
	if err := r.ask(context.WithoutCancel(ctx), run, call, prompt, p.Source); err != nil {
		return nil, err
	}
	it, err := r.st.InteractionGetByToolCall(ctx, run.SessionID, call.ID)
	if err != nil {
		return nil, err
	}
	return r.inputRequest(ctx, it)
}

// Asked is the state of one question for its asker: the request as asked,
// its Status, its Receipt once resolved, and the ToolResult its call got
// (the same content as §3's; nil while pending).
type Asked struct {
	Request *api.InputRequest
	Status  api.Status
	Receipt *api.Receipt
	Result  *api.ToolResult
}

// AskedState reads question requestID of owner. A request of another
// principal's session is ErrInteractionNotFound like an unknown one.
func (r *Runner) AskedState(ctx context.Context, owner, requestID string) (*Asked, error) {
	it, err := r.interaction(ctx, owner, requestID)
	if err != nil {
		return nil, err
	}
	req, err := r.inputRequest(ctx, it)
	if err != nil {
		return nil, err
	}
	a := &Asked{Request: req, Status: api.Status(it.Status)}
	if a.Status == api.StatusPending {
		return a, nil
	}
	a.Receipt = receiptOf(it)
	msgs, err := r.st.MessageList(ctx, it.SessionID)
	if err != nil {
		return nil, err
	}
	for _, m := range msgs {
		if m.Role == "tool" && m.ToolCallID == it.ToolCallID {
			a.Result = &api.ToolResult{Content: m.Content, IsError: m.IsError, Metadata: m.Metadata}
		}
	}
	return a, nil
}

// externalStep is the step of an external run: it completes once its
// question's call has its ToolResult; it does nothing for a run that is not
// running under this process's lease.
func (r *Runner) externalStep(ctx context.Context, st *state) error {
	run := st.run
	if run.Status != store.RunRunning || run.LeaseOwner != r.opts.InstanceID {
		return nil
	}
	if _, missing := missingCalls(st.msgs, run.ID); len(missing) > 0 {
		return nil
	}
	return r.st.InTx(ctx, func(tx store.Tx) error {
		_, err := r.finish(ctx, tx, run, []store.RunStatus{store.RunRunning}, store.RunCompleted, nil, nil)
		return err
	})
}
