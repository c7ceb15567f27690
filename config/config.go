// Package config reads luban's configuration file (docs/design.md §9): one YAML
// document with the server's settings, its agents, MCP servers (docs/design.md §11)
// and webhooks (docs/design.md §12). It has no I/O beyond ReadFile: Parse takes the
// bytes and an environment lookup, so the same rules serve `luban serve
// --config`, `luban config check` and tests.
//
// Parsing is strict: an unknown key, a value of the wrong type, a bad
// duration, model name, glob or decision is an *Error that names the key
// (as a path such as agents[1].approval.write_file) and its line. `${VAR}`
// in a value reads the environment after parsing, so a variable can never
// add keys or structure; `${VAR:-default}` gives a default and `$$` is a
// literal dollar sign. An unset or empty variable without a default is an
// error.
package config

import (
	"time"

	"github.com/lubanhq/luban/approval"
)

// MaxFileBytes bounds the size of a configuration file.
const MaxFileBytes = 1 << 20

// MaxMaxSteps bounds an agent's maxSteps.
const MaxMaxSteps = 1000

// File is a parsed and validated configuration file. Fields that were not
// in the file keep their zero value; Set reports which server keys were.
type File struct {
	// Server holds the settings that have a `luban serve` flag; a flag or
	// its environment twin overrides the file (docs/design.md §9).
	Server Server
	// Agents in file order; the first is the default agent (docs/design.md §9).
	// Empty when the file has no agents: the built-in default agent is used.
	Agents []Agent
	// MCP is the `mcp:` section (docs/design.md §11): parsed and validated.
	MCP MCP
	// Webhooks is the `webhooks:` list (docs/design.md §12): parsed and validated.
	Webhooks []Webhook
	// People is the `people:` list (docs/design.md §16) in file order;
	// empty: every token is a principal of its own.
	People []Person
	// Auth is the `auth:` section (single sign-on).
	Auth Auth
	// Notify is the `notify:` section (docs/design.md §17): email and Slack.
	Notify Notify
}

// Server is the `server:` section. Each field mirrors the `luban serve`
// flag of the same name (docs/design.md §8); the zero value means "not in the file".
type Server struct {
	Addr string // addr
	DB   string // db
	// DBLine is the line of db (0 when not in the file): a SQLite path in a
	// missing directory is refused naming this line.
	DBLine    int
	Model     string // model: the default model of agents without one
	Workspace string // workspace
	// WorkspaceLine is the line of workspace (0 when not in the file): the
	// directory is checked only where it is used (serve, config check), which
	// name this line when it is not an existing directory.
	WorkspaceLine int
	// InteractionTTL is interactionTTL, a positive Go duration.
	InteractionTTL time.Duration
	// AuthTokens is authTokens: a list (one principal each).
	AuthTokens []string
	// AskTools is askTools of the built-in default agent (nil: not set).
	AskTools []string
	// Lease is lease, a positive Go duration.
	Lease time.Duration
	// SSEHeartbeat is sseHeartbeat, a positive Go duration.
	SSEHeartbeat time.Duration
	// PublicURL is publicUrl: the absolute http(s) URL people reach the
	// server at, the base of action links (docs/design.md §17); no query
	// or fragment.
	PublicURL string
	// SigningKeys is signingKeys: the path of the signing key file
	// (docs/design.md §17).
	SigningKeys string
}

// Agent is one entry of `agents:` (docs/design.md §9).
type Agent struct {
	// Name is the agent's id in the API: 1–64 characters of [A-Za-z0-9_-],
	// unique in the file. Required.
	Name string
	// Model is as --model (openai:<name>, anthropic:<name>, scripted,
	// scripted:<file>); empty means the server's model.
	Model string
	// Instructions is the system prompt; empty means luban's default.
	Instructions string
	// Tools is the allowlist: tool names or globs (path.Match syntax) in the
	// order offered to the model. Nil means the built-in tools
	// (current_time, list_files, read_file, write_file).
	Tools []string
	// AskTools lists the ask tools offered (ask_user, AskUser); nil means
	// both, an empty list none.
	AskTools []string
	// Approval is the approval policy, rules in file order: a mapping
	// (tool → always | never) or a list of {tool, when?, policy} tried in
	// order (Ordered; docs/design.md §16).
	Approval approval.Policy
	// Routes say who answers the agent's questions (docs/design.md §16),
	// tried in order: the first that matches takes the question.
	Routes []Route
	// MaxSteps bounds model calls per run, 1..MaxMaxSteps; 0 means the
	// runner's default.
	MaxSteps int
	// Line is the line of the agent's entry, for errors found later (a tool
	// that is not registered).
	Line int
	// ToolLines holds the line of each Tools entry.
	ToolLines []int
}

// MCP is the `mcp:` section (docs/design.md §11).
type MCP struct {
	Servers []MCPServer
}

// MCPServer is one entry of `mcp.servers:` (docs/design.md §11): a stdio server
// (Command, Args, Env) or a streamable HTTP one (URL, Headers), never both.
type MCPServer struct {
	// Name prefixes the server's tools as <name>__<tool>: 1–64 characters of
	// [A-Za-z0-9-], unique. Required.
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// Timeout bounds one tool call (a positive Go duration; 0: the
	// client's default). Time a person spends answering the server's
	// elicitation does not count.
	Timeout time.Duration
	// ConnectTimeout bounds connecting: starting (stdio) or reaching (HTTP)
	// the server, initialize and the first tools/list (a positive Go
	// duration; 0: the client's default, 2m, enough for a first npx
	// download). An attempt that runs out of it is retried with backoff.
	ConnectTimeout time.Duration
	// OAuth, when set (an HTTP server's `oauth:`), makes luban an OAuth 2.1
	// client of the server (docs/design.md §11, docs/mcp.md "OAuth"): it
	// discovers the authorization server, registers or uses the configured
	// client, and a person authorizes once from the page.
	OAuth *MCPOAuth
	Line  int
}

// MCPOAuth is an HTTP MCP server's `oauth:` (docs/design.md §11). Every
// field is optional: without ClientID luban registers itself with the
// authorization server (RFC 7591), or uses ClientMetadataURL as its client
// id where the server supports client ID metadata documents.
type MCPOAuth struct {
	// ClientID and ClientSecret are a client registered beforehand (the
	// secret only for a confidential client; it needs ClientID).
	ClientID, ClientSecret string
	// ClientMetadataURL is an https URL, not the bare origin, of luban's
	// client ID metadata document, used as the client id by an
	// authorization server that announces client_id_metadata_document_supported.
	ClientMetadataURL string
	// Scopes are requested beside the ones the server names (its
	// WWW-Authenticate challenge, else its protected resource metadata).
	Scopes []string
	// Authorizers may connect the server from the page: person ids and
	// group:<id> (docs/design.md §16). Empty: anyone who can sign in.
	Authorizers []string
}

// Webhook is one entry of `webhooks:` (docs/design.md §12, Standard Webhooks).
type Webhook struct {
	// URL is an http or https URL. Required.
	URL string
	// Secret is the signing secret, "whsec_" followed by base64. Required.
	Secret string
	// Events is a subset of WebhookEvents; empty means all of them.
	Events []string
	Line   int
}

// WebhookEvents are the event types a webhook may subscribe to (docs/design.md §12).
var WebhookEvents = []string{"interaction.requested", "interaction.resolved", "run.finished"}
