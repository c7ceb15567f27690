package config_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/approval"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/when"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestReadFileTwoAgents(t *testing.T) {
	t.Parallel()
	f, err := config.ReadFile("testdata/two-agents.yaml", env(map[string]string{"HOME": "/home/ada", "TOKEN_ALICE": "tok-alice", "TOKEN_BOB": "tok-bob"}))
	require.NoError(t, err)
	require.Equal(t, config.Server{Addr: "127.0.0.1:8080", Workspace: "/home/ada/project", WorkspaceLine: 4, InteractionTTL: 2 * time.Hour,
		AuthTokens: []string{"tok-alice", "tok-bob"}}, f.Server)
	require.Len(t, f.Agents, 2)
	h, w := f.Agents[0], f.Agents[1]
	require.Equal(t, "helper", h.Name)
	require.Equal(t, "openai:gpt-4o-mini", h.Model)
	require.Equal(t, "You answer questions about the project. Ask the user when unsure.\n", h.Instructions)
	require.Equal(t, []string{"current_time", "list_files", "read_file"}, h.Tools)
	require.Equal(t, []int{13, 13, 13}, h.ToolLines)
	require.Equal(t, []string{"ask_user"}, h.AskTools)
	require.Equal(t, 12, h.MaxSteps)
	require.Equal(t, 9, h.Line)
	require.Nil(t, w.AskTools, "askTools not given: both (nil)")
	require.Equal(t, []approval.Rule{{Pattern: "write_file", Decision: approval.Always}, {Pattern: "github__create_*", Decision: approval.Always},
		{Pattern: "github__*", Decision: approval.Never}}, w.Approval.Rules)
	require.True(t, w.Approval.Requires("github__create_issue"))
	require.False(t, w.Approval.Requires("github__list_issues"))
	require.Equal(t, []config.MCPServer{
		{Name: "github", Command: "github-mcp", Args: []string{"stdio"}, Env: map[string]string{"GITHUB_TOKEN": ""}, Line: 29},
		{Name: "docs", URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer ${not-expanded}"}, Line: 33},
	}, f.MCP.Servers)
	require.Equal(t, []config.Webhook{{URL: "https://hooks.example.com/luban", Secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
		Events: []string{"interaction.requested", "run.finished"}, Line: 38}}, f.Webhooks)
}

func TestParseEmptyAndMinimal(t *testing.T) {
	t.Parallel()
	for _, src := range []string{"", "# nothing\n", "{}\n"} {
		f, err := config.Parse("c.yaml", []byte(src), env(nil))
		require.NoError(t, err, src)
		require.Equal(t, &config.File{}, f)
	}
	f, err := config.Parse("c.yaml", []byte("agents:\n  - name: a\n    tools: []\n    askTools: []\n"), env(nil))
	require.NoError(t, err)
	require.Equal(t, []string{}, f.Agents[0].Tools, "an empty list is kept apart from a missing one")
	require.Equal(t, []string{}, f.Agents[0].AskTools)
}

// Every bad input names the file, the line and the key.
func TestParseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, src, want string }{
		{"unknown top-level key", "agent:\n  - name: a\n", "c.yaml:1: agent: unknown key (known here: agents, auth, mcp, notify, people, server, webhooks)"},
		{"unknown agent key", "agents:\n  - name: a\n    prompt: hi\n", "c.yaml:3: agents[0].prompt: unknown key (known here: approval, askTools, instructions, maxSteps, model, name, routes, tools)"},
		{"bad duration", "server:\n  interactionTTL: 1 day\n", `c.yaml:2: server.interactionTTL: "1 day" is not a positive duration such as 30s, 15m or 24h`},
		{"negative duration", "server:\n  lease: -5s\n", `c.yaml:2: server.lease: "-5s" is not a positive duration such as 30s, 15m or 24h`},
		{"bad model", "agents:\n  - name: a\n    model: gpt-4o\n", `c.yaml:3: agents[0].model: "gpt-4o" is not a model: use openai:<name>, anthropic:<name>, scripted or scripted:<file>`},
		{"model without name", "server:\n  model: 'openai:'\n", `c.yaml:2: server.model: "openai:" needs a model name, e.g. openai:gpt-4o-mini`},
		{"bad decision", "agents:\n  - name: a\n    approval:\n      write_file: sometimes\n", `c.yaml:4: agents[0].approval.write_file: "sometimes" is neither "always" nor "never"`},
		{"ask tool under approval", "agents:\n  - name: a\n    approval: {ask_user: always}\n", `c.yaml:3: agents[0].approval.ask_user: ask_user is an ask tool and can never require approval ("never asks to ask")`},
		{"bad glob", "agents:\n  - name: a\n    tools: ['github__[']\n", `c.yaml:3: agents[0].tools[0]: "github__[" is not a valid glob: syntax error in pattern`},
		{"duplicate tool", "agents:\n  - name: a\n    tools: [x, x]\n", `c.yaml:3: agents[0].tools[1]: "x" is listed twice`},
		{"bad ask tool", "agents:\n  - name: a\n    askTools: [ask]\n", `c.yaml:3: agents[0].askTools[0]: "ask" is not an ask tool (ask_user or AskUser)`},
		{"maxSteps zero", "agents:\n  - name: a\n    maxSteps: 0\n", `c.yaml:3: agents[0].maxSteps: "0" is not a whole number from 1 to 1000`},
		{"maxSteps text", "agents:\n  - name: a\n    maxSteps: many\n", `c.yaml:3: agents[0].maxSteps: "many" is not a whole number from 1 to 1000`},
		{"no name", "agents:\n  - model: scripted\n", "c.yaml:2: agents[0].name: every agent needs a name"},
		{"bad name", "agents:\n  - name: 'a b'\n", `c.yaml:2: agents[0].name: "a b": a name is 1–64 characters of letters, digits, _ and -`},
		{"duplicate name", "agents:\n  - name: a\n  - name: a\n", `c.yaml:3: agents[1].name: "a" is already the name of agents[0]`},
		{"repeated key", "agents:\n  - name: a\n    name: b\n", "c.yaml:3: agents[0].name: repeated key"},
		{"bool as text", "agents:\n  - name: a\n    instructions: true\n", "c.yaml:3: agents[0].instructions: true is read as a boolean; quote it if it is meant as text"},
		{"list as text", "server:\n  addr: [a]\n", "c.yaml:2: server.addr: must be a single value, not a list or mapping"},
		{"agents not a list", "agents:\n  name: a\n", "c.yaml:2: agents: must be a list"},
		{"unset variable", "server:\n  db: ${NOPE}\n", "c.yaml:2: server.db: ${NOPE} is not set in the environment or empty (write ${NOPE:-default} for a default)"},
		{"bad variable", "server:\n  db: ${1X}\n", `c.yaml:2: server.db: ${1X}: "1X" is not a variable name`},
		{"unclosed variable", "server:\n  db: ${X\n", `c.yaml:2: server.db: "${X": ${ without a closing }`},
		{"alias", "server:\n  addr: &a x\n  db: *a\n", "c.yaml:2: server.addr: anchors and aliases (&, *) are not supported\nc.yaml:3: server.db: anchors and aliases (&, *) are not supported"},
		{"two documents", "server: {}\n---\nagents: []\n", "c.yaml:3: a configuration file holds one YAML document; remove the second one (---)"},
		{"not YAML", "agents: [\n", "c.yaml:1: not valid YAML: did not find expected node content"},
		{"not a mapping", "- a\n", "c.yaml:1: must be a mapping of keys (agents, auth, mcp, notify, people, server, webhooks)"},
		{"mcp oauth on stdio", "mcp:\n  servers:\n    - {name: g, command: x, oauth: {}}\n", "c.yaml:3: mcp.servers[0]: oauth belongs to a url (streamable HTTP) server"},
		{"mcp oauth and header", "mcp:\n  servers:\n    - {name: g, url: 'http://h/', headers: {authorization: x}, oauth: {}}\n", "c.yaml:3: mcp.servers[0]: give either oauth or an Authorization header, not both"},
		{"mcp oauth secret alone", "mcp:\n  servers:\n    - {name: g, url: 'http://h/', oauth: {clientSecret: s}}\n", "c.yaml:3: mcp.servers[0].oauth.clientSecret: a client secret needs its clientId"},
		{"mcp oauth cimd", "mcp:\n  servers:\n    - {name: g, url: 'http://h/', oauth: {clientMetadataUrl: 'http://x/c.json'}}\n", `c.yaml:3: mcp.servers[0].oauth.clientMetadataUrl: "http://x/c.json": a client ID metadata document is named by an https URL with a path`},
		{"mcp oauth scope", "mcp:\n  servers:\n    - {name: g, url: 'http://h/', oauth: {scopes: ['a b']}}\n", `c.yaml:3: mcp.servers[0].oauth.scopes[0]: "a b" is not an OAuth scope (no spaces, quotes or backslashes)`},
		{"mcp oauth unknown key", "mcp:\n  servers:\n    - {name: g, url: 'http://h/', oauth: {client: x}}\n", "c.yaml:3: mcp.servers[0].oauth.client: unknown key (known here: authorizers, clientId, clientMetadataUrl, clientSecret, scopes)"},
		{"mcp oauth unknown authorizer", "people:\n  - {id: ann, tokens: [t1]}\nmcp:\n  servers:\n    - {name: g, url: 'http://h/', oauth: {authorizers: [bo, 'group:x']}}\n", "c.yaml:5: mcp.servers[0].oauth.authorizers[0]: \"bo\" is no person's id and no group of people:\nc.yaml:5: mcp.servers[0].oauth.authorizers[1]: \"group:x\" is no person's id and no group of people:"},
		{"mcp both", "mcp:\n  servers:\n    - {name: g, command: x, url: 'http://h/'}\n", "c.yaml:3: mcp.servers[0]: give either command (stdio) or url (streamable HTTP), not both"},
		{"mcp neither", "mcp:\n  servers:\n    - {name: g}\n", "c.yaml:3: mcp.servers[0]: give either command (stdio) or url (streamable HTTP)"},
		{"mcp bad name", "mcp:\n  servers:\n    - {name: a__b, command: x}\n", `c.yaml:3: mcp.servers[0].name: "a__b": a server name is 1–64 characters of letters, digits and - (its tools are named <name>__<tool>)`},
		{"mcp unknown key", "mcp:\n  server: []\n", "c.yaml:2: mcp.server: unknown key (known here: servers)"},
		{"mcp bad timeout", "mcp:\n  servers:\n    - {name: g, command: x, timeout: soon}\n", `c.yaml:3: mcp.servers[0].timeout: "soon" is not a positive duration such as 30s, 15m or 24h`},
		{"mcp bad connectTimeout", "mcp:\n  servers:\n    - {name: g, command: x, connectTimeout: 0s}\n", `c.yaml:3: mcp.servers[0].connectTimeout: "0s" is not a positive duration such as 30s, 15m or 24h`},
		{"webhook secret", "webhooks:\n  - {url: 'https://h/', secret: abc}\n", "c.yaml:2: webhooks[0].secret: a Standard Webhooks secret starts with whsec_ followed by at least 16 characters of base64"},
		{"webhook event", "webhooks:\n  - {url: 'https://h/', secret: whsec_0123456789abcdef, events: [run.started]}\n", `c.yaml:2: webhooks[0].events[0]: "run.started" is not one of interaction.requested, interaction.resolved, run.finished`},
		{"webhook url", "webhooks:\n  - {url: 'ftp://h/', secret: whsec_0123456789abcdef}\n", `c.yaml:2: webhooks[0].url: "ftp://h/" is not an http or https URL`},
		{"token with comma", "server:\n  authTokens: ['a,b']\n", "c.yaml:2: server.authTokens[0]: a token must be non-empty, without spaces or commas"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse("c.yaml", []byte(c.src), env(map[string]string{"X": "x"}))
			require.EqualError(t, err, c.want)
			var es config.Errors
			require.True(t, errors.As(err, &es))
		})
	}
}

func TestParseReportsEveryProblemInLineOrder(t *testing.T) {
	t.Parallel()
	src := "agents:\n  - name: a\n    maxSteps: 0\n  - name: b\n    color: red\nserver:\n  lease: soon\n"
	_, err := config.Parse("c.yaml", []byte(src), env(nil))
	var es config.Errors
	require.ErrorAs(t, err, &es)
	lines := []int{}
	for _, e := range es {
		lines = append(lines, e.Line)
	}
	require.Equal(t, []int{3, 5, 7}, lines, err.Error())
}

func TestExpansionNeverAddsStructure(t *testing.T) {
	t.Parallel()
	f, err := config.Parse("c.yaml", []byte("agents:\n  - name: a\n    instructions: ${EVIL}\n"),
		env(map[string]string{"EVIL": "x\n    tools: [write_file]\nserver: {addr: ':1'}"}))
	require.NoError(t, err)
	require.Nil(t, f.Agents[0].Tools)
	require.Equal(t, config.Server{}, f.Server)
	require.True(t, strings.HasPrefix(f.Agents[0].Instructions, "x\n    tools:"))
}

func TestReadFileErrors(t *testing.T) {
	t.Parallel()
	_, err := config.ReadFile(filepath.Join(t.TempDir(), "missing.yaml"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
	big := filepath.Join(t.TempDir(), "big.yaml")
	require.NoError(t, os.WriteFile(big, []byte("# "+strings.Repeat("x", config.MaxFileBytes)+"\n"), 0o600))
	_, err = config.ReadFile(big, nil)
	require.EqualError(t, err, big+": the file is larger than 1048576 bytes")
}

// mcp.servers[].connectTimeout is its own duration, beside the tool call's
// timeout.
func TestMCPConnectTimeout(t *testing.T) {
	t.Parallel()
	f, err := config.Parse("c.yaml", []byte("mcp:\n  servers:\n    - {name: g, command: npx, timeout: 60s, connectTimeout: 5m}\n"), env(nil))
	require.NoError(t, err)
	require.Equal(t, 60*time.Second, f.MCP.Servers[0].Timeout)
	require.Equal(t, 5*time.Minute, f.MCP.Servers[0].ConnectTimeout)
}

// mcp.servers[].oauth: an empty mapping turns OAuth on with every default;
// a client, its secret (from the environment), scopes and authorizers are
// kept as written (docs/design.md §11, "OAuth").
func TestMCPOAuth(t *testing.T) {
	t.Parallel()
	f, err := config.Parse("c.yaml", []byte("people:\n  - {id: ann, tokens: [t1], groups: [ops]}\nmcp:\n  servers:\n    - {name: a, url: 'https://a.example/mcp', oauth: {}}\n    - name: b\n      url: https://b.example/mcp\n      oauth:\n        clientId: luban\n        clientSecret: ${SECRET}\n        scopes: [repo, read]\n        authorizers: [ann, 'group:ops']\n    - {name: c, url: 'https://c.example/mcp'}\n"), env(map[string]string{"SECRET": "s3"}))
	require.NoError(t, err)
	require.Equal(t, &config.MCPOAuth{}, f.MCP.Servers[0].OAuth)
	require.Equal(t, &config.MCPOAuth{ClientID: "luban", ClientSecret: "s3", Scopes: []string{"repo", "read"}, Authorizers: []string{"ann", "group:ops"}}, f.MCP.Servers[1].OAuth)
	require.Nil(t, f.MCP.Servers[2].OAuth)
}

// TestParseReturnsWhatItParsedWithTheErrors: a file with problems gives
// every problem and the File of its valid values (a refused value is left
// out), so checks that need the parsed file can run in the same round; bytes
// that are not YAML give no File.
func TestParseReturnsWhatItParsedWithTheErrors(t *testing.T) {
	t.Parallel()
	src := "server:\n  lease: forever\n  workspace: /w\nagents:\n  - name: a\n    tools: [current_time, 'bad name']\n    colour: blue\n  - name: b\n    model: nope:x\n"
	f, err := config.Parse("c.yaml", []byte(src), env(nil))
	var es config.Errors
	require.ErrorAs(t, err, &es)
	require.Len(t, es, 4, "%v", err)
	require.NotNil(t, f)
	require.Equal(t, "/w", f.Server.Workspace)
	require.Zero(t, f.Server.Lease, "the refused value is left out")
	require.Len(t, f.Agents, 2)
	require.Equal(t, "a", f.Agents[0].Name)
	require.Equal(t, []string{"current_time"}, f.Agents[0].Tools)
	require.Equal(t, 6, f.Agents[0].ToolLines[0])
	require.Equal(t, "b", f.Agents[1].Name)
	require.Empty(t, f.Agents[1].Model)

	f, err = config.Parse("c.yaml", []byte("agents: [\n"), env(nil))
	require.Error(t, err)
	require.Nil(t, f, "not YAML: nothing was parsed")
}

func TestReadFileTeam(t *testing.T) {
	t.Parallel()
	f, err := config.ReadFile("testdata/team.yaml", env(map[string]string{"BOB_TOKEN": "bob-token-123", "OIDC_SECRET": "s3cret"}))
	require.NoError(t, err)
	require.Equal(t, []config.Person{
		{ID: "alice", Name: "Alice Ng", Email: "alice@example.com", Tokens: []string{"alice-token-123"}, TokenInFile: []bool{true}, Line: 3},
		{ID: "bob", Name: "Bob", Email: "Bob@Example.com", Slack: "U0BOB", Tokens: []string{"bob-token-123"}, TokenInFile: []bool{false}, Groups: []string{"finance"}, Line: 7},
		{ID: "carol", Name: "carol", Tokens: []string{"carol-token-123"}, TokenInFile: []bool{true}, Groups: []string{"finance", "oncall"}, Line: 13},
	}, f.People)
	require.Equal(t, &config.OIDC{Issuer: "https://id.example.com", ClientID: "luban", ClientSecret: "s3cret", Claim: "email", Line: 18}, f.Auth.OIDC)
	a := f.Agents[0]
	require.True(t, a.Approval.Ordered)
	require.Len(t, a.Approval.Rules, 2)
	require.Equal(t, "args.amount > 1000", a.Approval.Rules[0].When.String())
	require.True(t, a.Approval.RequiresCall(when.Vars{Tool: "refund", Args: json.RawMessage(`{"amount": 1200}`)}))
	require.False(t, a.Approval.RequiresCall(when.Vars{Tool: "refund", Args: json.RawMessage(`{"amount": 12}`)}))
	require.Len(t, a.Routes, 2)
	r := a.Routes[0]
	no := false
	require.Equal(t, "approval", r.Kind)
	require.Equal(t, "refund", r.Tool)
	require.Equal(t, []string{"group:finance"}, r.Assignees)
	require.Equal(t, 2, r.Quorum)
	require.Equal(t, &no, r.SelfApproval)
	require.Equal(t, 2*time.Minute, r.Timeout)
	require.Equal(t, []time.Duration{30 * time.Second, time.Minute}, r.Remind)
	require.Equal(t, &config.Escalate{After: 90 * time.Second, To: []string{"alice"}}, r.Escalate)
	require.Equal(t, "reject", r.OnTimeout)
	require.True(t, r.Matches("approval", when.Vars{Tool: "refund", Args: json.RawMessage(`{"amount": 1200}`)}))
	require.False(t, r.Matches("approval", when.Vars{Tool: "refund", Args: json.RawMessage(`{"amount": 12}`)}))
	require.False(t, r.Matches("ask", when.Vars{Tool: "refund", Args: json.RawMessage(`{"amount": 1200}`)}))
	require.True(t, a.Routes[1].Matches("ask", when.Vars{Tool: "ask_user"}), "a route without match takes every question")
}

// Bad people, routes and conditions name the file, the line and the key.
func TestParsePeopleAndRoutesErrors(t *testing.T) {
	t.Parallel()
	people := "people:\n  - {id: alice, email: a@x.io, tokens: [ta], groups: [finance]}\n  - {id: bob, tokens: [tb], groups: [finance]}\n"
	cases := []struct{ name, src, want string }{
		{"duplicate person", "people:\n  - {id: alice}\n  - {id: alice}\n", `c.yaml:3: people[1].id: "alice" is already the id of people[0]`},
		{"duplicate token", "people:\n  - {id: alice, tokens: [t1]}\n  - {id: bob, tokens: [t2, t1]}\n", `c.yaml:3: people[1].tokens[1]: this token is already a token of alice`},
		{"token of the server", "server:\n  authTokens: [t1]\npeople:\n  - {id: alice, tokens: [t1]}\n", `c.yaml:4: people[0].tokens[0]: this token is already a token of server.authTokens`},
		{"duplicate email", "people:\n  - {id: a, email: A@x.io}\n  - {id: b, email: a@X.io}\n", `c.yaml:3: people[1].email: "a@X.io" is already the email of a`},
		// Each key is named at its own line, not at the person's "- id:" line.
		{"duplicate id on its line", "people:\n  - name: A\n    id: alice\n  - name: B\n\n    id: alice\n", `c.yaml:6: people[1].id: "alice" is already the id of people[0]`},
		{"duplicate token on its line", "people:\n  - id: alice\n    tokens: [t1]\n  - id: bob\n    tokens:\n      - t2\n      - t1\n", `c.yaml:7: people[1].tokens[1]: this token is already a token of alice`},
		{"duplicate email on its line", "people:\n  - id: a\n    email: A@x.io\n  - id: b\n    name: B\n    email: a@X.io\n", `c.yaml:6: people[1].email: "a@X.io" is already the email of a`},
		{"no id", "people:\n  - {name: Alice}\n", "c.yaml:2: people[0].id: every person needs an id"},
		{"bad id", "people:\n  - {id: 'a b'}\n", `c.yaml:2: people[0].id: "a b": an id is 1–64 characters of letters, digits, _ . @ and -, starting with a letter or digit (and not of the form p_<16 hex digits>, the principal of a token)`},
		{"bad email", "people:\n  - {id: a, email: nope}\n", `c.yaml:2: people[0].email: "nope" is not an email address`},
		{"unknown person in a route", people + "agents:\n  - name: a\n    routes:\n      - assignees: [alice, dave]\n", `c.yaml:7: agents[0].routes[0].assignees[1]: "dave" is not a person of people: (write a person's id, group:<id> or owner)`},
		{"unknown group in a route", people + "agents:\n  - name: a\n    routes:\n      - assignees:\n          - group:legal\n", `c.yaml:8: agents[0].routes[0].assignees[0]: no person is in group "legal" (groups: finance)`},
		{"unknown escalation target", people + "agents:\n  - name: a\n    routes:\n      - assignees: [owner]\n        escalate: {after: 1m, to: [zed]}\n", `c.yaml:8: agents[0].routes[0].escalate.to[0]: "zed" is not a person of people: (write a person's id, group:<id> or owner)`},
		{"quorum larger than the group", people + "agents:\n  - name: a\n    routes:\n      - assignees: [group:finance]\n        quorum: 3\n", `c.yaml:8: agents[0].routes[0].quorum: a quorum of 3 is more than the 2 people the assignees name`},
		{"nobody may approve", people + "agents:\n  - name: a\n    routes:\n      - assignees: [owner]\n        selfApproval: false\n", `c.yaml:8: agents[0].routes[0].selfApproval: false with owner as the only assignee and no escalation leaves nobody who may approve: name the people or group who approve`},
		{"quorum of an ask", people + "agents:\n  - name: a\n    routes:\n      - match: {kind: ask}\n        assignees: [group:finance]\n        quorum: 2\n", `c.yaml:9: agents[0].routes[0].quorum: a quorum counts approvals: this route matches kind ask`},
		{"bad when", "agents:\n  - name: a\n    routes:\n      - match:\n          when: 'args.amount >'\n        assignees: [owner]\n", "c.yaml:5: agents[0].routes[0].match.when: not a valid CEL expression: ERROR: <input>:1:14: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"},
		{"undeclared in when", "agents:\n  - name: a\n    approval:\n      - tool: refund\n        when: amount > 1000\n        policy: always\n", "c.yaml:5: agents[0].approval[0].when: not a valid CEL expression: ERROR: <input>:1:1: undeclared reference to 'amount' (in container '')"},
		{"approval rule without policy", "agents:\n  - name: a\n    approval:\n      - tool: refund\n", "c.yaml:4: agents[0].approval[0].policy: every approval rule has a policy: always or never"},
		{"approval rule bad policy", "agents:\n  - name: a\n    approval:\n      - {tool: refund, policy: maybe}\n", `c.yaml:4: agents[0].approval[0].policy: "maybe" is neither "always" nor "never"`},
		{"bad kind", "agents:\n  - name: a\n    routes:\n      - match: {kind: question}\n        assignees: [owner]\n", `c.yaml:4: agents[0].routes[0].match.kind: "question" is not a kind: ask, approval or elicitation`},
		{"no assignees", "agents:\n  - name: a\n    routes:\n      - match: {kind: ask}\n", "c.yaml:4: agents[0].routes[0].assignees: every route names its assignees (people, group:<id>, owner)"},
		{"bad onTimeout", "agents:\n  - name: a\n    routes:\n      - {assignees: [owner], onTimeout: explode}\n", `c.yaml:4: agents[0].routes[0].onTimeout: "explode" is not one of reject, approve, cancel, default`},
		{"reminder after timeout", "agents:\n  - name: a\n    routes:\n      - {assignees: [owner], timeout: 1m, remind: [2m]}\n", "c.yaml:4: agents[0].routes[0].remind[0]: 2m0s is not before the timeout (1m0s)"},
		{"oidc without people", "auth:\n  oidc: {issuer: 'https://id.example.com', clientId: c}\n", "c.yaml:2: auth.oidc: single sign-on maps a login to a person by email: add people: with an email"},
		{"oidc without issuer", people + "auth:\n  oidc: {clientId: c}\n", "c.yaml:5: auth.oidc.issuer: auth.oidc needs issuer"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse("c.yaml", []byte(c.src), env(nil))
			require.EqualError(t, err, c.want)
		})
	}
}
