package agent

import (
	"encoding/json"
	"fmt"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/when"
)

// state is a run as the last transition left it: its row and, when known,
// its session's messages, plus the ask prompts the last model turn parsed
// (by tool call id) so that they are not parsed again. Every transition
// returns the state it committed; the driver loads a state only when it has
// none (the first step of a driver, after a lost write).
type state struct {
	run     *store.Run
	msgs    []*store.Message // nil: not loaded yet
	prompts map[string]*api.Prompt
}

// actionKind names what the next step of a run does (docs/design.md §4).
type actionKind int

const (
	// actStop: the run is not ours to drive (paused, ended, leased elsewhere).
	actStop actionKind = iota
	// actFail: the run fails with code and message.
	actFail
	// actModel: call the model with the conversation.
	actModel
	// actResult: give call a ToolResult that needs no tool and no person
	// (an unknown tool, rejected arguments).
	actResult
	// actTool: run call's tool and record its result.
	actTool
	// actAsk: put the questions of asks to people in one pause.
	actAsk
)

// action is decide's answer.
type action struct {
	kind          actionKind
	code, message string // actFail
	parent        string // the assistant message holding call
	call          pendingCall
	result        api.ToolResult // actResult
	prompt        *api.Prompt    // actAsk: the first question's
	approved      *approvedCall  // actTool of a call that needed approval
	// asks are every question of the message (actAsk), in call order:
	// call and prompt are the first of them.
	asks []askCall
}

// askCall is one call of an assistant message put to a person, with its
// question.
type askCall struct {
	call   pendingCall
	prompt *api.Prompt
}

// decideInput is everything decide looks at.
type decideInput struct {
	state    *state
	instance string // this process's lease owner name
	agent    *Agent // nil: the run's agent no longer exists
	// registered reports whether a tool of that name is registered.
	registered func(name string) bool
	// frontend is the run's front-end tools (docs/design.md §21): a call
	// to one that no registered tool shadows is put to the application.
	frontend []model.ToolSpec
	// spec is a registered tool's spec (for an approval's prompt).
	spec func(name string) model.ToolSpec
	// check is a registered tool's own argument check (tool.ArgsChecker),
	// asked before a call is put in front of a person; nil checks nothing.
	check func(name string, args json.RawMessage) []api.FieldError
	// approvals are the session's approvals (docs/design.md §10); nil when no
	// missing call needs one.
	approvals *approvalView
	// owner is the session's owner, for the `when` conditions of the
	// agent's approval rules (docs/design.md §16); loaded only when the
	// policy has conditions.
	owner string
}

// decide is the state machine's choice of the next step of a run, a pure
// function of the stored rows: stop unless the run is running under this
// process's lease; give the tool calls of the run's last assistant message
// their results in call order, first every call that needs no person, then
// every question of the message at once (docs/design.md §32: one pause, one
// interaction each, in call order); otherwise call the model, unless the run
// reached its step limit or its invalid-ask limit.
func decide(in decideInput) action {
	run := in.state.run
	if run.Status != store.RunRunning || run.LeaseOwner != in.instance {
		return action{kind: actStop}
	}
	a := in.agent
	if a == nil {
		return action{kind: actFail, code: "agent_not_found", message: fmt.Sprintf("agent %q no longer exists", run.Agent)}
	}
	if last, missing := missingCalls(in.state.msgs, run.ID); len(missing) > 0 {
		var ask *action
		put := func(act action) {
			if ask == nil {
				ask = &act
			}
			ask.asks = append(ask.asks, askCall{call: act.call, prompt: act.prompt})
		}
		for _, pc := range missing {
			c := pc.call
			switch {
			case !in.registered(c.Name) && frontendSpec(in.frontend, c.Name) != nil:
				if why, bad := truncatedArguments(c.Arguments); bad {
					return action{kind: actResult, parent: last.ID, call: pc,
						result: api.ToolResult{Content: "invalid arguments for " + c.Name + ": " + why, IsError: true}}
				}
				put(action{kind: actAsk, parent: last.ID, call: pc, prompt: frontendPrompt(frontendSpec(in.frontend, c.Name), c)})
			case !in.registered(c.Name) || !a.Tools.Allows(c.Name):
				return action{kind: actResult, parent: last.ID, call: pc,
					result: api.ToolResult{Content: fmt.Sprintf("unknown tool %q: this agent has no such tool", c.Name), IsError: true}}
			case truncatedCall(c):
				why, _ := truncatedArguments(c.Arguments)
				return action{kind: actResult, parent: last.ID, call: pc,
					result: api.ToolResult{Content: "invalid arguments for " + c.Name + ": " + why, IsError: true}}
			case askuser.IsAskTool(c.Name):
				p, err := promptOf(in.state, c)
				if err != nil {
					return action{kind: actResult, parent: last.ID, call: pc,
						result: api.ToolResult{Content: "invalid arguments for " + c.Name + ": " + err.Error(), IsError: true}}
				}
				put(action{kind: actAsk, parent: last.ID, call: pc, prompt: p})
			case a.Approval.RequiresCall(when.Vars{Tool: c.Name, Args: json.RawMessage(c.Arguments), Agent: a.Name, Owner: in.owner, Session: run.SessionID}):
				act := decideApproval(in, last.ID, pc)
				if act.kind != actAsk {
					return act
				}
				put(act)
			default:
				return action{kind: actTool, parent: last.ID, call: pc}
			}
		}
		return *ask
	}
	if run.InvalidStreak > MaxInvalidAskRetries {
		return action{kind: actFail, code: "invalid_tool_arguments", message: fmt.Sprintf("the model sent invalid ask arguments %d times in a row", run.InvalidStreak)}
	}
	if run.Steps >= a.MaxSteps {
		return action{kind: actFail, code: "max_steps", message: fmt.Sprintf("the run reached its limit of %d model calls", a.MaxSteps)}
	}
	return action{kind: actModel}
}

// promptOf is the prompt of ask call c: the one the model turn parsed, or a
// parse of the stored arguments.
func promptOf(st *state, c model.ToolCall) (*api.Prompt, error) {
	if p := st.prompts[c.ID]; p != nil {
		return p, nil
	}
	return askuser.ParseArgs(c.Name, c.Arguments)
}

func truncatedCall(c model.ToolCall) bool {
	_, ok := truncatedArguments(c.Arguments)
	return ok
}
