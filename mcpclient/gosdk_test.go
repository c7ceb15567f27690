package mcpclient_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/config"
	"github.com/lubanhq/luban/elicit"
	"github.com/lubanhq/luban/mcpclient"
	"github.com/lubanhq/luban/tool"
)

var objectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// goServer serves srv over stateful streamable HTTP (the transport that
// sends notifications such as tools/list_changed).
func goServer(t *testing.T, srv *sdk.Server) string {
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL
}

func waitGone(t *testing.T, reg *tool.Registry, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if _, ok := reg.Get(name); !ok {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("tool %s still registered", name)
}

// Tools added and removed on a connected server reach the registry through
// notifications/tools/list_changed; a call that outlives the server's
// timeout is an error result, and time spent on the server's elicitation
// does not count against it.
func TestListChangedAndTimeout(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "go", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: objectSchema}, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	srv.AddTool(&sdk.Tool{Name: "ask", InputSchema: objectSchema}, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Your name?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)})
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: res.Action + " " + res.Content["name"].(string)}}}, nil
	})
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "go", URL: goServer(t, srv), Timeout: 300 * time.Millisecond}}, mcpclient.Options{Registry: reg})
	start(t, m)
	slow := waitTool(t, reg, "go__slow")

	srv.AddTool(&sdk.Tool{Name: "late", Description: "added after connect", InputSchema: objectSchema}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
	})
	late := waitTool(t, reg, "go__late")
	assert.Equal(t, "added after connect", late.Spec.Description)
	srv.RemoveTools("late")
	waitGone(t, reg, "go__late")

	res := call(t, slow, context.Background(), `{}`)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "timed out after 300ms")

	ask := waitTool(t, reg, "go__ask")
	p := &slowPerson{wait: time.Second}
	res = call(t, ask, tool.WithElicitor(context.Background(), p), `{}`)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "accept Ada", res.Content, "a person answering for longer than the timeout is not a timeout")

	res = call(t, ask, context.Background(), `{}`)
	assert.True(t, res.IsError, "a call without a person to ask fails the server's elicitation: %s", res.Content)
}

// slowPerson answers after wait (longer than the server's timeout).
type slowPerson struct{ wait time.Duration }

func (p *slowPerson) Elicit(ctx context.Context, e tool.Elicitation) (tool.ElicitAnswer, error) {
	pr, err := elicit.Prompt(e)
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	select {
	case <-time.After(p.wait):
	case <-ctx.Done():
		return tool.ElicitAnswer{}, ctx.Err()
	}
	a, err := elicit.ValidateAnswer(pr, elicit.Answer{Decision: api.DecisionAccept, Content: json.RawMessage(`{"name":"Ada"}`)})
	if err != nil {
		return tool.ElicitAnswer{}, err
	}
	return elicit.Result(a), nil
}

// An HTTP MCP server that answers with a redirect to another origin is not
// followed there: the configured headers (a bearer token) and the requests
// never reach the other origin, and the server stays down with the refusal
// in its status. A redirect within the configured origin is followed.
func TestRedirectToAnotherOriginRefused(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "go", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "hello", InputSchema: objectSchema}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "hi"}}}, nil
	})
	mcpHandler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var elsewhere atomic.Int32
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		if a := r.Header.Get("Authorization"); a != "" {
			leaked.Store(a)
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(other.Close)
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpHandler)
	mux.HandleFunc("/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	origin := httptest.NewServer(mux)
	t.Cleanup(origin.Close)

	headers := map[string]string{"Authorization": "Bearer s3cret"}
	var logs syncBuffer
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{
		{Name: "away", URL: origin.URL + "/away", Headers: headers, Timeout: 5 * time.Second},
		{Name: "moved", URL: origin.URL + "/moved", Headers: headers, Timeout: 5 * time.Second},
	}, mcpclient.Options{Registry: reg, MinBackoff: time.Hour, MaxBackoff: time.Hour, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	start(t, m)
	waitTool(t, reg, "moved__hello")
	assert.Zero(t, elsewhere.Load(), "no request reached the other origin")
	assert.Nil(t, leaked.Load(), "the bearer token never left the configured origin")
	_, ok := reg.Get("away__hello")
	assert.False(t, ok)
	for _, st := range m.Status() {
		if st.Name == "away" {
			assert.Equal(t, mcpclient.StateDown, st.State)
		}
	}
	assert.Contains(t, logs.String(), "redirect to another origin", "the log says why the server is down")
}

// A call approved by a person carries the signed receipt of that approval
// to the MCP server in _meta (docs/design.md §29); a call without one
// carries none.
func TestApprovalReceiptInMeta(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "go", Version: "1"}, nil)
	got := make(chan sdk.Meta, 2)
	srv.AddTool(&sdk.Tool{Name: "deploy", InputSchema: objectSchema}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		got <- req.Params.Meta
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	})
	reg := tool.NewRegistry()
	m := mcpclient.New([]config.MCPServer{{Name: "go", URL: goServer(t, srv)}}, mcpclient.Options{Registry: reg})
	start(t, m)
	deploy := waitTool(t, reg, "go__deploy")

	call(t, deploy, tool.WithApprovalReceipt(context.Background(), "h.p.s"), `{}`)
	require.Equal(t, "h.p.s", (<-got)[mcpclient.ReceiptMetaKey])
	call(t, deploy, context.Background(), `{}`)
	_, has := (<-got)[mcpclient.ReceiptMetaKey]
	require.False(t, has)
}
