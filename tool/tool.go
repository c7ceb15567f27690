// Package tool holds the tools an agent may call: a registry where every tool
// is registered once, and per-agent allowlists that decide which of them a
// model sees (docs/design.md §A.6.2 "工具白名单": registered is not the same as
// visible).
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/model"
)

// Tool is a tool the run executes itself. Call gets the arguments as the
// model sent them (raw JSON text, possibly invalid) and returns the result for
// the model (api.ToolResult, the one result type: its Metadata, when not nil,
// is a JSON object stored with the result and sent in its tool_result event);
// a returned error is turned into an error result, except a *InputRequired
// from a Remote tool, which means the tool needs a person's input first.
type Tool interface {
	Spec() model.ToolSpec
	Call(ctx context.Context, args json.RawMessage) (api.ToolResult, error)
}

// ArgsChecker is implemented by a tool whose arguments have rules that its
// JSON Schema cannot state (the workspace tools: a path must stay inside the
// workspace). CheckArgs looks at arguments already valid under the tool's
// schema, with no side effect, and returns one FieldError per problem, its
// Field the argument's name as in the schema ("path"), its Message for a
// person or a model to read; none when the call may run. The run asks it
// before a call is put in front of a person for approval (a problem is an
// error ToolResult for the model) and before an edited approval is accepted
// (a problem is 422 invalid_answer and the request stays pending: docs/design.md
// §10). The tool still checks again when it runs: the disk may have changed.
type ArgsChecker interface {
	CheckArgs(args json.RawMessage) []api.FieldError
}

// Func adapts a function to Tool.
type Func struct {
	ToolSpec model.ToolSpec
	Fn       func(ctx context.Context, args json.RawMessage) (api.ToolResult, error)
	// Check, when set, is the tool's ArgsChecker.
	Check func(args json.RawMessage) []api.FieldError
}

// Spec returns f.ToolSpec.
func (f Func) Spec() model.ToolSpec { return f.ToolSpec }

// CheckArgs calls f.Check; no problems when it is nil.
func (f Func) CheckArgs(args json.RawMessage) []api.FieldError {
	if f.Check == nil {
		return nil
	}
	return f.Check(args)
}

// CheckArgs runs the ArgsChecker of the tool registered as name on args;
// nil when the tool has none or is not registered.
func (r *Registry) CheckArgs(name string, args json.RawMessage) []api.FieldError {
	e, ok := r.Get(name)
	if !ok || e.Tool == nil {
		return nil
	}
	if c, ok := e.Tool.(ArgsChecker); ok {
		return c.CheckArgs(args)
	}
	return nil
}

// Call calls f.Fn.
func (f Func) Call(ctx context.Context, args json.RawMessage) (api.ToolResult, error) {
	return f.Fn(ctx, args)
}

// Entry is one registered tool.
type Entry struct {
	Spec model.ToolSpec
	// Tool executes the call; nil for external tools (ask_user, AskUser),
	// which the run intercepts and puts in front of a person instead.
	Tool Tool
	// External is true for tools answered by whatever drives the agent
	// (AgentScope is_external_tool): the ask tools.
	External bool
	// Idempotent tools may run again after a crash interrupted them; a
	// non-idempotent one gets an "interrupted" result instead.
	Idempotent bool
}

// ReplaceGroup replaces every tool whose name starts with prefix by tools
// (each name must start with prefix; a name taken by a tool outside the
// group is an error and nothing changes). An MCP server's tools are one
// group, "<server>__", replaced whenever the server's tool list changes.
func (r *Registry) ReplaceGroup(prefix string, tools []*Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[string]*Entry{}
	}
	for _, e := range tools {
		if !strings.HasPrefix(e.Spec.Name, prefix) {
			return fmt.Errorf("tool: %q is not in group %q", e.Spec.Name, prefix)
		}
	}
	for n := range r.entries {
		if strings.HasPrefix(n, prefix) {
			delete(r.entries, n)
		}
	}
	for _, e := range tools {
		r.entries[e.Spec.Name] = e
	}
	return nil
}

// Registry is the set of registered tools. The zero value is empty and ready.
type Registry struct {
	mu      sync.RWMutex
	entries map[string]*Entry
}

// NewRegistry returns a registry holding the two ask tools (docs/design.md §2).
func NewRegistry() *Registry {
	r := &Registry{}
	for _, d := range askuser.Definitions() {
		r.mustAdd(&Entry{Spec: model.ToolSpec{Name: d.Name, Description: d.Description, Parameters: d.Parameters}, External: true, Idempotent: true})
	}
	return r
}

func (r *Registry) mustAdd(e *Entry) {
	if err := r.add(e); err != nil {
		panic(err)
	}
}

func (r *Registry) add(e *Entry) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.entries == nil {
		r.entries = map[string]*Entry{}
	}
	if _, ok := r.entries[e.Spec.Name]; ok {
		return fmt.Errorf("tool: %q is already registered", e.Spec.Name)
	}
	r.entries[e.Spec.Name] = e
	return nil
}

// Register adds a tool the run executes. It fails when the name is taken.
func (r *Registry) Register(t Tool, idempotent bool) error {
	return r.add(&Entry{Spec: t.Spec(), Tool: t, Idempotent: idempotent})
}

// Get returns the entry registered under name.
func (r *Registry) Get(name string) (*Entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	return e, ok
}

// Names lists every registered tool, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.entries))
	for n := range r.entries {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Allowlist is the set of tool names one agent may see and call, in the
// order they are offered to the model.
type Allowlist []string

// Allows reports whether name is on the list: named exactly, or (for a
// tool that is not an ask tool) matched by a glob entry (path.Match syntax,
// as "github__*"), which keeps tools that appear after start, such as an MCP
// server's, under the agent's allowlist.
func (a Allowlist) Allows(name string) bool {
	for _, n := range a {
		if n == name {
			return true
		}
	}
	if askuser.IsAskTool(name) {
		return false
	}
	for _, n := range a {
		if IsGlob(n) {
			if ok, _ := path.Match(n, name); ok {
				return true
			}
		}
	}
	return false
}

// IsGlob reports whether an allowlist entry is a glob rather than a name.
func IsGlob(p string) bool { return strings.ContainsAny(p, `*?[\`) }

// Specs returns the specs of the allowed tools, in allowlist order; a glob
// entry stands for the registered non-ask tools it matches now, sorted, each
// offered once. A name with "__" (an MCP server's tool) that is not
// registered now is skipped: its server is down or dropped it. Any other
// name that is not registered is an error.
func (r *Registry) Specs(allow Allowlist) ([]model.ToolSpec, error) {
	out := make([]model.ToolSpec, 0, len(allow))
	seen := map[string]bool{}
	add := func(e *Entry) {
		if !seen[e.Spec.Name] {
			seen[e.Spec.Name] = true
			out = append(out, e.Spec)
		}
	}
	for _, n := range allow {
		if IsGlob(n) {
			for _, name := range r.Names() {
				if ok, _ := path.Match(n, name); ok && !askuser.IsAskTool(name) {
					if e, ok := r.Get(name); ok {
						add(e)
					}
				}
			}
			continue
		}
		e, ok := r.Get(n)
		if !ok {
			if strings.Contains(n, "__") {
				continue
			}
			return nil, fmt.Errorf("tool: allowlist names %q, which is not registered", n)
		}
		add(e)
	}
	return out, nil
}
