package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/tool"
)

const decideAsk = `{"title":"pick","mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`

// decideBundle builds a run's rows in memory: decide needs no database.
type decideBundle struct {
	run   *store.Run
	agent *Agent
	msgs  []*store.Message
}

func setupDecide(t *testing.T) *decideBundle {
	t.Helper()
	return &decideBundle{
		run:   &store.Run{ID: "run_1", SessionID: "sess_1", Agent: "default", Status: store.RunRunning, LeaseOwner: "inst_a"},
		agent: &Agent{Name: "default", MaxSteps: 5, Tools: tool.Allowlist{api.ToolAskUser, "echo"}},
	}
}

// turn appends an assistant message of the run with calls, and results for
// the calls whose index is in done.
func (b *decideBundle) turn(t *testing.T, calls []model.ToolCall, done ...int) {
	t.Helper()
	js, err := json.Marshal(calls)
	require.NoError(t, err)
	id := NewID("msg")
	b.msgs = append(b.msgs, &store.Message{ID: id, RunID: b.run.ID, Role: "assistant", ToolCalls: js})
	for _, i := range done {
		b.msgs = append(b.msgs, &store.Message{ID: NewID("msg"), RunID: b.run.ID, Role: "tool", ToolCallID: calls[i].ID, ParentID: id, CallIndex: i})
	}
}

func (b *decideBundle) decide() action {
	return decide(decideInput{state: &state{run: b.run, msgs: b.msgs}, instance: "inst_a", agent: b.agent,
		registered: func(name string) bool { return name == "echo" || askuser.IsAskTool(name) }})
}

func TestDecideStopsUnlessOurs(t *testing.T) {
	t.Parallel()
	for _, mut := range []func(r *store.Run){
		func(r *store.Run) { r.Status = store.RunWaitingInput },
		func(r *store.Run) { r.Status = store.RunCancelled },
		func(r *store.Run) { r.LeaseOwner = "inst_b" },
	} {
		b := setupDecide(t)
		mut(b.run)
		require.Equal(t, actStop, b.decide().kind)
	}
	b := setupDecide(t)
	b.agent = nil
	a := b.decide()
	require.Equal(t, actFail, a.kind)
	require.Equal(t, "agent_not_found", a.code)
}

func TestDecideModelAndLimits(t *testing.T) {
	t.Parallel()
	b := setupDecide(t)
	require.Equal(t, actModel, b.decide().kind, "a new run calls the model")
	b.turn(t, []model.ToolCall{{ID: "c1", Name: "echo"}}, 0)
	require.Equal(t, actModel, b.decide().kind, "every call has its result")
	b.run.Steps = 5
	a := b.decide()
	require.Equal(t, actFail, a.kind)
	require.Equal(t, "max_steps", a.code)
	b.run.Steps, b.run.InvalidStreak = 1, MaxInvalidAskRetries+1
	a = b.decide()
	require.Equal(t, actFail, a.kind)
	require.Equal(t, "invalid_tool_arguments", a.code)
}

// Calls that need no person come first, in call order; then the first
// question; a call with its result is skipped.
func TestDecideToolCallsInOrder(t *testing.T) {
	t.Parallel()
	huge := boundArguments(strings.Repeat("x", 10_000), errString("not JSON"))
	calls := []model.ToolCall{
		{ID: "c0", Name: "echo", Arguments: `{}`},
		{ID: "c1", Name: api.ToolAskUser, Arguments: decideAsk},
		{ID: "c2", Name: "nope", Arguments: `{}`},
		{ID: "c3", Name: api.ToolAskUser, Arguments: `{"title":""}`},
		{ID: "c4", Name: "echo", Arguments: huge},
		{ID: "c5", Name: "echo", Arguments: `{}`},
		{ID: "c6", Name: api.ToolAskUser, Arguments: decideAsk},
	}
	want := []struct {
		kind actionKind
		call string
		text string
	}{
		{actResult, "c2", `unknown tool "nope"`},
		{actResult, "c3", "invalid arguments for ask_user: "},
		{actResult, "c4", "invalid arguments for echo: not JSON (the arguments were 10000 bytes"},
		{actTool, "c5", ""},
		{actAsk, "c1", ""},
	}
	b := setupDecide(t)
	b.turn(t, calls, 0)
	for _, w := range want {
		a := b.decide()
		require.Equal(t, w.kind, a.kind, "call %s", w.call)
		require.Equal(t, w.call, a.call.call.ID)
		require.Equal(t, b.msgs[0].ID, a.parent)
		require.Contains(t, a.result.Content, w.text)
		if w.kind == actAsk {
			require.Equal(t, "pick", a.prompt.Title)
			break
		}
		require.Equal(t, w.kind == actResult, a.result.IsError)
		b.msgs = append(b.msgs, &store.Message{ID: NewID("msg"), RunID: b.run.ID, Role: "tool", ToolCallID: w.call, ParentID: b.msgs[0].ID})
	}
	// The first question answered, the second is next.
	b.msgs = append(b.msgs, &store.Message{ID: NewID("msg"), RunID: b.run.ID, Role: "tool", ToolCallID: "c1", ParentID: b.msgs[0].ID})
	a := b.decide()
	require.Equal(t, actAsk, a.kind)
	require.Equal(t, "c6", a.call.call.ID)
	require.Equal(t, 6, a.call.index)
}

// A prompt the model turn parsed is used as is.
func TestDecideUsesParsedPrompt(t *testing.T) {
	t.Parallel()
	b := setupDecide(t)
	b.turn(t, []model.ToolCall{{ID: "c1", Name: api.ToolAskUser, Arguments: decideAsk}})
	parsed := &api.Prompt{Title: "parsed"}
	a := decide(decideInput{state: &state{run: b.run, msgs: b.msgs, prompts: map[string]*api.Prompt{"c1": parsed}}, instance: "inst_a", agent: b.agent,
		registered: func(string) bool { return true }})
	require.Equal(t, actAsk, a.kind)
	require.Same(t, parsed, a.prompt)
}

type errString string

func (e errString) Error() string { return string(e) }
