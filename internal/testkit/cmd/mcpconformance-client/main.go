// Command mcpconformance-client is luban's MCP client as the official
// conformance suite (@modelcontextprotocol/conformance, `conformance client
// --command`) drives a client: it is started with the scenario server's URL
// as its argument, MCP_CONFORMANCE_SCENARIO naming the scenario and
// MCP_CONFORMANCE_CONTEXT holding its JSON context (a pre-registered
// client's client_id and client_secret). It connects with mcpclient.Manager,
// exactly as `luban serve` does (the server's oauth: config, the encrypted
// grant file, the authorization round a person completes), plays the person
// who authorizes (opens the authorization URL, hands the callback's code,
// state and iss to CompleteAuthorization), and calls the scenario's tool.
// It exits 1 with the reason when the server never becomes ready or the
// call fails. Run by internal/testkit/mcpconformance (docs/mcp.md).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/tool"
)

// callback is the redirect URI the suite's authorization servers send the
// code to; nothing listens there: the person's browser is this program,
// which reads the redirect instead of following it.
const callback = "http://localhost:3000/callback"

// cimdURL is the client ID metadata document URL the suite's CIMD scenario
// expects a client to use as its client_id.
const cimdURL = "https://conformance-test.local/client-metadata.json"

// tools is the tool each scenario expects a call of (none: connecting and
// listing is the scenario).
var tools = map[string]string{
	"tools_call":                          "add_numbers",
	"elicitation-sep1034-client-defaults": "test_client_elicitation_defaults",
	"sse-retry":                           "test_reconnection",
}

func main() {
	if len(os.Args) != 2 {
		fail(errors.New("usage: mcpconformance-client <server-url> (MCP_CONFORMANCE_SCENARIO set)"))
	}
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var cc map[string]any
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cc); err != nil {
			fail(fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err))
		}
	}
	if err := run(os.Args[1], scenario, cc); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mcpconformance-client:", err)
	os.Exit(1)
}

func run(serverURL, scenario string, cc map[string]any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Second)
	defer cancel()
	dir, err := os.MkdirTemp("", "luban-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))

	srv := config.MCPServer{Name: "conformance", URL: serverURL, Timeout: 20 * time.Second, ConnectTimeout: 20 * time.Second}
	toolName := tools[scenario]
	if strings.HasPrefix(scenario, "auth/") {
		srv.OAuth = &config.MCPOAuth{ClientMetadataURL: cimdURL}
		if id, ok := cc["client_id"].(string); ok {
			srv.OAuth.ClientID = id
			srv.OAuth.ClientSecret, _ = cc["client_secret"].(string)
		}
		toolName = "test-tool"
	}
	reg := tool.NewRegistry()
	var m *mcpclient.Manager
	authErr := make(chan error, 4)
	m = mcpclient.New([]config.MCPServer{srv}, mcpclient.Options{
		Registry: reg, Logger: log, Version: "conformance",
		MinBackoff: time.Hour, MaxBackoff: time.Hour, // one attempt: a failure is the scenario's outcome
		RedirectURL: callback,
		Tokens:      mcpclient.NewSecretFile(dir),
		OnAuthorization: func(a mcpclient.Authorization) {
			go func() { authErr <- authorize(ctx, m, a.Server) }()
		},
	})
	ready := make(chan struct{})
	m.Start(ctx, ready)
	defer m.Close()

	// Wait until the server is ready (after any authorization) or down.
	for {
		st := m.Status()[0]
		if st.State == mcpclient.StateReady {
			break
		}
		if st.State == mcpclient.StateDown {
			return fmt.Errorf("the server is down after %d attempt(s) (the log above says why)", st.Failures)
		}
		select {
		case err := <-authErr:
			if err != nil {
				return fmt.Errorf("authorizing: %w", err)
			}
		case <-ctx.Done():
			return fmt.Errorf("the server never became ready: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if toolName == "" {
		return nil
	}
	e, ok := reg.Get("conformance" + mcpclient.Separator + toolName)
	if !ok {
		return fmt.Errorf("the server lists no tool %s (registered: %v)", toolName, reg.Names())
	}
	args := json.RawMessage(`{}`)
	if toolName == "add_numbers" {
		args = json.RawMessage(`{"a":5,"b":3}`)
	}
	res, err := e.Tool.Call(tool.WithElicitor(ctx, person{}), args)
	if err != nil {
		return fmt.Errorf("calling %s: %w", toolName, err)
	}
	fmt.Printf("%s: %s\n", toolName, res.Content)
	if res.IsError {
		return fmt.Errorf("%s answered an error: %s", toolName, res.Content)
	}
	return nil
}

// authorize is the person: begins the round, opens the authorization URL
// (the suite's server approves at once and redirects to the callback), and
// hands what the callback received to CompleteAuthorization, as luban's
// GET /oauth/callback does.
func authorize(ctx context.Context, m *mcpclient.Manager, server string) error {
	u, err := m.BeginAuthorization(server, "conformance")
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.String() == "" {
		return fmt.Errorf("the authorization endpoint answered %s without a redirect", resp.Status)
	}
	q := loc.Query()
	_, err = m.CompleteAuthorization(q.Get("state"), q.Get("code"), q.Get("iss"), q.Get("error"), "conformance")
	return err
}

// person answers a form elicitation as the page would when its person
// accepts the form as shown: every field at its default.
type person struct{}

func (person) Elicit(_ context.Context, e tool.Elicitation) (tool.ElicitAnswer, error) {
	if e.Mode != "form" {
		return tool.ElicitAnswer{Action: "decline"}, nil
	}
	fields, err := elicit.Fields(e.RequestedSchema)
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	content := map[string]any{}
	for _, f := range fields {
		if len(f.Default) > 0 {
			var v any
			if err := json.Unmarshal(f.Default, &v); err == nil {
				content[f.Name] = v
			}
		}
	}
	return tool.ElicitAnswer{Action: "accept", Content: content}, nil
}
