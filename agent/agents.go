package agent

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/store"
)

// AgentInfo describes one configured agent (GET /api/agents, docs/design.md §9):
// its name, its model's display name, the tools it offers (allowlist order,
// ask tools included) and which of those are ask tools.
type AgentInfo struct {
	Name     string
	Model    string
	Tools    []string
	AskTools []string
}

// Agents lists the configured agents, the default first.
func (r *Runner) Agents() []AgentInfo {
	out := make([]AgentInfo, 0, len(r.opts.Agents))
	for _, a := range r.opts.Agents {
		info := AgentInfo{Name: a.Name, Model: a.Provider.Name(), Tools: append([]string{}, a.Tools...), AskTools: []string{}}
		for _, t := range a.Tools {
			if askuser.IsAskTool(t) {
				info.AskTools = append(info.AskTools, t)
			}
		}
		out = append(out, info)
	}
	return out
}

// startAgent is the agent a new run uses (docs/design.md §9): the session's when it
// has one, else the named one, else the default. Naming an unknown agent,
// or another agent than the session keeps, is ErrInvalidRequest naming it.
func (r *Runner) startAgent(sess *store.Session, name string) (*Agent, error) {
	if sess != nil {
		keep := sess.Agent
		if keep == "" {
			keep = r.first.Name
		}
		if name != "" && name != keep {
			return nil, fieldRequest("agent", api.DetailEnum, map[string]any{"allowed": []string{keep}},
				fmt.Sprintf("agent %q: this session keeps its agent %q", name, keep))
		}
		name = keep
	}
	if name == "" {
		return r.first, nil
	}
	a, ok := r.agents[name]
	if !ok {
		names := make([]string, 0, len(r.agents))
		for n := range r.agents {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fieldRequest("agent", api.DetailEnum, map[string]any{"allowed": names},
			fmt.Sprintf("unknown agent %q (agents: %s)", name, strings.Join(names, ", ")))
	}
	return a, nil
}
