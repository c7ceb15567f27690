// Package fakeanthropic is a fake Anthropic Messages API server for tests
// (docs/design.md §6, issue 6), the twin of internal/testkit/fakeopenai. It speaks the real
// wire format: POST /v1/messages with "stream": true answers Server-Sent
// Events named message_start, content_block_start, content_block_delta
// (text_delta, input_json_delta, thinking_delta), content_block_stop,
// message_delta (with stop_reason) and message_stop, plus ping and error
// events. Each test queues the turns the "model" plays with Push and reads
// back every request with Requests or WaitRequests, so it can assert the
// exact messages luban sent (for example the tool_result blocks after a
// resume).
//
// It also reproduces the habits of real providers: text and tool input cut
// into pieces of a few bytes (even inside a UTF-8 character), a body written
// to the socket a few bytes at a time, thinking blocks, 429 and 529 answers
// with retry-after, an error event in the middle of a stream, and streams
// that are cut or end without message_stop. EnforceThinking plays extended
// thinking, answering 400 when thinking blocks do not come back unchanged.
package fakeanthropic

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lubanhq/luban/internal/testkit/fakemodel"
)

// ToolUse is one tool_use block the fake model emits. Input is sent verbatim
// as input_json_delta pieces (it need not be valid JSON); empty sends no
// delta, so the block's input is the {} of its content_block_start.
type ToolUse struct {
	ID    string
	Name  string
	Input string
	// ThinkingBefore, when set, is streamed as a thinking block right
	// before this tool_use (interleaved thinking between tool calls).
	ThinkingBefore string
}

// Turn is one answer of the fake model: either a stream (Status 0 or 200) or
// an error response (any other Status).
type Turn struct {
	// Thinking is streamed first as a thinking block (thinking_delta pieces
	// and a signature_delta carrying Signature(Thinking)), which a client
	// must keep out of the answer text.
	Thinking string
	// RedactedThinking, when set, is the data of a redacted_thinking block
	// streamed after the thinking block (whole, in its content_block_start).
	RedactedThinking string
	// Text is streamed as a text block of text_delta pieces; empty means no
	// text block at all (a turn of tool_use blocks only).
	Text string
	// ToolUses follow the text, one content block each, in order (Anthropic
	// streams parallel tool calls as consecutive blocks, each identified by
	// its block index).
	ToolUses []ToolUse
	// ChunkBytes is the size in BYTES of the pieces Thinking, Text and each
	// Input are cut into; a cut may fall inside a multibyte UTF-8 character,
	// whose bytes then travel raw in two JSON strings. Zero means 4.
	ChunkBytes int
	// WriteBytes > 0 writes the whole SSE body to the socket in pieces of that
	// many bytes, each flushed on its own, so event lines, JSON and UTF-8
	// characters arrive split at arbitrary points.
	WriteBytes int
	// StopReason of message_delta. Empty means "tool_use" when ToolUses is
	// set, otherwise "end_turn".
	StopReason string
	// Status, when neither 0 nor 200, answers this HTTP status instead of a
	// stream (429 rate_limit_error, 529 overloaded_error, 500 api_error, ...),
	// with ErrorBody (default {"type":"error","error":{...}}) and the
	// retry-after header when RetryAfter is set.
	Status     int
	RetryAfter string
	ErrorBody  string
	// ErrorEvent, when set, is the error type (e.g. "overloaded_error") of an
	// "event: error" sent after the content blocks instead of message_delta
	// and message_stop, as the API does when it fails mid-stream.
	ErrorEvent string
	// CutAfterEvents > 0 aborts the connection after that many events were
	// flushed: the client reads an unexpected EOF.
	CutAfterEvents int
	// NoStop ends the HTTP body cleanly after the content blocks, with
	// neither message_delta nor message_stop.
	NoStop bool
	// NoMessageStop sends message_delta (with its stop_reason) but omits the
	// final message_stop.
	NoMessageStop bool
}

// Request is one recorded request to the fake server.
type Request struct {
	// Raw is the request body exactly as received.
	Raw []byte
	// Body is Raw decoded as a JSON object (nil when it is not one).
	Body map[string]any
	// Messages is Body["messages"], each a JSON object.
	Messages []map[string]any
	// System is Body["system"] as text: the string itself, or the text
	// blocks joined by "\n\n".
	System string
	// ToolNames are the names of Body["tools"][*].name, in order.
	ToolNames []string
	// Model is Body["model"].
	Model string
	// Header is the request's header (x-api-key and anthropic-version
	// included).
	Header http.Header
}

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	srv      *httptest.Server
	rec      *fakemodel.Recorder[Turn, Request]
	thinking thinkingMode
}

// New starts a fake server on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{rec: fakemodel.NewRecorder[Turn, Request]("fakeanthropic")}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL without /v1, as ANTHROPIC_BASE_URL expects (the SDK
// appends v1/messages).
func (s *Server) URL() string { return s.srv.URL }

// Push appends turns to the FIFO of answers. Each request consumes one turn;
// when the queue is empty the handler set by SetHandler answers, and without
// one the server answers 500 api_error "fakeanthropic: no turn queued" so that
// a test notices an unexpected model call.
func (s *Server) Push(turns ...Turn) {
	s.rec.Push(turns...)
}

// SetHandler sets a function that answers requests while the queue is empty.
// It runs on the server's goroutine; nil removes it.
func (s *Server) SetHandler(fn func(r *Request) Turn) {
	s.rec.SetHandler(fn)
}

// Requests returns every request recorded so far, in arrival order.
func (s *Server) Requests() []*Request {
	return s.rec.Requests()
}

// WaitRequests blocks until at least n requests were recorded and returns
// them all, or returns ctx's error. It waits on a signal, never by polling.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]*Request, error) {
	return s.rec.WaitRequests(ctx, n)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/messages" {
		writeError(w, http.StatusNotFound, "", "not_found_error", fmt.Sprintf("fakeanthropic: no route %s %s", r.Method, r.URL.Path))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "invalid_request_error", "fakeanthropic: read body: "+err.Error())
		return
	}
	req := parseRequest(raw, r.Header.Clone())

	seq, turn, have := s.rec.Next(req)
	id := fmt.Sprintf("msg_fake%d", seq)
	if !have {
		writeError(w, http.StatusInternalServerError, "", "api_error", "fakeanthropic: no turn queued")
		return
	}
	if r.Header.Get("anthropic-version") == "" {
		writeError(w, http.StatusBadRequest, "", "invalid_request_error", "fakeanthropic: anthropic-version header is required")
		return
	}
	if mt, ok := req.Body["max_tokens"].(float64); !ok || mt < 1 {
		writeError(w, http.StatusBadRequest, "", "invalid_request_error", "fakeanthropic: max_tokens is required")
		return
	}
	if stream, _ := req.Body["stream"].(bool); !stream && (turn.Status == 0 || turn.Status == http.StatusOK) {
		writeError(w, http.StatusBadRequest, "", "invalid_request_error", "fakeanthropic: only stream=true is supported")
		return
	}
	if s.rejectThinking(w, req) {
		return
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		if turn.RetryAfter != "" {
			w.Header().Set("retry-after", turn.RetryAfter)
		}
		writeError(w, turn.Status, turn.ErrorBody, errorType(turn.Status), fmt.Sprintf("fakeanthropic: status %d", turn.Status))
		return
	}
	s.thinking.remember(turn)
	streamTurn(w, id, req.Model, turn, fakemodel.Tokens(string(raw)))
}

// errorType is the Anthropic error type for an HTTP status.
func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status == 529:
		return "overloaded_error"
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return "timeout_error"
	case status >= 500:
		return "api_error"
	default:
		return "invalid_request_error"
	}
}

func parseRequest(raw []byte, h http.Header) *Request {
	b := fakemodel.ParseBody(raw)
	req := &Request{Raw: raw, Header: h, Body: b.Object, Model: b.Model, Messages: b.Messages}
	switch sys := req.Body["system"].(type) {
	case string:
		req.System = sys
	case []any:
		for i, b := range sys {
			bm, _ := b.(map[string]any)
			text, _ := bm["text"].(string)
			if i > 0 {
				req.System += "\n\n"
			}
			req.System += text
		}
	}
	if tools, ok := req.Body["tools"].([]any); ok {
		for _, t := range tools {
			tm, _ := t.(map[string]any)
			if name, ok := tm["name"].(string); ok {
				req.ToolNames = append(req.ToolNames, name)
			}
		}
	}
	return req
}

func writeError(w http.ResponseWriter, status int, body, typ, msg string) {
	if body == "" {
		b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}})
		body = string(b)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("request-id", "req_fake")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
