package approval_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/approval"
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
