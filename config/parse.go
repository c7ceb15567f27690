package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/askuser"
)

// ReadFile reads and parses the configuration file at path, with getenv
// (os.Getenv when nil) for ${VAR}. Errors: Errors (every problem, each
// naming key and line) with what Parse parsed, or the file's read error
// (and no File).
func ReadFile(path string, getenv func(string) string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	return Parse(path, data, getenv)
}

// Parse parses and validates a configuration file's bytes; name is used in
// error messages only. getenv reads the environment for ${VAR} (nil:
// os.Getenv); an empty variable counts as unset. An empty document is a
// valid, empty File. Errors: Errors, every problem of the file at once.
// With Errors it still returns the File of every value that was valid
// (a refused value is left out, as if absent), so a checker can go on to
// the checks that need the parsed file and report their problems in the
// same round (luban config check); it returns no File only when the bytes
// are not one YAML document. A caller that serves must not use a File
// that came with an error.
func Parse(name string, data []byte, getenv func(string) string) (*File, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	p := &parser{file: name, getenv: getenv}
	if len(data) > MaxFileBytes {
		p.errs = append(p.errs, &Error{File: name, Msg: fmt.Sprintf("the file is larger than %d bytes", MaxFileBytes)})
		return nil, p.errs
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		p.errs = append(p.errs, yamlError(name, err))
		return nil, p.errs
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if len(extra.Content) > 0 {
			line = extra.Content[0].Line
		}
		if err != nil {
			p.errs = append(p.errs, yamlError(name, err))
			return nil, p.errs
		}
		p.errs = append(p.errs, &Error{File: name, Line: line, Msg: "a configuration file holds one YAML document; remove the second one (---)"})
		return nil, p.errs
	}
	f := &File{}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		p.file1(doc.Content[0], f)
	}
	if len(p.errs) > 0 {
		return f, p.errs
	}
	return f, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

func yamlError(name string, err error) *Error {
	msg := err.Error()
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	return &Error{File: name, Line: line, Msg: "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

type parser struct {
	file   string
	getenv func(string) string
	errs   Errors
	refs   []assigneeRefs // routes' assignees, checked against people: at the end
	// lines are the lines of keys checked at the end (a person's id, email
	// and each token), so those errors name the key's own line.
	lines map[string]int
}

// keyLine records the line of key for a check at the end.
func (p *parser) keyLine(key string, n *yaml.Node) {
	if p.lines == nil {
		p.lines = map[string]int{}
	}
	p.lines[key] = n.Line
}

// lineOf is the line keyLine recorded for key, else def.
func (p *parser) lineOf(key string, def int) int {
	if l, ok := p.lines[key]; ok {
		return l
	}
	return def
}

func (p *parser) errf(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// check refuses what the file format does not allow anywhere: anchors,
// aliases and merge keys (a small file needs none of them, and they let a
// few bytes expand without bound).
func (p *parser) check(n *yaml.Node, key string) bool {
	if n.Kind == yaml.AliasNode || n.Anchor != "" {
		p.errf(n, key, "anchors and aliases (&, *) are not supported")
		return false
	}
	return true
}

// mapping walks a mapping node, calling fields[key] for each known key and
// reporting unknown and repeated keys. A null node is an empty mapping.
func (p *parser) mapping(n *yaml.Node, key string, fields map[string]func(key string, v *yaml.Node)) {
	if !p.check(n, key) || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, key, "must be a mapping of keys (%s)", knownKeys(fields))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := join(key, k.Value)
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			p.errf(k, key, "keys must be plain names")
			continue
		}
		if seen[k.Value] {
			p.errf(k, sub, "repeated key")
			continue
		}
		seen[k.Value] = true
		fn, ok := fields[k.Value]
		if !ok {
			p.errf(k, sub, "unknown key (known here: %s)", knownKeys(fields))
			continue
		}
		if p.check(v, sub) {
			fn(sub, v)
		}
	}
}

func knownKeys(fields map[string]func(string, *yaml.Node)) string {
	ks := make([]string, 0, len(fields))
	for k := range fields {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

func join(key, sub string) string {
	if key == "" {
		return sub
	}
	return key + "." + sub
}

// pairs walks a mapping of free names (env, headers, approval) in order.
func (p *parser) pairs(n *yaml.Node, key string, fn func(key string, k, v *yaml.Node)) {
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errf(n, key, "must be a mapping")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !p.check(k, key) || !p.check(v, key) {
			continue
		}
		if k.Kind != yaml.ScalarNode || k.Tag == "!!merge" {
			p.errf(k, key, "keys must be plain names")
			continue
		}
		sub := join(key, k.Value)
		if seen[k.Value] {
			p.errf(k, sub, "repeated key")
			continue
		}
		seen[k.Value] = true
		fn(sub, k, v)
	}
}

// seq walks a sequence node; a null node is an empty list.
func (p *parser) seq(n *yaml.Node, key string, fn func(key string, i int, v *yaml.Node)) bool {
	if isNull(n) {
		return true
	}
	if n.Kind != yaml.SequenceNode {
		p.errf(n, key, "must be a list")
		return false
	}
	for i, v := range n.Content {
		sub := fmt.Sprintf("%s[%d]", key, i)
		if p.check(v, sub) {
			fn(sub, i, v)
		}
	}
	return true
}

// str reads a scalar as text with ${VAR} expanded. Numbers are taken as
// their text; booleans, null, lists and mappings are refused.
func (p *parser) str(n *yaml.Node, key string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, key, "must be a single value, not a list or mapping")
		return "", false
	}
	switch n.Tag {
	case "!!str", "!!int", "!!float":
	case "!!null":
		p.errf(n, key, "has no value")
		return "", false
	case "!!bool":
		p.errf(n, key, "%s is read as a boolean; quote it if it is meant as text", n.Value)
		return "", false
	default:
		p.errf(n, key, "values with the tag %s are not supported", n.Tag)
		return "", false
	}
	v, err := expand(n.Value, p.getenv)
	if err != nil {
		p.errf(n, key, "%v", err)
		return "", false
	}
	return v, true
}

func (p *parser) strInto(dst *string) func(string, *yaml.Node) {
	return func(key string, n *yaml.Node) {
		if v, ok := p.str(n, key); ok {
			*dst = v
		}
	}
}

// token reports whether t, the value of key at n, is usable as a bearer
// token (non-empty, no spaces or commas: --auth-token lists them with
// commas), and reports the key when it is not.
func (p *parser) token(n *yaml.Node, key, t string) bool {
	if strings.TrimSpace(t) == "" || strings.ContainsAny(t, ", \t\r\n") {
		p.errf(n, key, "a token must be non-empty, without spaces or commas")
		return false
	}
	return true
}

// urlInto sets *dst to the key's http or https URL, or reports the key.
func (p *parser) urlInto(dst *string) func(string, *yaml.Node) {
	return func(key string, n *yaml.Node) {
		v, ok := p.str(n, key)
		if !ok {
			return
		}
		if err := checkURL(v); err != nil {
			p.errf(n, key, "%v", err)
			return
		}
		*dst = v
	}
}

func (p *parser) duration(dst *time.Duration) func(string, *yaml.Node) {
	return func(key string, n *yaml.Node) {
		v, ok := p.str(n, key)
		if !ok {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			p.errf(n, key, "%q is not a positive duration such as 30s, 15m or 24h", clip(v))
			return
		}
		*dst = d
	}
}

func (p *parser) strings(n *yaml.Node, key string) ([]string, []int, bool) {
	out := []string{}
	var lines []int
	ok := p.seq(n, key, func(sub string, _ int, v *yaml.Node) {
		if s, ok := p.str(v, sub); ok {
			out = append(out, s)
			lines = append(lines, v.Line)
		}
	})
	return out, lines, ok
}

func (p *parser) file1(n *yaml.Node, f *File) {
	p.mapping(n, "", map[string]func(string, *yaml.Node){
		"server": func(key string, v *yaml.Node) { p.server(v, key, &f.Server) },
		"agents": func(key string, v *yaml.Node) {
			p.seq(v, key, func(sub string, _ int, a *yaml.Node) {
				f.Agents = append(f.Agents, p.agent(a, sub))
			})
		},
		"mcp": func(key string, v *yaml.Node) {
			p.mapping(v, key, map[string]func(string, *yaml.Node){
				"servers": func(key string, v *yaml.Node) {
					p.seq(v, key, func(sub string, _ int, s *yaml.Node) {
						f.MCP.Servers = append(f.MCP.Servers, p.mcpServer(s, sub))
					})
				},
			})
		},
		"webhooks": func(key string, v *yaml.Node) {
			p.seq(v, key, func(sub string, _ int, w *yaml.Node) {
				f.Webhooks = append(f.Webhooks, p.webhook(w, sub))
			})
		},
		"people": func(key string, v *yaml.Node) {
			p.seq(v, key, func(sub string, _ int, n *yaml.Node) {
				f.People = append(f.People, p.person(n, sub))
			})
		},
		"auth":   func(key string, v *yaml.Node) { p.auth(v, key, &f.Auth) },
		"notify": func(key string, v *yaml.Node) { p.notify(v, key, &f.Notify) },
	})
	p.checkPeople(f)
	seen := map[string]int{}
	for i, a := range f.Agents {
		if a.Name == "" {
			continue
		}
		if j, dup := seen[a.Name]; dup {
			p.errs = append(p.errs, &Error{File: p.file, Line: a.Line, Key: fmt.Sprintf("agents[%d].name", i), Msg: fmt.Sprintf("%q is already the name of agents[%d]", a.Name, j)})
			continue
		}
		seen[a.Name] = i
	}
	names := map[string]bool{}
	for i, s := range f.MCP.Servers {
		if s.Name != "" && names[s.Name] {
			p.errs = append(p.errs, &Error{File: p.file, Line: s.Line, Key: fmt.Sprintf("mcp.servers[%d].name", i), Msg: fmt.Sprintf("%q is already the name of another server", s.Name)})
		}
		names[s.Name] = true
		if s.OAuth != nil && len(s.OAuth.Authorizers) > 0 && len(f.People) > 0 {
			ids, groups := map[string]bool{}, map[string]bool{}
			for _, pp := range f.People {
				ids[pp.ID] = true
				for _, g := range pp.Groups {
					groups[g] = true
				}
			}
			for j, a := range s.OAuth.Authorizers {
				if g, ok := strings.CutPrefix(a, "group:"); ok && groups[g] || !ok && ids[a] {
					continue
				}
				p.errs = append(p.errs, &Error{File: p.file, Line: s.Line, Key: fmt.Sprintf("mcp.servers[%d].oauth.authorizers[%d]", i, j), Msg: fmt.Sprintf("%q is no person's id and no group of people:", a)})
			}
		}
	}
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
}

func (p *parser) server(n *yaml.Node, key string, s *Server) {
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"addr": p.strInto(&s.Addr),
		"db": func(key string, v *yaml.Node) {
			if d, ok := p.str(v, key); ok {
				s.DB, s.DBLine = d, v.Line
			}
		},
		"model": func(key string, v *yaml.Node) {
			if m, ok := p.str(v, key); ok {
				if err := CheckModel(m); err != nil {
					p.errf(v, key, "%v", err)
					return
				}
				s.Model = m
			}
		},
		"workspace": func(key string, v *yaml.Node) {
			if w, ok := p.str(v, key); ok {
				s.Workspace, s.WorkspaceLine = w, v.Line
			}
		},
		"interactionTTL": p.duration(&s.InteractionTTL),
		"lease":          p.duration(&s.Lease),
		"sseHeartbeat":   p.duration(&s.SSEHeartbeat),
		"authTokens": func(key string, v *yaml.Node) {
			toks, _, ok := p.strings(v, key)
			if !ok {
				return
			}
			for i, t := range toks {
				if !p.token(v.Content[i], fmt.Sprintf("%s[%d]", key, i), t) {
					return
				}
			}
			s.AuthTokens = toks
		},
		"askTools": func(key string, v *yaml.Node) { s.AskTools = p.askTools(v, key) },
		"publicUrl": func(key string, v *yaml.Node) {
			if u, ok := p.str(v, key); ok {
				if err := CheckPublicURL(u); err != nil {
					p.errf(v, key, "%v", err)
					return
				}
				s.PublicURL = u
			}
		},
		"signingKeys": p.strInto(&s.SigningKeys),
	})
}

// CheckPublicURL accepts an absolute http or https URL with a host and no
// query or fragment (server.publicUrl, --public-url).
func CheckPublicURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %v", clip(s), err)
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return fmt.Errorf("%q: must be an absolute http:// or https:// URL such as https://luban.example.com", clip(s))
	case u.RawQuery != "" || u.Fragment != "":
		return fmt.Errorf("%q: must have no query or fragment", clip(s))
	}
	return nil
}

var agentName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (p *parser) agent(n *yaml.Node, key string) Agent {
	a := Agent{Line: n.Line}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"name": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			if !agentName.MatchString(s) {
				p.errf(v, key, "%q: a name is 1–64 characters of letters, digits, _ and -", clip(s))
				return
			}
			a.Name = s
		},
		"model": func(key string, v *yaml.Node) {
			if m, ok := p.str(v, key); ok {
				if err := CheckModel(m); err != nil {
					p.errf(v, key, "%v", err)
					return
				}
				a.Model = m
			}
		},
		"instructions": p.strInto(&a.Instructions),
		"tools": func(key string, v *yaml.Node) {
			tools, lines, ok := p.strings(v, key)
			if !ok {
				return
			}
			seen := map[string]bool{}
			for i, t := range tools {
				sub := fmt.Sprintf("%s[%d]", key, i)
				if err := CheckPattern(t); err != nil {
					p.errf(v.Content[i], sub, "%v", err)
					continue
				}
				if seen[t] {
					p.errf(v.Content[i], sub, "%q is listed twice", t)
					continue
				}
				seen[t] = true
				a.Tools = append(a.Tools, t)
				a.ToolLines = append(a.ToolLines, lines[i])
			}
			if a.Tools == nil {
				a.Tools = []string{}
			}
		},
		"askTools": func(key string, v *yaml.Node) { a.AskTools = p.askTools(v, key) },
		"approval": func(key string, v *yaml.Node) {
			if v.Kind == yaml.SequenceNode {
				a.Approval.Ordered = true
				p.seq(v, key, func(sub string, _ int, r *yaml.Node) {
					if rule, ok := p.approvalRule(r, sub); ok {
						a.Approval.Rules = append(a.Approval.Rules, rule)
					}
				})
				return
			}
			p.pairs(v, key, func(sub string, k, val *yaml.Node) {
				d, ok := p.str(val, sub)
				if !ok {
					return
				}
				r := approval.Rule{Pattern: k.Value, Decision: approval.Decision(d)}
				if err := approval.ValidateRule(r); err != nil {
					p.errf(val, sub, "%v", err)
					return
				}
				a.Approval.Rules = append(a.Approval.Rules, r)
			})
		},
		"routes": func(key string, v *yaml.Node) {
			p.seq(v, key, func(sub string, _ int, r *yaml.Node) {
				a.Routes = append(a.Routes, p.route(r, sub))
			})
		},
		"maxSteps": func(key string, v *yaml.Node) {
			s, ok := p.str(v, key)
			if !ok {
				return
			}
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > MaxMaxSteps {
				p.errf(v, key, "%q is not a whole number from 1 to %d", clip(s), MaxMaxSteps)
				return
			}
			a.MaxSteps = n
		},
	})
	if a.Name == "" && !hasKey(n, "name") {
		p.errf(n, key+".name", "every agent needs a name")
	}
	return a
}

// hasKey reports whether mapping n has key (true when n is no mapping,
// which is reported already).
func hasKey(n *yaml.Node, key string) bool {
	return n.Kind != yaml.MappingNode || valueOf(n, key) != n
}

func (p *parser) askTools(v *yaml.Node, key string) []string {
	tools, _, ok := p.strings(v, key)
	if !ok {
		return nil
	}
	out := []string{}
	for i, t := range tools {
		sub := fmt.Sprintf("%s[%d]", key, i)
		if !askuser.IsAskTool(t) {
			p.errf(v.Content[i], sub, "%q is not an ask tool (ask_user or AskUser)", clip(t))
			continue
		}
		if slices.Contains(out, t) {
			p.errf(v.Content[i], sub, "%q is listed twice", t)
			continue
		}
		out = append(out, t)
	}
	return out
}

var mcpName = regexp.MustCompile(`^[A-Za-z0-9-]{1,64}$`)

func (p *parser) mcpServer(n *yaml.Node, key string) MCPServer {
	s := MCPServer{Line: n.Line}
	strMap := func(dst *map[string]string) func(string, *yaml.Node) {
		return func(key string, v *yaml.Node) {
			m := map[string]string{}
			p.pairs(v, key, func(sub string, k, val *yaml.Node) {
				if x, ok := p.str(val, sub); ok {
					m[k.Value] = x
				}
			})
			*dst = m
		}
	}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"name": func(key string, v *yaml.Node) {
			x, ok := p.str(v, key)
			if !ok {
				return
			}
			if !mcpName.MatchString(x) {
				p.errf(v, key, "%q: a server name is 1–64 characters of letters, digits and - (its tools are named <name>__<tool>)", clip(x))
				return
			}
			s.Name = x
		},
		"command": p.strInto(&s.Command),
		"args": func(key string, v *yaml.Node) {
			s.Args, _, _ = p.strings(v, key)
		},
		"env":            strMap(&s.Env),
		"url":            p.urlInto(&s.URL),
		"headers":        strMap(&s.Headers),
		"timeout":        p.duration(&s.Timeout),
		"connectTimeout": p.duration(&s.ConnectTimeout),
		"oauth": func(key string, v *yaml.Node) {
			s.OAuth = p.mcpOAuth(v, key)
		},
	})
	switch {
	case n.Kind != yaml.MappingNode:
	case s.Name == "" && !hasKey(n, "name"):
		p.errf(n, key+".name", "every MCP server needs a name")
	case s.Command == "" && s.URL == "" && !hasKey(n, "command") && !hasKey(n, "url"):
		p.errf(n, key, "give either command (stdio) or url (streamable HTTP)")
	case hasKey(n, "command") && hasKey(n, "url"):
		p.errf(n, key, "give either command (stdio) or url (streamable HTTP), not both")
	case hasKey(n, "url") && (hasKey(n, "args") || hasKey(n, "env")):
		p.errf(n, key, "args and env belong to a command (stdio) server")
	case hasKey(n, "command") && hasKey(n, "headers"):
		p.errf(n, key, "headers belong to a url (streamable HTTP) server")
	case hasKey(n, "command") && hasKey(n, "oauth"):
		p.errf(n, key, "oauth belongs to a url (streamable HTTP) server")
	case s.OAuth != nil && hasHeader(s.Headers, "Authorization"):
		p.errf(n, key, "give either oauth or an Authorization header, not both")
	}
	return s
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// mcpOAuth reads an MCP server's `oauth:` (an empty mapping, or null,
// turns OAuth on with every default).
func (p *parser) mcpOAuth(n *yaml.Node, key string) *MCPOAuth {
	o := &MCPOAuth{}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return o
	}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"clientId":     p.strInto(&o.ClientID),
		"clientSecret": p.strInto(&o.ClientSecret),
		"clientMetadataUrl": func(key string, v *yaml.Node) {
			x, ok := p.str(v, key)
			if !ok {
				return
			}
			u, err := url.Parse(x)
			if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
				p.errf(v, key, "%q: a client ID metadata document is named by an https URL with a path", clip(x))
				return
			}
			o.ClientMetadataURL = x
		},
		"scopes": func(key string, v *yaml.Node) {
			o.Scopes, _, _ = p.strings(v, key)
			for i, sc := range o.Scopes {
				if sc == "" || strings.ContainsAny(sc, " \t\r\n\"\\") {
					p.errf(v.Content[i], fmt.Sprintf("%s[%d]", key, i), "%q is not an OAuth scope (no spaces, quotes or backslashes)", clip(sc))
				}
			}
		},
		"authorizers": func(key string, v *yaml.Node) {
			o.Authorizers, _, _ = p.strings(v, key)
		},
	})
	if o.ClientSecret != "" && o.ClientID == "" && n.Kind == yaml.MappingNode {
		p.errf(n, key+".clientSecret", "a client secret needs its clientId")
	}
	return o
}

func checkURL(x string) error {
	u, err := url.Parse(x)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http or https URL", clip(x))
	}
	return nil
}

func (p *parser) webhook(n *yaml.Node, key string) Webhook {
	w := Webhook{Line: n.Line}
	p.mapping(n, key, map[string]func(string, *yaml.Node){
		"url": p.urlInto(&w.URL),
		"secret": func(key string, v *yaml.Node) {
			x, ok := p.str(v, key)
			if !ok {
				return
			}
			if !strings.HasPrefix(x, "whsec_") || len(x) < len("whsec_")+16 {
				p.errf(v, key, "a Standard Webhooks secret starts with whsec_ followed by at least 16 characters of base64")
				return
			}
			w.Secret = x
		},
		"events": func(key string, v *yaml.Node) {
			evs, _, ok := p.strings(v, key)
			if !ok {
				return
			}
			for i, e := range evs {
				if !slices.Contains(WebhookEvents, e) {
					p.errf(v.Content[i], fmt.Sprintf("%s[%d]", key, i), "%q is not one of %s", clip(e), strings.Join(WebhookEvents, ", "))
					continue
				}
				w.Events = append(w.Events, e)
			}
		},
	})
	if n.Kind == yaml.MappingNode {
		if !hasKey(n, "url") {
			p.errf(n, key+".url", "every webhook needs a url")
		}
		if !hasKey(n, "secret") {
			p.errf(n, key+".secret", "every webhook needs a secret")
		}
	}
	return w
}

// CheckModel validates a model name as --model takes it (docs/design.md §8):
// openai:<name>, anthropic:<name>, scripted or scripted:<file>. It checks the
// form only; whether the key is set is checked when the server starts.
func CheckModel(m string) error {
	kind, name, hasName := strings.Cut(m, ":")
	switch kind {
	case "scripted":
		if hasName && name == "" {
			return fmt.Errorf("%q: write scripted or scripted:<file>", m)
		}
		return nil
	case "openai", "anthropic":
		if strings.TrimSpace(name) == "" {
			return fmt.Errorf("%q needs a model name, e.g. %s:%s", m, kind, map[string]string{"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}[kind])
		}
		return nil
	}
	return fmt.Errorf("%q is not a model: use openai:<name>, anthropic:<name>, scripted or scripted:<file>", clip(m))
}

// CheckPattern validates a tool name or glob of an allowlist (path.Match
// syntax; tool names hold no "/").
func CheckPattern(t string) error {
	if strings.TrimSpace(t) == "" {
		return errors.New("an empty tool name")
	}
	if strings.ContainsAny(t, "/ \t\r\n") {
		return fmt.Errorf("%q: a tool name or glob holds no spaces or /", clip(t))
	}
	return approval.ValidateRule(approval.Rule{Pattern: t, Decision: approval.Never})
}
