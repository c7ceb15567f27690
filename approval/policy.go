package approval

import (
	"fmt"
	"path"

	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/when"
)

// Decision of a policy rule: whether a call of a matching tool waits for a
// person's approval before it runs (docs/design.md §9 "approval": tool name or glob
// → always | never).
type Decision string

// The two policy decisions. Never is the default of every tool not named by
// a rule (docs/design.md §9), except the defaults of DefaultRules.
const (
	Always Decision = "always"
	Never  Decision = "never"
)

// Rule maps a tool name or a glob (path.Match syntax: `*`, `?`, `[...]`,
// e.g. "github__*") to a Decision. When, if set, narrows the rule to the
// calls for which the condition holds (docs/design.md §16: "ask only when
// the amount is over 1,000").
type Rule struct {
	Pattern  string     `json:"pattern"`
	Decision Decision   `json:"decision"`
	When     *when.Expr `json:"when,omitempty"`
}

// DefaultRules are the rules every policy ends with (docs/design.md §9: write_file
// has approval "always" by default). A policy's own rules come first, so
// `write_file: never` in the configuration turns the default off.
var DefaultRules = []Rule{{Pattern: "write_file", Decision: Always}}

// Policy is one agent's approval policy: its rules in the order written.
// The zero value asks for nothing but DefaultRules.
type Policy struct {
	Rules []Rule `json:"rules,omitempty"`
	// Ordered is the list form of the configuration (docs/design.md §16):
	// the first rule whose pattern matches the tool (name or glob) and
	// whose When holds decides. Without it (the mapping form of §9) an
	// exact name wins over a glob.
	Ordered bool `json:"ordered,omitempty"`
}

// ValidateRule checks one rule: a well-formed glob and a known decision. An
// ask tool named exactly with "always" is refused, since ask tools can never
// require approval (AgentScope "never asks to ask"); a glob that happens to
// match an ask tool is allowed and simply does not apply to it.
func ValidateRule(r Rule) error {
	if r.Pattern == "" {
		return fmt.Errorf("an empty tool name or pattern")
	}
	if _, err := path.Match(r.Pattern, ""); err != nil {
		return fmt.Errorf("%q is not a valid glob: %v", r.Pattern, err)
	}
	switch r.Decision {
	case Always, Never:
	default:
		return fmt.Errorf("%q is neither %q nor %q", r.Decision, Always, Never)
	}
	if r.Decision == Always && askuser.IsAskTool(r.Pattern) {
		return fmt.Errorf("%s is an ask tool and can never require approval (\"never asks to ask\")", r.Pattern)
	}
	return nil
}

// Requires reports whether a call of tool may have to wait for approval,
// whatever its arguments: as RequiresCall, where a rule whose When could
// hold counts as matching (an "always" rule with a condition asks for some
// calls) and one whose When could fail does not end the search (a "never"
// rule with a condition lets some calls through to the next rule). It is
// what a listing of an agent's tools shows, and what tells the runner to
// look closer.
func (p Policy) Requires(tool string) bool {
	if askuser.IsAskTool(tool) {
		return false
	}
	for _, r := range p.order(tool) {
		if r.When == nil {
			return r.Decision == Always
		}
		if r.Decision == Always {
			return true
		}
	}
	return false
}

// RequiresCall reports whether the call v.Tool with v.Args must wait for a
// person's approval. The rules are tried in order (Ordered), or exact names
// before globs (the mapping form), then DefaultRules; the first whose
// pattern matches the tool and whose When holds decides; no match is
// Never. A When that cannot be evaluated (a key the arguments lack, a
// wrong type, the cost bound) asks: a condition nobody can check is not a
// reason to run the call unseen. Ask tools never require approval.
func (p Policy) RequiresCall(v when.Vars) bool {
	if askuser.IsAskTool(v.Tool) {
		return false
	}
	for _, r := range p.order(v.Tool) {
		ok, err := r.When.Eval(v)
		if err != nil {
			return true
		}
		if ok {
			return r.Decision == Always
		}
	}
	return false
}

// Conditional reports whether a rule of p has a When.
func (p Policy) Conditional() bool {
	for _, r := range p.Rules {
		if r.When != nil {
			return true
		}
	}
	return false
}

// order returns the rules whose pattern matches tool, in the order they
// are tried: p.Rules then DefaultRules, in order when p.Ordered, else
// those naming tool exactly before those matching it as a glob.
func (p Policy) order(tool string) []Rule {
	rules := append(append([]Rule{}, p.Rules...), DefaultRules...)
	var exact, glob []Rule
	for _, r := range rules {
		switch ok, _ := path.Match(r.Pattern, tool); {
		case r.Pattern == tool && !p.Ordered:
			exact = append(exact, r)
		case r.Pattern == tool, ok:
			glob = append(glob, r)
		}
	}
	return append(exact, glob...)
}
