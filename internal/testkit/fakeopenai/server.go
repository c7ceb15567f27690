// Package fakeopenai is a fake OpenAI-compatible Chat Completions server for
// tests (docs/design.md §6, issue 3 §6). It speaks the real wire format: POST
// /v1/chat/completions with "stream": true answers Server-Sent Events whose
// data lines are chat.completion.chunk JSON objects, flushed one by one and
// ended by "data: [DONE]". Each test queues the turns the "model" plays with
// Push and reads back every request body with Requests or WaitRequests, so it
// can assert the exact messages luban sent (for example after a resume).
//
// It also reproduces the habits of real providers (issue 6): text and
// tool-call arguments cut into pieces of a few bytes (even inside a UTF-8
// character), parallel tool calls identified only by index after their first
// chunk, DeepSeek's reasoning_content, 429/5xx answers with Retry-After, and
// streams that are cut or end without [DONE]. EnforceReasoning plays a
// thinking model that answers 400 when a tool-call turn comes back without
// its reasoning.
package fakeopenai

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

// ToolCall is one tool call the fake model makes. Arguments is sent verbatim
// (it need not be valid JSON), cut into Turn.ChunkBytes pieces.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Turn is one answer of the fake model: either a stream (Status 0 or 200) or
// an error response (any other Status).
type Turn struct {
	// Text is streamed as delta.content.
	Text string
	// Reasoning is streamed first as delta.reasoning_content (DeepSeek habit),
	// or in ReasoningField.
	Reasoning string
	// ReasoningField is the delta field Reasoning is streamed in: empty means
	// "reasoning_content" (DeepSeek, Qwen); "reasoning" plays vLLM,
	// OpenRouter and Ollama.
	ReasoningField string
	// ReasoningSignature, when set, also streams the reasoning as
	// OpenRouter's reasoning_details: each piece as a "reasoning.text" entry
	// at index 0 (format "anthropic-claude-v1"), then one piece carrying this
	// signature, as OpenRouter relays a routed model's signed thinking.
	ReasoningSignature string
	// ToolCalls are streamed as parallel tool calls by index: the first chunk
	// of each call carries index, id, type and name; later chunks carry only
	// index and an argument piece. Pieces of different calls are interleaved
	// round-robin, so a client must accumulate by index.
	ToolCalls []ToolCall
	// ChunkBytes is the size in BYTES of the pieces Text, Reasoning and each
	// call's Arguments are cut into; a cut may fall inside a multibyte UTF-8
	// character, whose bytes then travel raw in two JSON strings (as some
	// local servers do). Zero means 4.
	ChunkBytes int
	// FinishReason of the last chunk. Empty means "tool_calls" when ToolCalls
	// is set, otherwise "stop".
	FinishReason string
	// Status, when neither 0 nor 200, answers this HTTP status instead of a
	// stream, with ErrorBody (default {"error":{"message":...}}) and the
	// Retry-After header when RetryAfter is set (e.g. 429, 503).
	Status     int
	RetryAfter string
	ErrorBody  string
	// CutAfterChunks > 0 aborts the connection after that many chunks were
	// flushed: no finish_reason, no [DONE], and the HTTP body ends without
	// its terminating chunk, so the client sees an unexpected EOF.
	CutAfterChunks int
	// NoDone ends the stream normally (finish_reason included) but omits the
	// final "data: [DONE]" line.
	NoDone bool
	// NoFinish ends the HTTP body cleanly after the content chunks, with
	// neither the finish_reason chunk nor [DONE]: a stream that stopped
	// early without a transport error.
	NoFinish bool
	// Hold, when not nil, keeps the stream open after the content chunks
	// until Hold is closed or the client goes away (a model still
	// generating); a client that went away gets nothing more.
	Hold <-chan struct{}
	// Gone, when not nil, is closed when the client went away during Hold.
	Gone chan struct{}
}

// Request is one recorded request to the fake server.
type Request struct {
	// Raw is the request body exactly as received.
	Raw []byte
	// Body is Raw decoded as a JSON object (nil when it is not one).
	Body map[string]any
	// Messages is Body["messages"], each a JSON object.
	Messages []map[string]any
	// ToolNames are the names of Body["tools"][*].function.name, in order.
	ToolNames []string
	// Model is Body["model"].
	Model string
	// Header is the request's header (Authorization included).
	Header http.Header
}

// Server is a running fake. Its methods are safe for concurrent use.
type Server struct {
	srv       *httptest.Server
	rec       *fakemodel.Recorder[Turn, Request]
	reasoning reasoningMode
}

// New starts a fake server on 127.0.0.1 and closes it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{rec: fakemodel.NewRecorder[Turn, Request]("fakeopenai")}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the base URL ending in /v1, as OPENAI_BASE_URL expects.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Push appends turns to the FIFO of answers. Each request consumes one turn;
// when the queue is empty the handler set by SetHandler answers, and without
// one the server answers 500 {"error":{"message":"fakeopenai: no turn queued"}}
// so that a test notices an unexpected model call.
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
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		writeError(w, http.StatusNotFound, "", fmt.Sprintf("fakeopenai: no route %s %s", r.Method, r.URL.Path))
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "", "fakeopenai: read body: "+err.Error())
		return
	}
	req := parseRequest(raw, r.Header.Clone())

	seq, turn, have := s.rec.Next(req)
	id := fmt.Sprintf("chatcmpl-fake%d", seq)
	if !have {
		writeError(w, http.StatusInternalServerError, "", "fakeopenai: no turn queued")
		return
	}
	if stream, _ := req.Body["stream"].(bool); !stream && (turn.Status == 0 || turn.Status == http.StatusOK) {
		writeError(w, http.StatusBadRequest, "", "fakeopenai: only stream=true is supported")
		return
	}
	if s.rejectReasoning(w, req) {
		return
	}
	if turn.Status != 0 && turn.Status != http.StatusOK {
		if turn.RetryAfter != "" {
			w.Header().Set("Retry-After", turn.RetryAfter)
		}
		writeError(w, turn.Status, turn.ErrorBody, fmt.Sprintf("fakeopenai: status %d", turn.Status))
		return
	}
	s.reasoning.remember(turn)
	var usage *Usage
	if so, _ := req.Body["stream_options"].(map[string]any); so != nil {
		if on, _ := so["include_usage"].(bool); on {
			usage = &Usage{PromptTokens: fakemodel.Tokens(string(raw)), CompletionTokens: OutputTokens(turn)}
		}
	}
	streamTurn(r.Context(), w, id, req.Model, turn, s.reasoning.enabled(), usage)
}

func parseRequest(raw []byte, h http.Header) *Request {
	b := fakemodel.ParseBody(raw)
	req := &Request{Raw: raw, Header: h, Body: b.Object, Model: b.Model, Messages: b.Messages}
	if tools, ok := req.Body["tools"].([]any); ok {
		for _, t := range tools {
			tm, _ := t.(map[string]any)
			fn, _ := tm["function"].(map[string]any)
			if name, ok := fn["name"].(string); ok {
				req.ToolNames = append(req.ToolNames, name)
			}
		}
	}
	return req
}

func writeError(w http.ResponseWriter, status int, body, msg string) {
	if body == "" {
		writeErrorTyped(w, status, "server_error", msg)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// writeErrorTyped answers {"error":{"message","type","code","param"}}.
func writeErrorTyped(w http.ResponseWriter, status int, typ, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg, "type": typ, "code": nil, "param": nil,
	}})
	writeError(w, status, string(b), msg)
}

// Usage is the usage chunk the fake sends before [DONE] when the request
// asked for it (stream_options.include_usage): PromptTokens is
// fakemodel.Tokens of the whole request body, CompletionTokens is
// OutputTokens of the turn.
type Usage struct {
	PromptTokens, CompletionTokens int64
}

// OutputTokens is fakemodel.Tokens of everything a turn streams: its
// reasoning, its text, and each tool call's name and arguments.
func OutputTokens(t Turn) int64 {
	s := t.Reasoning + t.Text
	for _, c := range t.ToolCalls {
		s += c.Name + c.Arguments
	}
	return fakemodel.Tokens(s)
}
