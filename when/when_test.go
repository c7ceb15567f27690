package when_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/when"
)

func TestEval(t *testing.T) {
	t.Parallel()
	e, err := when.Compile(`tool == "refund" && args.amount > 1000`)
	require.NoError(t, err)
	for _, c := range []struct {
		tool, args string
		want       bool
	}{
		{"refund", `{"amount": 1500}`, true},
		{"refund", `{"amount": 1000.5}`, true},
		{"refund", `{"amount": 1000}`, false},
		{"refund", `{"amount": 20}`, false},
		{"write_file", `{"amount": 5000}`, false},
	} {
		got, err := e.Eval(when.Vars{Tool: c.tool, Args: json.RawMessage(c.args)})
		require.NoError(t, err, c)
		require.Equal(t, c.want, got, c)
	}
	_, err = e.Eval(when.Vars{Tool: "refund", Args: json.RawMessage(`{"currency": "EUR"}`)})
	require.Error(t, err, "a missing key is an error, for the caller to decide")

	e, err = when.Compile(`has(args.path) && args.path.startsWith("prod/") && owner != "alice" && agent == "ops" && session != ""`)
	require.NoError(t, err)
	got, err := e.Eval(when.Vars{Tool: "write_file", Args: json.RawMessage(`{"path": "prod/x"}`), Agent: "ops", Owner: "bob", Session: "s_1"})
	require.NoError(t, err)
	require.True(t, got)
	got, err = e.Eval(when.Vars{Tool: "write_file", Args: json.RawMessage(`[1,2]`), Agent: "ops", Owner: "bob", Session: "s_1"})
	require.NoError(t, err)
	require.False(t, got, "arguments that are not an object are an empty map")

	var nilExpr *when.Expr
	got, err = nilExpr.Eval(when.Vars{})
	require.NoError(t, err)
	require.True(t, got)
}

func TestCompileRefuses(t *testing.T) {
	t.Parallel()
	for src, want := range map[string]string{
		``:                 "empty",
		`tool ==`:          "not a valid CEL expression",
		`amount > 1000`:    "undeclared reference to 'amount'",
		`tool`:             "of type string",
		`args.amount + 1`:  "", // dyn: allowed at load, an error at runtime if not boolean
		`size(tool) > "x"`: "no matching overload",
	} {
		_, err := when.Compile(src)
		if want == "" {
			continue
		}
		require.Error(t, err, src)
		require.Contains(t, err.Error(), want, src)
		require.NotContains(t, err.Error(), "\n", src)
	}
}

func TestCostBound(t *testing.T) {
	t.Parallel()
	e, err := when.Compile(`args.items.all(x, args.items.all(y, args.items.all(z, x + y + z >= 0)))`)
	require.NoError(t, err)
	items := make([]int, 300)
	raw, _ := json.Marshal(map[string]any{"items": items})
	_, err = e.Eval(when.Vars{Args: raw})
	require.Error(t, err)
	require.Contains(t, err.Error(), "cost")
}
