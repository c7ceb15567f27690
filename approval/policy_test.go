package approval_test

import (
	"encoding/json"

	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/when"
)

func TestPolicyRequires(t *testing.T) {
	t.Parallel()
	var zero approval.Policy
	require.True(t, zero.Requires("write_file"), "write_file is always by default")
	require.False(t, zero.Requires("read_file"))
	require.False(t, zero.Requires("ask_user"))

	p := approval.Policy{Rules: []approval.Rule{
		{Pattern: "github__*", Decision: approval.Always},
		{Pattern: "github__list_issues", Decision: approval.Never},
		{Pattern: "*", Decision: approval.Always},
		{Pattern: "write_file", Decision: approval.Never},
	}}
	for tool, want := range map[string]bool{
		"github__create_issue": true,
		"github__list_issues":  false, // an exact name beats an earlier glob
		"write_file":           false, // the agent's rule beats the default
		"current_time":         true,  // "*"
		"ask_user":             false, // never asks to ask, whatever matches
		"AskUser":              false,
	} {
		require.Equal(t, want, p.Requires(tool), tool)
	}
}

func TestValidateRule(t *testing.T) {
	t.Parallel()
	require.NoError(t, approval.ValidateRule(approval.Rule{Pattern: "*", Decision: approval.Always}))
	require.NoError(t, approval.ValidateRule(approval.Rule{Pattern: "ask_user", Decision: approval.Never}))
	require.EqualError(t, approval.ValidateRule(approval.Rule{Pattern: "AskUser", Decision: approval.Always}), `AskUser is an ask tool and can never require approval ("never asks to ask")`)
	require.EqualError(t, approval.ValidateRule(approval.Rule{Pattern: "a[", Decision: approval.Always}), `"a[" is not a valid glob: syntax error in pattern`)
	require.EqualError(t, approval.ValidateRule(approval.Rule{Pattern: "x", Decision: "ask"}), `"ask" is neither "always" nor "never"`)
	require.EqualError(t, approval.ValidateRule(approval.Rule{Decision: approval.Never}), "an empty tool name or pattern")
}

func TestPolicyRequiresCallWhen(t *testing.T) {
	t.Parallel()
	over, err := when.Compile(`args.amount > 1000`)
	require.NoError(t, err)
	prod, err := when.Compile(`args.path.startsWith("prod/")`)
	require.NoError(t, err)
	// The list form: the first rule whose tool and when match decides; a
	// call no rule matches keeps its tool's default.
	p := approval.Policy{Ordered: true, Rules: []approval.Rule{
		{Pattern: "refund", Decision: approval.Always, When: over},
		{Pattern: "write_file", Decision: approval.Never, When: prod},
		{Pattern: "*", Decision: approval.Never},
	}}
	call := func(tool, args string) when.Vars { return when.Vars{Tool: tool, Args: json.RawMessage(args)} }
	for _, c := range []struct {
		v    when.Vars
		want bool
	}{
		{call("refund", `{"amount": 1500}`), true},
		{call("refund", `{"amount": 20}`), false},         // falls to "*": never
		{call("refund", `{"currency": "EUR"}`), true},     // a condition that cannot be evaluated asks
		{call("write_file", `{"path": "prod/a"}`), false}, // never, by its condition
		{call("write_file", `{"path": "dev/a"}`), false},  // "*" comes before the default in the list form
		{call("ask_user", `{"amount": 5000}`), false},     // never asks to ask
	} {
		require.Equal(t, c.want, p.RequiresCall(c.v), c.v)
	}
	// Without the catch-all, a write outside prod/ keeps write_file's default.
	p.Rules = p.Rules[:2]
	require.True(t, p.RequiresCall(call("write_file", `{"path": "dev/a"}`)))
	require.False(t, p.RequiresCall(call("refund", `{"amount": 20}`)))
	// Requires: whatever the arguments, may a call ask?
	require.True(t, p.Requires("refund"))
	require.True(t, p.Requires("write_file"), "a never rule with a condition lets some calls reach the default")
	require.False(t, p.Requires("current_time"))
	require.True(t, p.Conditional())
	require.False(t, approval.Policy{}.Conditional())
}
