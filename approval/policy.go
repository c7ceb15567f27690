package approval

import (
	"fmt"
	"path"

	"github.com/lubanhq/luban/askuser"
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
// e.g. "github__*") to a Decision.
type Rule struct {
	Pattern  string   `json:"pattern"`
	Decision Decision `json:"decision"`
}

// DefaultRules are the rules every policy ends with (docs/design.md §9: write_file
// has approval "always" by default). A policy's own rules come first, so
// `write_file: never` in the configuration turns the default off.
var DefaultRules = []Rule{{Pattern: "write_file", Decision: Always}}

// Policy is one agent's approval policy: its rules in the order written.
// The zero value asks for nothing but DefaultRules.
type Policy struct {
	Rules []Rule `json:"rules,omitempty"`
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

// Requires reports whether a call of tool must wait for approval: the first
// rule of p.Rules, then of DefaultRules, whose pattern is the tool's exact
// name decides; failing that, the first whose glob matches it; no match is
// Never. Ask tools never require approval, whatever the rules say.
func (p Policy) Requires(tool string) bool {
	if askuser.IsAskTool(tool) {
		return false
	}
	rules := append(append([]Rule{}, p.Rules...), DefaultRules...)
	for _, r := range rules {
		if r.Pattern == tool {
			return r.Decision == Always
		}
	}
	for _, r := range rules {
		if ok, _ := path.Match(r.Pattern, tool); ok {
			return r.Decision == Always
		}
	}
	return false
}
