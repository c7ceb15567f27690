package mcpclienttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/fakeopenai"
	"github.com/lubanhq/luban/store/postgres/pgtest"
)

// bookingServer is a go-sdk MCP server (stateless streamable HTTP, which
// is how the SDK serves protocol 2026-07-28) whose tool "book"
// answers a 2026-07-28 client with input_required and a requestState, and
// books once the retry carries the answer and the same state.
type bookingServer struct {
	mu    sync.Mutex
	calls []*sdk.CallToolParamsRaw
	url   string
}

func startBooking(t *testing.T) *bookingServer {
	b := &bookingServer{}
	srv := sdk.NewServer(&sdk.Implementation{Name: "booking", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "book", Description: "Books a seat on a flight",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			b.mu.Lock()
			b.calls = append(b.calls, req.Params)
			b.mu.Unlock()
			var args struct {
				City string `json:"city"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			state := "signed:" + args.City
			if req.Params.RequestState == "" {
				return &sdk.CallToolResult{RequestState: state, InputRequests: sdk.InputRequestMap{
					"seat": &sdk.ElicitParams{Mode: "form", Message: "Which seat to " + args.City + "?", RequestedSchema: json.RawMessage(
						`{"type":"object","properties":{"seat":{"type":"string","title":"Seat","oneOf":[{"const":"window","title":"Window"},{"const":"aisle","title":"Aisle"}]}},"required":["seat"]}`)},
					"wine": &sdk.ElicitParams{Mode: "url", Message: "Pick a wine", URL: "https://wine.example.com/pick", ElicitationID: "w1"},
				}}, nil
			}
			if req.Params.RequestState != state {
				res := &sdk.CallToolResult{}
				res.SetError(fmt.Errorf("requestState %q is not ours", req.Params.RequestState))
				return res, nil
			}
			r, ok := req.Params.InputResponses["seat"].(*sdk.ElicitResult)
			if !ok {
				return nil, fmt.Errorf("no answer for seat: %v", req.Params.InputResponses)
			}
			if r.Action != "accept" {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "not booked: " + r.Action}}}, nil
			}
			w, ok := req.Params.InputResponses["wine"].(*sdk.ElicitResult)
			if !ok {
				return nil, fmt.Errorf("no answer for wine: %v", req.Params.InputResponses)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("booked %s, seat %v, wine %s", args.City, r.Content["seat"], w.Action)}}}, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, &sdk.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(hs.Close)
	b.url = hs.URL
	return b
}

func (b *bookingServer) Calls() []*sdk.CallToolParamsRaw {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*sdk.CallToolParamsRaw(nil), b.calls...)
}

// A 2026-07-28 server's input_required is persisted with the question: luban
// is killed (SIGKILL) between the question and the answer, the next process
// shows the same question, the round's second request (a URL) is asked
// once the first is answered, and the answers retry the original call with
// inputResponses and the same requestState.
func TestInputRequiredAcrossRestart(t *testing.T) {
	t.Parallel()
	inputRequiredAcrossRestart(t, filepath.Join(t.TempDir(), "luban.db"))
}

// The same on PostgreSQL (LUBAN_TEST_POSTGRES), a fresh schema.
func TestInputRequiredAcrossRestartPostgres(t *testing.T) {
	t.Parallel()
	inputRequiredAcrossRestart(t, pgtest.Schema(t))
}

func inputRequiredAcrossRestart(t *testing.T, db string) {
	b := startBooking(t)
	cfg := writeConfig(t, fmt.Sprintf(`
mcp:
  servers:
    - name: booking
      url: %s
`, b.url))
	fake := fakeopenai.New(t)
	fake.Push(call("c_book", "booking__book", `{"city":"Paris"}`), text("Booked."))
	p1 := startProc(t, "p1", db, fake, cfg)
	evs := until(t, p1.API.Chat("", "book me a flight to Paris"), "user_input_required")
	q := decode(t, last(evs))
	assert.Equal(t, "elicitation", q["tool"])
	assert.Equal(t, "form", q["mode"])
	assert.Equal(t, "booking", q["server"])
	assert.Equal(t, "c_book", q["toolCallId"])
	assert.Equal(t, "Which seat to Paris?", q["title"])
	opts := q["fields"].([]any)[0].(map[string]any)["options"].([]any)
	assert.Equal(t, map[string]any{"value": "window", "label": "Window"}, opts[0])
	sid, rid := q["sessionId"].(string), q["id"].(string)
	require.Len(t, b.Calls(), 1)
	p1.Kill9()
	p1.WaitKilled()

	p2 := startProc(t, "p2", db, fake, cfg)
	var pending struct {
		Pending map[string]any `json:"pending"`
	}
	require.Equal(t, 200, p2.API.JSON("GET", "/api/interactions/pending?sessionId="+sid, nil, &pending))
	require.NotNil(t, pending.Pending)
	assert.Equal(t, rid, pending.Pending["id"], "the same question after the restart")
	assert.Equal(t, true, pending.Pending["resumable"])

	code, body := continueJSON(t, p2, map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept", "content": map[string]any{"seat": "middle"}})
	require.Equal(t, http.StatusUnprocessableEntity, code, "middle is not one of the options: %v", body)
	resp := p2.API.Continue(map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept", "content": map[string]any{"seat": "aisle"}})
	require.Equal(t, 200, resp.StatusCode)
	evs = until(t, p2.API.Open(resp, "answer"), "user_input_required")
	w := decode(t, last(evs))
	assert.Equal(t, "url", w["mode"], "the round's second request, asked after the first is answered")
	assert.Equal(t, "https://wine.example.com/pick", w["url"])
	assert.Equal(t, "c_book", w["toolCallId"])
	require.Len(t, b.Calls(), 1, "no retry before every request of the round is answered")
	resp = p2.API.Continue(map[string]any{"sessionId": sid, "requestId": w["id"], "decision": "decline"})
	require.Equal(t, 200, resp.StatusCode)
	rest := until(t, p2.API.Open(resp, "wine"), "done")
	res := toolResult(t, rest, "c_book")
	assert.Equal(t, "booked Paris, seat aisle, wine decline", res["content"])
	assert.Equal(t, false, res["isError"])
	assert.Equal(t, "completed", decode(t, last(rest))["status"])

	calls := b.Calls()
	require.Len(t, calls, 2, "asked once, retried once")
	assert.Equal(t, "signed:Paris", calls[1].RequestState)
	assert.Contains(t, calls[1].InputResponses, "seat")
	assert.Contains(t, calls[1].InputResponses, "wine")

	code, body = continueJSON(t, p2, map[string]any{"sessionId": sid, "requestId": rid, "decision": "accept", "content": map[string]any{"seat": "window"}})
	assert.Equal(t, http.StatusConflict, code, "answered exactly once: %v", body)
}
