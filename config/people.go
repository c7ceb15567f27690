package config

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lubanhq/luban/when"
)

// Person is one entry of `people:` (docs/design.md §16): someone who may
// own sessions and answer questions. Without `people:` every token of
// server.authTokens (or --auth-token) is a principal of its own.
type Person struct {
	// ID names the person in routes and is their principal: 1–64
	// characters of letters, digits, _ . @ and -, unique. Required.
	ID string
	// Name is shown to people (receipts' by.name); default: ID.
	Name string
	// Email maps a single sign-on login to the person (auth.oidc); unique,
	// compared without case. Optional.
	Email string
	// Slack is the person's Slack user id. Optional.
	Slack string
	// Tokens are the person's bearer tokens (each may be ${VAR}); unique
	// across the file.
	Tokens []string
	// TokenInFile[i] reports whether Tokens[i] is written in the file as it
	// is (no ${VAR}): such a token is no secret of the environment, and
	// `luban serve` prints its sign-in link.
	TokenInFile []bool
	// Groups the person belongs to; a route names one as group:<id>.
	Groups []string
	Line   int
}

// Auth is the `auth:` section.
type Auth struct {
	// OIDC is single sign-on for the page; nil when not configured.
	OIDC *OIDC
}

// OIDC is `auth.oidc` (docs/design.md §16): OpenID Connect authorization
// code flow with PKCE against Issuer; the login's Claim (default email)
// names the person whose Email matches.
type OIDC struct {
	Issuer       string
	ClientID     string
	ClientSecret string
	Claim        string
	Line         int
}

// Route is one entry of an agent's `routes:` (docs/design.md §16): which
// questions it takes (Kind, Tool, When; the first matching route of the
// agent wins) and who answers them, by when. Without a matching route the
// session's owner is the only assignee. agent.Route is this type: a route
// parsed from the file goes to agent.Agent.Routes as it is.
type Route struct {
	// Kind is ask, approval or elicitation (KindAsk, …); empty matches
	// every kind.
	Kind string
	// Tool is a tool name or a path.Match glob; empty matches every tool.
	// The tool of an ask is the ask tool (ask_user, AskUser), of an
	// approval the tool that waits for it, of an elicitation the tool
	// whose MCP server asks.
	Tool string
	// When narrows the route to the calls for which it holds (nil: every
	// call). A condition that cannot be evaluated matches: the route is
	// the stricter path.
	When *when.Expr
	// Assignees are person ids, "group:<id>" (every person of the group,
	// as the directory has them when the question is asked) and "owner"
	// (the session's owner). At least one.
	Assignees []string
	// Quorum is the number of distinct approvals an approval needs (0 or
	// 1: one); any reject rejects. Never more than the people Assignees
	// can name.
	Quorum int
	// SelfApproval false keeps the session's owner from approving (or
	// editing) their own agent's call; nil means allowed.
	SelfApproval *bool
	// Timeout resolves the question with OnTimeout and sets its expiresAt
	// (0: the server's --interaction-ttl, agent.Options.InteractionTTL).
	// Timeout, Remind, Escalate and OnTimeout are stored with the question
	// for the deadline keeper.
	Timeout time.Duration
	// Remind are the delays after the question at which its assignees are
	// notified again, each shorter than Timeout.
	Remind []time.Duration
	// Escalate adds assignees after a delay; nil when not configured.
	Escalate *Escalate
	// OnTimeout is reject, approve, cancel or default ("": default).
	OnTimeout string
	// Line is where the route is written in the configuration (0: unknown).
	Line int
}

// Escalate is a route's `escalate:`: after After, To (as Route.Assignees)
// may answer too and are notified. Its JSON form is what a question keeps
// of its route (agent.AssignedRoute).
type Escalate struct {
	After time.Duration `json:"after"`
	To    []string      `json:"to"`
}

// Route kinds (Route.Kind).
const (
	KindAsk         = "ask"
	KindApproval    = "approval"
	KindElicitation = "elicitation"
)

// OnTimeout actions (Route.OnTimeout).
var OnTimeoutActions = []string{"reject", "approve", "cancel", "default"}

// Matches reports whether the route takes a question of kind about the
// call v: its Kind and Tool (name or glob) match and its When holds. A
// When that cannot be evaluated matches: the route is the stricter path.
func (r *Route) Matches(kind string, v when.Vars) bool {
	if r.Kind != "" && r.Kind != kind {
		return false
	}
	if r.Tool != "" {
		if ok, _ := path.Match(r.Tool, v.Tool); !ok {
			return false
		}
	}
	ok, err := r.When.Eval(v)
	return ok || err != nil
}

var (
	personID  = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$`)
	hashID    = regexp.MustCompile(`^p_[0-9a-f]{16}$`)
	groupName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
)

func (p *parser) person(n *yaml.Node, key string) Person {
	ps := Person{Line: n.Line}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"id": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			if !personID.MatchString(s) || hashID.MatchString(s) {
				p.errf(v, key, "%q: an id is 1–64 characters of letters, digits, _ . @ and -, starting with a letter or digit (and not of the form p_<16 hex digits>, the principal of a token)", clip(s))
				return
			}
			ps.ID = s
			p.keyLine(key, v)
		},
		"name":  p.strInto(&ps.Name),
		"slack": p.strInto(&ps.Slack),
		"email": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			if at := strings.Index(s, "@"); at < 1 || at != strings.LastIndex(s, "@") || at == len(s)-1 || strings.ContainsAny(s, " \t\r\n<>") {
				p.errf(v, key, "%q is not an email address", clip(s))
				return
			}
			ps.Email = s
			p.keyLine(key, v)
		},
		"tokens": func(key string, v *yaml.Node) {
			toks, _, ok := p.strings(v, key)
			if !ok {
				return
			}
			for i, t := range toks {
				if !p.token(v.Content[i], fmt.Sprintf("%s[%d]", key, i), t) {
					continue
				}
				p.keyLine(fmt.Sprintf("%s[%d]", key, len(ps.Tokens)), v.Content[i])
				ps.Tokens = append(ps.Tokens, t)
				ps.TokenInFile = append(ps.TokenInFile, !strings.Contains(v.Content[i].Value, "$"))
			}
		},
		"groups": func(key string, v *yaml.Node) {
			gs, _, ok := p.strings(v, key)
			if !ok {
				return
			}
			for i, g := range gs {
				sub := fmt.Sprintf("%s[%d]", key, i)
				switch {
				case !groupName.MatchString(g):
					p.errf(v.Content[i], sub, "%q: a group is 1–64 characters of letters, digits, _ and -", clip(g))
				case slices.Contains(ps.Groups, g):
					p.errf(v.Content[i], sub, "%q is listed twice", g)
				default:
					ps.Groups = append(ps.Groups, g)
				}
			}
		},
	})
	if n.Kind == yaml.MappingNode && !hasKey(n, "id") {
		p.errf(n, key+".id", "every person needs an id")
	}
	if ps.Name == "" {
		ps.Name = ps.ID
	}
	return ps
}

func (p *parser) auth(n *yaml.Node, key string, a *Auth) {
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"oidc": func(key string, v *yaml.Node) {
			o := &OIDC{Line: v.Line, Claim: "email"}
			p.mapping(v, key, map[string]func(string, *yaml.Node){
				"issuer":       p.urlInto(&o.Issuer),
				"clientId":     p.strInto(&o.ClientID),
				"clientSecret": p.strInto(&o.ClientSecret),
				"claim":        p.strInto(&o.Claim),
			})
			if v.Kind != yaml.MappingNode {
				return
			}
			for _, k := range []string{"issuer", "clientId"} {
				if !hasKey(v, k) {
					p.errf(v, key+"."+k, "auth.oidc needs %s", k)
				}
			}
			a.OIDC = o
		},
	})
}

func (p *parser) route(n *yaml.Node, key string) Route {
	r := Route{Line: n.Line}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"match": func(key string, v *yaml.Node) {
			p.mapping(v, key, map[string]func(string, *yaml.Node){
				"kind": func(key string, v *yaml.Node) {
					k, ok := p.str(v, key)
					if !ok {
						return
					}
					if k != KindAsk && k != KindApproval && k != KindElicitation {
						p.errf(v, key, "%q is not a kind: ask, approval or elicitation", clip(k))
						return
					}
					r.Kind = k
				},
				"tool": func(key string, v *yaml.Node) {
					t, ok := p.str(v, key)
					if !ok {
						return
					}
					if err := CheckPattern(t); err != nil {
						p.errf(v, key, "%v", err)
						return
					}
					r.Tool = t
				},
				"when": func(key string, v *yaml.Node) { r.When, _ = p.when(v, key, true) },
			})
		},
		"assignees": func(key string, v *yaml.Node) { r.Assignees = p.assignees(v, key) },
		"quorum": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			q, err := strconv.Atoi(s)
			if err != nil || q < 1 || q > 100 {
				p.errf(v, key, "%q is not a whole number from 1 to 100", clip(s))
				return
			}
			r.Quorum = q
		},
		"selfApproval": func(key string, v *yaml.Node) {
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" {
				p.errf(v, key, "must be true or false")
				return
			}
			b := v.Value == "true"
			r.SelfApproval = &b
		},
		"timeout": p.duration(&r.Timeout),
		"remind": func(key string, v *yaml.Node) {
			p.seq(v, key, func(sub string, _ int, d *yaml.Node) {
				var x time.Duration
				p.duration(&x)(sub, d)
				if x > 0 {
					r.Remind = append(r.Remind, x)
				}
			})
		},
		"escalate": func(key string, v *yaml.Node) {
			e := &Escalate{}
			p.mapping(v, key, map[string]func(string, *yaml.Node){
				"after": p.duration(&e.After),
				"to":    func(key string, v *yaml.Node) { e.To = p.assignees(v, key) },
			})
			if v.Kind == yaml.MappingNode {
				if !hasKey(v, "after") {
					p.errf(v, key+".after", "an escalation needs after (a duration)")
				}
				if !hasKey(v, "to") {
					p.errf(v, key+".to", "an escalation needs to (people, group:<id>)")
				}
			}
			r.Escalate = e
		},
		"onTimeout": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			if !slices.Contains(OnTimeoutActions, s) {
				p.errf(v, key, "%q is not one of %s", clip(s), strings.Join(OnTimeoutActions, ", "))
				return
			}
			r.OnTimeout = s
		},
	})
	if n.Kind != yaml.MappingNode {
		return r
	}
	for i := range p.refs {
		if p.refs[i].key == key+".assignees" {
			p.refs[i].quorum, p.refs[i].routeLine = r.Quorum, valueOf(n, "quorum").Line
		}
	}
	if !hasKey(n, "assignees") {
		p.errf(n, key+".assignees", "every route names its assignees (people, group:<id>, owner)")
	}
	if r.Quorum > 1 && r.Kind != "" && r.Kind != KindApproval {
		p.errf(valueOf(n, "quorum"), key+".quorum", "a quorum counts approvals: this route matches kind %s", r.Kind)
	}
	if r.SelfApproval != nil && !*r.SelfApproval && r.Escalate == nil && len(r.Assignees) > 0 && !slices.ContainsFunc(r.Assignees, func(a string) bool { return a != "owner" }) {
		p.errf(valueOf(n, "selfApproval"), key+".selfApproval", "false with owner as the only assignee and no escalation leaves nobody who may approve: name the people or group who approve")
	}
	for i, d := range r.Remind {
		if r.Timeout > 0 && d >= r.Timeout {
			p.errf(valueOf(n, "remind"), fmt.Sprintf("%s.remind[%d]", key, i), "%s is not before the timeout (%s)", d, r.Timeout)
		}
	}
	if e := r.Escalate; e != nil && r.Timeout > 0 && e.After >= r.Timeout {
		p.errf(valueOf(n, "escalate"), key+".escalate.after", "%s is not before the timeout (%s)", e.After, r.Timeout)
	}
	return r
}

// assignees reads a list of person ids, group:<id> and owner; whether the
// people and groups exist is checked once the whole file is read
// (checkPeople).
func (p *parser) assignees(v *yaml.Node, key string) []string {
	as, _, ok := p.strings(v, key)
	if !ok {
		return nil
	}
	if len(as) == 0 {
		p.errf(v, key, "name at least one person, group:<id> or owner")
	}
	var out []string
	for i, a := range as {
		sub := fmt.Sprintf("%s[%d]", key, i)
		if slices.Contains(out, a) {
			p.errf(v.Content[i], sub, "%q is listed twice", a)
			continue
		}
		out = append(out, a)
	}
	p.refs = append(p.refs, assigneeRefs{key: key, node: v, names: as})
	return out
}

// assigneeRefs is one list of assignees, checked against people: once the
// whole file is read.
type assigneeRefs struct {
	key   string
	node  *yaml.Node
	names []string
	// quorum is the quorum of the route whose assignees these are (0 for
	// escalate.to), routeLine its line.
	quorum, routeLine int
}

// checkPeople checks what refers across the file: unique ids, tokens
// (with server.authTokens) and emails; each assignee a person, a group
// with members, or owner; each quorum at most the people its assignees
// name; auth.oidc only with people who have an email.
func (p *parser) checkPeople(f *File) {
	ids := map[string]int{}
	emails := map[string]string{}
	tokens := map[string]string{}
	for _, t := range f.Server.AuthTokens {
		tokens[t] = "server.authTokens"
	}
	groups := map[string][]string{}
	for i, ps := range f.People {
		key := fmt.Sprintf("people[%d]", i)
		if ps.ID != "" {
			if j, dup := ids[ps.ID]; dup {
				p.errs = append(p.errs, &Error{File: p.file, Line: p.lineOf(key+".id", ps.Line), Key: key + ".id", Msg: fmt.Sprintf("%q is already the id of people[%d]", ps.ID, j)})
			} else {
				ids[ps.ID] = i
			}
		}
		if ps.Email != "" {
			e := strings.ToLower(ps.Email)
			if other, dup := emails[e]; dup {
				p.errs = append(p.errs, &Error{File: p.file, Line: p.lineOf(key+".email", ps.Line), Key: key + ".email", Msg: fmt.Sprintf("%q is already the email of %s", ps.Email, other)})
			} else {
				emails[e] = ps.ID
			}
		}
		for j, t := range ps.Tokens {
			if other, dup := tokens[t]; dup {
				tk := fmt.Sprintf("%s.tokens[%d]", key, j)
				p.errs = append(p.errs, &Error{File: p.file, Line: p.lineOf(tk, ps.Line), Key: tk, Msg: "this token is already a token of " + other})
				continue
			}
			tokens[t] = ps.ID
		}
		for _, g := range ps.Groups {
			groups[g] = append(groups[g], ps.ID)
		}
	}
	size := func(names []string) int {
		set := map[string]bool{}
		for _, a := range names {
			switch {
			case a == "owner":
				set["\x00owner"] = true
			case strings.HasPrefix(a, "group:"):
				for _, id := range groups[strings.TrimPrefix(a, "group:")] {
					set[id] = true
				}
			default:
				set[a] = true
			}
		}
		return len(set)
	}
	for _, ref := range p.refs {
		bad := false
		for i, a := range ref.names {
			sub := fmt.Sprintf("%s[%d]", ref.key, i)
			line := ref.node.Line
			if i < len(ref.node.Content) {
				line = ref.node.Content[i].Line
			}
			switch {
			case a == "owner":
			case strings.HasPrefix(a, "group:"):
				if g := strings.TrimPrefix(a, "group:"); len(groups[g]) == 0 {
					p.errs = append(p.errs, &Error{File: p.file, Line: line, Key: sub, Msg: fmt.Sprintf("no person is in group %q (groups: %s)", g, listOr(keys(groups), "none"))})
					bad = true
				}
			default:
				if _, ok := ids[a]; !ok {
					p.errs = append(p.errs, &Error{File: p.file, Line: line, Key: sub, Msg: fmt.Sprintf("%q is not a person of people: (write a person's id, group:<id> or owner)", clip(a))})
					bad = true
				}
			}
		}
		if !bad && ref.quorum > 1 {
			if n := size(ref.names); ref.quorum > n {
				p.errs = append(p.errs, &Error{File: p.file, Line: ref.routeLine, Key: strings.TrimSuffix(ref.key, ".assignees") + ".quorum", Msg: fmt.Sprintf("a quorum of %d is more than the %d people the assignees name", ref.quorum, n)})
			}
		}
	}
	if o := f.Auth.OIDC; o != nil && len(emails) == 0 {
		p.errs = append(p.errs, &Error{File: p.file, Line: o.Line, Key: "auth.oidc", Msg: "single sign-on maps a login to a person by email: add people: with an email"})
	}
}

func keys(m map[string][]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(xs, ", ")
}
