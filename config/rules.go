package config

import (
	"go.yaml.in/yaml/v3"

	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/when"
)

// approvalRule reads one entry of the list form of `approval:`
// (docs/design.md §16): {tool, when?, policy}.
func (p *parser) approvalRule(n *yaml.Node, key string) (approval.Rule, bool) {
	var r approval.Rule
	ok := true
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"tool": func(key string, v *yaml.Node) {
			t, good := p.str(v, key)
			if !good {
				ok = false
				return
			}
			if err := CheckPattern(t); err != nil {
				p.errf(v, key, "%v", err)
				ok = false
				return
			}
			r.Pattern = t
		},
		"when":   func(key string, v *yaml.Node) { r.When, ok = p.when(v, key, ok) },
		"policy": func(key string, v *yaml.Node) { d, _ := p.str(v, key); r.Decision = approval.Decision(d) },
	})
	if n.Kind != yaml.MappingNode {
		return r, false
	}
	if !hasKey(n, "tool") {
		p.errf(n, key+".tool", "every approval rule names a tool (a name or a glob such as github__*)")
		return r, false
	}
	if !hasKey(n, "policy") {
		p.errf(n, key+".policy", "every approval rule has a policy: always or never")
		return r, false
	}
	if !ok || r.Pattern == "" {
		return r, false
	}
	if err := approval.ValidateRule(r); err != nil {
		p.errf(valueOf(n, "policy"), key+".policy", "%v", err)
		return r, false
	}
	return r, true
}

// when compiles a `when` condition (a CEL expression over tool, args,
// agent, owner and session); a bad one is an error naming its line. ok is
// passed through, false once the condition is refused.
func (p *parser) when(v *yaml.Node, key string, ok bool) (*when.Expr, bool) {
	src, good := p.str(v, key)
	if !good {
		return nil, false
	}
	e, err := when.Compile(src)
	if err != nil {
		p.errf(v, key, "%v", err)
		return nil, false
	}
	return e, ok
}

// valueOf is the value node of key in mapping n (n itself when absent).
func valueOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return n
}
