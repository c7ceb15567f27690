package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/when"
)

// Route is one of an agent's routes (docs/design.md §16): which questions
// it takes and who answers them, by when. It is config.Route, the
// configuration file's `routes:` entry, whose fields say the rules.
type Route = config.Route

// Escalate is a route's escalation (config.Escalate): after After, To (as
// Route.Assignees) may answer too.
type Escalate = config.Escalate

// Route kinds (Route.Kind, AssignedRoute.Kind).
const (
	RouteAsk         = config.KindAsk
	RouteApproval    = config.KindApproval
	RouteElicitation = config.KindElicitation
)

// AssignedRoute is what a question keeps of the route that assigned it
// (store.Interaction.Route, JSON): which route of which agent, the owner
// it was asked for, and the route's settings as they were when it was
// asked. Durations are nanoseconds.
type AssignedRoute struct {
	Agent string `json:"agent"`
	// Index is the route's position in the agent's routes (0-based), Line
	// where it is written in the configuration (0: unknown).
	Index int `json:"index"`
	Line  int `json:"line,omitempty"`
	// Kind is the question's kind: RouteAsk, RouteApproval or
	// RouteElicitation.
	Kind string `json:"kind"`
	// Owner is the session owner's principal.
	Owner string `json:"owner"`
	// Assignees are the route's assignees as written (person ids,
	// group:<id>, owner).
	Assignees []string `json:"assignees"`
	// Quorum is the number of approvals the question needs (1 for every
	// question that is not an approval).
	Quorum int `json:"quorum"`
	// SelfApproval false: the owner may not approve.
	SelfApproval bool            `json:"selfApproval"`
	Timeout      time.Duration   `json:"timeout,omitempty"`
	Remind       []time.Duration `json:"remind,omitempty"`
	Escalate     *Escalate       `json:"escalate,omitempty"`
	OnTimeout    string          `json:"onTimeout,omitempty"`
}

// Name is how the route is named in messages: "routes[i] of agent a".
func (a *AssignedRoute) Name() string {
	return "routes[" + strconv.Itoa(a.Index) + "] of agent " + a.Agent
}

// assignment is a question's assignees as pause stores them: the route
// that matched (its stored form) and the people it names, expanded.
type assignment struct {
	route   AssignedRoute
	persons []string
}

// questionKind is the route kind of a question of prompt tool tool.
func questionKind(tool string) string {
	switch {
	case tool == api.ToolApproval:
		return RouteApproval
	case tool == api.ToolElicitation:
		return RouteElicitation
	case askuser.IsAskTool(tool):
		return RouteAsk
	}
	return ""
}

// assign routes a question of prompt tool promptTool about call c of run
// (docs/design.md §16): the first route of the run's agent that matches
// names its assignees. It returns nil (the owner answers, as without
// routes) when the agent has no routes or none matches; it reads the
// session's owner only when the agent has routes.
func (r *Runner) assign(ctx context.Context, run *store.Run, promptTool string, c model.ToolCall) (*assignment, error) {
	ag := r.agents[run.Agent]
	if ag == nil || len(ag.Routes) == 0 {
		return nil, nil
	}
	kind := questionKind(promptTool)
	if kind == "" {
		return nil, nil
	}
	s, err := r.st.SessionGet(ctx, run.SessionID)
	if err != nil {
		return nil, err
	}
	v := when.Vars{Tool: c.Name, Args: json.RawMessage(c.Arguments), Agent: ag.Name, Owner: s.Owner, Session: run.SessionID}
	for i := range ag.Routes {
		rt := &ag.Routes[i]
		if !rt.Matches(kind, v) {
			continue
		}
		a := &assignment{route: AssignedRoute{Agent: ag.Name, Index: i, Line: rt.Line, Kind: kind, Owner: s.Owner,
			Assignees: slices.Clone(rt.Assignees), Quorum: 1, SelfApproval: rt.SelfApproval == nil || *rt.SelfApproval,
			Timeout: rt.Timeout, Remind: slices.Clone(rt.Remind), Escalate: rt.Escalate, OnTimeout: rt.OnTimeout}}
		if kind == RouteApproval && rt.Quorum > 1 {
			a.route.Quorum = rt.Quorum
		}
		a.persons = r.expand(rt.Assignees, s.Owner)
		if len(a.persons) == 0 {
			// A group whose people left the configuration: the owner
			// answers rather than nobody.
			a.persons = []string{s.Owner}
		}
		return a, nil
	}
	return nil, nil
}

// expand turns assignees as written (person ids, group:<id>, owner) into
// person ids, in order, each once.
func (r *Runner) expand(names []string, owner string) []string {
	var out []string
	add := func(id string) {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	for _, n := range names {
		switch {
		case n == "owner":
			add(owner)
		case strings.HasPrefix(n, "group:"):
			g := strings.TrimPrefix(n, "group:")
			for _, p := range r.opts.People.People() {
				if slices.Contains(p.Groups, g) {
					add(p.ID)
				}
			}
		default:
			add(n)
		}
	}
	return out
}

// apply writes the assignment into the request a person sees: its
// assignees and whom it waits for, and the route's timeout as its
// expiresAt.
func (a *assignment) apply(r *Runner, req *api.InputRequest) {
	if a == nil {
		return
	}
	if a.route.Timeout > 0 {
		req.ExpiresAt = req.CreatedAt.Add(a.route.Timeout).Truncate(time.Second)
	}
	req.Assignees = r.actors(a.persons)
	req.WaitingFor = r.waitingFor(&a.route, nil)
}

// routeJSON is the assignment's stored route (nil without one).
func (a *assignment) routeJSON() json.RawMessage {
	if a == nil {
		return nil
	}
	return mustJSON(a.route)
}

// audience are the principals besides the owner whose feeds get the
// question's events.
func (a *assignment) audience() []string {
	if a == nil {
		return nil
	}
	return a.persons
}

// store writes the assignment's assignee rows in tx (after the
// interaction's row).
func (a *assignment) store(ctx context.Context, tx store.Tx, requestID string, now time.Time) error {
	if a == nil {
		return nil
	}
	return tx.AssigneeAdd(ctx, &store.AssigneeAddParams{RequestID: requestID, Persons: a.persons, Via: store.AssigneeRoute, Now: now})
}

// actor names principal id (docs/design.md §16): a person's name, else the
// id itself.
func (r *Runner) actor(id string) api.Actor {
	if p := r.opts.People.Get(id); p != nil && p.Name != "" {
		return api.Actor{ID: id, Name: p.Name}
	}
	return api.Actor{ID: id, Name: id}
}

func (r *Runner) actors(ids []string) []api.Actor {
	out := make([]api.Actor, 0, len(ids))
	for _, id := range ids {
		out = append(out, r.actor(id))
	}
	return out
}

// waitingFor is whom a question of route rt waits for, given its assignee
// rows (nil: as asked, nobody has decided).
func (r *Runner) waitingFor(rt *AssignedRoute, rows []*store.Assignee) *api.WaitingFor {
	w := &api.WaitingFor{Names: []string{}, Awaiting: []api.Actor{}, Quorum: max(rt.Quorum, 1), Approvals: []api.Actor{}}
	for _, n := range rt.Assignees {
		switch {
		case n == "owner":
			w.Names = append(w.Names, r.actor(rt.Owner).Name)
		case strings.HasPrefix(n, "group:"):
			w.Names = append(w.Names, strings.TrimPrefix(n, "group:"))
		default:
			w.Names = append(w.Names, r.actor(n).Name)
		}
	}
	// The owner may not approve: not awaited.
	selfBarred := !rt.SelfApproval && rt.Kind == RouteApproval
	if rows == nil {
		for _, p := range r.expand(rt.Assignees, rt.Owner) {
			if !(selfBarred && p == rt.Owner) {
				w.Awaiting = append(w.Awaiting, r.actor(p))
			}
		}
		return w
	}
	var approved []*store.Assignee
	for _, a := range rows {
		switch a.Decision {
		case "":
			if selfBarred && a.Person == rt.Owner {
				continue
			}
			w.Awaiting = append(w.Awaiting, r.actor(a.Person))
		case string(api.DecisionApprove):
			approved = append(approved, a)
		}
	}
	slices.SortStableFunc(approved, func(x, y *store.Assignee) int { return x.DecidedAt.Compare(y.DecidedAt) })
	for _, a := range approved {
		w.Approvals = append(w.Approvals, r.actor(a.Person))
	}
	return w
}

// routeOf decodes the route a stored question keeps (nil when it has
// none).
func routeOf(it *store.Interaction) *AssignedRoute {
	if len(it.Route) == 0 {
		return nil
	}
	var rt AssignedRoute
	if json.Unmarshal(it.Route, &rt) != nil {
		return nil
	}
	return &rt
}

// InteractionRoute returns the route that assigned question requestID
// (docs/design.md §16), as stored when it was asked; nil (and no error)
// when no route matched it: the session's owner is then its only assignee.
// Errors: ErrInteractionNotFound.
func (r *Runner) InteractionRoute(ctx context.Context, requestID string) (*AssignedRoute, error) {
	it, err := r.st.InteractionGet(ctx, requestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInteractionNotFound
	}
	if err != nil {
		return nil, err
	}
	return routeOf(it), nil
}

// Assignees returns the person ids who may answer question requestID
// (docs/design.md §16), in the order they were assigned: the route's
// people (a group expanded when the question was asked, "owner" as the
// session's owner), then those an escalation or a delegation added;
// without a route, the session's owner alone. Errors:
// ErrInteractionNotFound.
func (r *Runner) Assignees(ctx context.Context, requestID string) ([]string, error) {
	it, err := r.st.InteractionGet(ctx, requestID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrInteractionNotFound
	}
	if err != nil {
		return nil, err
	}
	return r.assigneesOf(ctx, r.st, it)
}

// assigneesOf is Assignees of the stored question it, read with ex.
func (r *Runner) assigneesOf(ctx context.Context, ex store.Executor, it *store.Interaction) ([]string, error) {
	if len(it.Route) == 0 {
		s, err := ex.SessionGet(ctx, it.SessionID)
		if err != nil {
			return nil, err
		}
		return []string{s.Owner}, nil
	}
	rows, err := ex.AssigneeList(ctx, it.ID)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(rows))
	for _, a := range rows {
		out = append(out, a.Person)
	}
	return out, nil
}

// refreshAssignees sets the assignees and waitingFor of pending question
// it's request req as they are now (an approval of a quorum counts the
// approvals so far; an escalation or a delegation changes the people). A
// question no route assigned is left as it is.
func (r *Runner) refreshAssignees(ctx context.Context, it *store.Interaction, req *api.InputRequest) error {
	rt := routeOf(it)
	if rt == nil {
		return nil
	}
	rows, err := r.st.AssigneeList(ctx, it.ID)
	if err != nil {
		return err
	}
	persons := make([]string, 0, len(rows))
	for _, a := range rows {
		persons = append(persons, a.Person)
	}
	req.Assignees = r.actors(persons)
	req.WaitingFor = r.waitingFor(rt, rows)
	return nil
}

// quorumStep applies the rules of the route that assigned an approval to
// a person's decision on it, before the question is resolved
// (docs/design.md §16). The owner's approve or edit under selfApproval:
// false is ErrNotAssignee. Under a quorum every decision is recorded (an
// edit counts as an approval, and the n-th approver's decision is the one
// applied): a reject, or the approval that makes the quorum, returns nil
// and the caller resolves the question with it; an approval short of the
// quorum keeps the question pending, is audited, and emits the request
// again with its new waitingFor, and its result has Pending set. A second
// decision by the same person is ErrAlreadyDecided. Other questions
// return nil, nil.
func (r *Runner) quorumStep(ctx context.Context, in *answering, res resolution) (*ContinueResult, error) {
	rt := routeOf(in.it)
	if rt == nil || rt.Kind != RouteApproval || res.status != api.StatusAnswered {
		return nil, nil
	}
	a, _ := res.answer.(approval.Answer)
	approving := a.Decision == api.DecisionApprove || a.Decision == api.DecisionEdit
	if approving && !rt.SelfApproval && res.by == rt.Owner {
		r.audit(ctx, r.st, in.it, "rejected", "self_approval", map[string]any{"principal": res.by})
		return nil, fmt.Errorf("%w: the owner may not approve their own agent's call here (selfApproval: false)", ErrNotAssignee)
	}
	if rt.Quorum <= 1 {
		return nil, nil
	}
	decision := string(api.DecisionApprove)
	if !approving {
		decision = string(api.DecisionReject)
	}
	var n int
	var won bool
	var ev *store.Event
	var req api.InputRequest
	err := r.st.InTx(ctx, func(tx store.Tx) error {
		var err error
		n, won, err = tx.AssigneeDecide(ctx, &store.AssigneeDecideParams{RequestID: in.it.ID, Person: res.by, Decision: decision, Now: r.now()})
		if err != nil || !won || !approving || n >= rt.Quorum {
			return err
		}
		rows, err := tx.AssigneeList(ctx, in.it.ID)
		if err != nil {
			return err
		}
		req = *in.req
		req.Resumable = true
		persons := make([]string, 0, len(rows))
		for _, x := range rows {
			persons = append(persons, x.Person)
		}
		req.Assignees, req.WaitingFor = r.actors(persons), r.waitingFor(rt, rows)
		if ev, err = r.emitTo(ctx, tx, in.it.SessionID, api.EventUserInputRequired, req, persons); err != nil {
			return err
		}
		r.audit(ctx, tx, in.it, "approved", "", map[string]any{"principal": res.by, "approvals": n, "quorum": rt.Quorum})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !won {
		rows, err := r.st.AssigneeList(ctx, in.it.ID)
		if err != nil {
			return nil, err
		}
		for _, x := range rows {
			if x.Person == res.by && x.Decision != "" {
				r.audit(ctx, r.st, in.it, "rejected", "already_decided", map[string]any{"principal": res.by})
				return nil, ErrAlreadyDecided
			}
		}
		return nil, r.notResumable(ctx, in.it)
	}
	if !approving || n >= rt.Quorum {
		return nil, nil
	}
	return &ContinueResult{RunID: in.it.RunID, AfterSeq: ev.Seq - 1, Owner: rt.Owner, Pending: &req}, nil
}

// decidedBy is what a resolution by principal by stores of who decided
// (store.Interaction.DecidedBy): the person and, for an approval that
// needed a quorum, every decision recorded; nil when by is nobody, and
// when neither people: nor a route is configured (only the owner answers
// then) unless a timeout decided.
func (r *Runner) decidedBy(ctx context.Context, it *store.Interaction, by string) json.RawMessage {
	if by == "" || by == "system" {
		return nil
	}
	if r.opts.People.Len() == 0 && len(it.Route) == 0 && by != "timeout" {
		// Without people: and routes a receipt is as before: the
		// session's owner decided.
		return nil
	}
	d := struct {
		By        api.Actor           `json:"by"`
		Decisions []api.ActorDecision `json:"decisions,omitempty"`
	}{By: r.actor(by)}
	if rt := routeOf(it); rt != nil && rt.Quorum > 1 {
		rows, err := r.st.AssigneeList(ctx, it.ID)
		if err != nil {
			r.log.Error("read decisions", "requestId", it.ID, "err", err)
		}
		var ds []*store.Assignee
		for _, x := range rows {
			if x.Decision != "" {
				ds = append(ds, x)
			}
		}
		slices.SortStableFunc(ds, func(x, y *store.Assignee) int { return x.DecidedAt.Compare(y.DecidedAt) })
		for _, x := range ds {
			d.Decisions = append(d.Decisions, api.ActorDecision{By: r.actor(x.Person), Decision: api.Decision(x.Decision), At: x.DecidedAt})
		}
	}
	return mustJSON(d)
}
