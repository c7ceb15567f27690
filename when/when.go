// Package when compiles and evaluates the `when` conditions of a
// configuration file's approval rules and routes (docs/design.md §9 and
// §17): one CEL expression (github.com/google/cel-go) over the call it
// decides about. An expression is compiled and type-checked once, when the
// file is loaded, so a mistake refuses the file naming its line instead of
// surfacing at the first call.
//
// The variables are tool (string), args (the call's arguments, a map),
// agent, owner and session (strings). Numbers compare across int and
// double (args.amount > 1000 holds for an amount of 1000.5), and an
// evaluation is bounded in cost, since args are written by a model.
package when

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
)

// MaxCost bounds the runtime cost of one evaluation (CEL's cost units,
// about one per visited value): an expression that iterates over large
// arguments fails instead of running long.
const MaxCost = 1_000_000

// Vars are the values an expression sees.
type Vars struct {
	// Tool is the called tool's name (for an ask, the ask tool).
	Tool string
	// Args are the call's arguments as JSON; anything but an object is
	// seen as an empty map.
	Args json.RawMessage
	// Agent is the agent's name, Owner the session owner's principal,
	// Session the session id.
	Agent, Owner, Session string
}

// Expr is a compiled `when` condition. The zero value is not usable; a nil
// *Expr is a condition that always holds.
type Expr struct {
	src string
	prg cel.Program
}

var env = func() *cel.Env {
	e, err := cel.NewEnv(
		cel.Variable("tool", cel.StringType),
		cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("agent", cel.StringType),
		cel.Variable("owner", cel.StringType),
		cel.Variable("session", cel.StringType),
		cel.CrossTypeNumericComparisons(true),
	)
	if err != nil {
		panic(err) // unreachable: a fixed, valid declaration
	}
	return e
}()

// Compile parses and type-checks src, which must be a boolean CEL
// expression over the variables of Vars. Its error is one line that says
// what is wrong and where in the expression (CEL's own message).
func Compile(src string) (*Expr, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("an empty expression")
	}
	ast, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, fmt.Errorf("not a valid CEL expression: %s", oneLine(iss.Err().Error()))
	}
	if !ast.OutputType().IsExactType(types.BoolType) && ast.OutputType() != types.DynType {
		return nil, fmt.Errorf("the expression is of type %s; a condition must be a boolean", ast.OutputType())
	}
	prg, err := env.Program(ast, cel.CostLimit(MaxCost))
	if err != nil {
		return nil, fmt.Errorf("not a valid CEL expression: %s", oneLine(err.Error()))
	}
	return &Expr{src: src, prg: prg}, nil
}

// oneLine folds CEL's multi-line message into one line: its errors, which
// name line and column, without the source and the caret it draws.
func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "|") {
			continue // the source and the caret under its column
		}
		parts = append(parts, l)
	}
	return strings.Join(parts, " ")
}

// String is the expression as written.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return e.src
}

// MarshalText writes the expression as written.
func (e *Expr) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// Eval reports whether the condition holds for v. A nil Expr holds. An
// error (a missing key such as args.amount on a call without one, a wrong
// type, the cost bound) is returned as it is: the caller decides what a
// condition that cannot be evaluated means.
func (e *Expr) Eval(v Vars) (bool, error) {
	if e == nil {
		return true, nil
	}
	args := map[string]any{}
	if len(v.Args) > 0 {
		var m map[string]any
		if json.Unmarshal(v.Args, &m) == nil && m != nil {
			args = m
		}
	}
	out, _, err := e.prg.Eval(map[string]any{"tool": v.Tool, "args": args, "agent": v.Agent, "owner": v.Owner, "session": v.Session})
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("the condition gave %v, not a boolean", out.Value())
	}
	return b, nil
}
