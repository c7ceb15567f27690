package mcptest

import (
	"context"
	"net/http"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Wait bounds Connect and Recv.
const Wait = 30 * time.Second

// Bearer is an http.RoundTripper that sends every request with
// "Authorization: Bearer Token" over http.DefaultTransport.
type Bearer struct{ Token string }

// RoundTrip adds the header to a clone of r.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return http.DefaultTransport.RoundTrip(r)
}

// Progress is the question one progress notification names: the
// sessionId and requestId of its _meta (docs/design.md §11).
type Progress struct{ SessionID, RequestID string }

// Connect opens an official Go SDK client session, announcing itself as
// name, to base+"/mcp" with token, speaking protocol version (empty: the
// SDK's newest), with opts (nil: the SDK's defaults) and no transport
// retries. Progress notifications arrive on the returned channel (64 are
// buffered; more are dropped). The session is closed when the test ends; a
// failed connect within Wait fails the test.
func Connect(t testing.TB, base, token, version, name string, opts *sdk.ClientOptions) (*sdk.ClientSession, <-chan Progress) {
	t.Helper()
	ch := make(chan Progress, 64)
	if opts == nil {
		opts = &sdk.ClientOptions{}
	}
	opts.ProgressNotificationHandler = func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
		sid, _ := req.Params.Meta["sessionId"].(string)
		rid, _ := req.Params.Meta["requestId"].(string)
		select {
		case ch <- Progress{sid, rid}:
		default:
		}
	}
	c := sdk.NewClient(&sdk.Implementation{Name: name, Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), Wait)
	defer cancel()
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: Bearer{token}}, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("MCP connect to %s/mcp: %v", base, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, ch
}

// Text returns the text of res, which must hold exactly one TextContent;
// anything else fails the test.
func Text(t testing.TB, res *sdk.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("want one content, got %d: %v", len(res.Content), res.Content)
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

// Recv returns the next value of ch; nothing within Wait fails the test.
func Recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Wait):
		t.Fatalf("nothing received within %s", Wait)
		panic("unreachable")
	}
}

// CallResult is what one CallTool returned.
type CallResult struct {
	Res *sdk.CallToolResult
	Err error
}

// CallAsync runs cs.CallTool(p) in the background, within Wait, with
// progress token token (so that the server sends progress notifications
// naming its question); the result arrives on the returned channel.
func CallAsync(cs *sdk.ClientSession, p *sdk.CallToolParams, token any) <-chan CallResult {
	done := make(chan CallResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), Wait)
		defer cancel()
		p.SetProgressToken(token)
		res, err := cs.CallTool(ctx, p)
		done <- CallResult{res, err}
	}()
	return done
}
