// Package openai is luban's model.Provider for OpenAI-compatible Chat
// Completions endpoints (docs/design.md §6): OpenAI, DeepSeek, Qwen compatible mode,
// Ollama, vLLM and the llama.cpp server, chosen by base URL and model name
// alone. It is built on the official SDK github.com/openai/openai-go/v3,
// always streams, sends tools as function tools and accumulates parallel tool
// calls by index (issue 6 "provider habits").
//
// The SDK's own retries are disabled; Generate retries a failed call itself
// (429, 408, 5xx, connection errors, a stream cut before its finish_reason)
// so that model.Response.Retries is exact.
package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/tidwall/gjson"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/internal/retry"
)

// Defaults of Options.
const (
	DefaultMaxRetries  = 3
	DefaultCallTimeout = 2 * time.Minute
	DefaultBaseBackoff = 500 * time.Millisecond
	// MaxBackoff caps every wait between attempts, Retry-After included.
	MaxBackoff = 30 * time.Second
)

// ErrIncompleteStream means a stream ended (cleanly or not) before any chunk
// carried a finish_reason. Generate retries it; it reaches the caller wrapped
// once the retries are exhausted.
var ErrIncompleteStream = errors.New("openai: stream ended before finish_reason")

// Options configure a Provider. Only Model is required.
type Options struct {
	// BaseURL of the API including its version path, e.g.
	// https://api.openai.com/v1 (OPENAI_BASE_URL), http://127.0.0.1:11434/v1
	// for Ollama. Empty means the SDK's default: OPENAI_BASE_URL from the
	// environment when set, else https://api.openai.com/v1.
	BaseURL string
	// APIKey is sent as "Authorization: Bearer <key>" (OPENAI_API_KEY). It may
	// be empty for servers that need none (Ollama, llama.cpp); then no
	// Authorization header is sent, even when OPENAI_API_KEY is set.
	APIKey string
	// Model is the model name sent in every request, e.g. "gpt-4o-mini",
	// "deepseek-chat", "qwen2.5:7b". Required.
	Model string
	// HTTPClient carries the requests; nil means a client shared by the
	// providers that have none: http.DefaultTransport's settings, but
	// keeping up to MaxIdleConnsPerHost idle connections to a model host
	// instead of 2, so that concurrent runs reuse their connections instead
	// of dialing (and handshaking) again.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed call is retried (429, 408, 5xx,
	// connection error, a stream cut before its finish_reason). 0 means
	// DefaultMaxRetries (3); -1 disables retries.
	MaxRetries int
	// CallTimeout bounds one whole Generate call: every attempt, every stream
	// and every wait between attempts. 0 means DefaultCallTimeout (2m).
	CallTimeout time.Duration
	// BaseBackoff is the wait before the first retry, doubled for each further
	// one and capped at MaxBackoff. A Retry-After (seconds or HTTP date) or
	// retry-after-ms header replaces it for that retry, also capped at
	// MaxBackoff. 0 means DefaultBaseBackoff (500ms).
	BaseBackoff time.Duration
}

// Provider generates assistant turns through an OpenAI-compatible endpoint.
// It is safe for concurrent use and holds no per-conversation state.
type Provider struct {
	opts   Options
	client oai.Client
	defs   toolDefs
}

// New returns a Provider for opts. It fails when opts.Model is empty.
// APIKey always replaces OPENAI_API_KEY; the SDK still reads its other
// ambient variables (OPENAI_BASE_URL when BaseURL is empty, OPENAI_ORG_ID,
// OPENAI_PROJECT_ID, OPENAI_CUSTOM_HEADERS).
func New(opts Options) (*Provider, error) {
	if opts.Model == "" {
		return nil, errors.New("openai: Options.Model is required")
	}
	if opts.MaxRetries == 0 {
		opts.MaxRetries = DefaultMaxRetries
	}
	if opts.MaxRetries < 0 {
		opts.MaxRetries = 0
	}
	if opts.CallTimeout <= 0 {
		opts.CallTimeout = DefaultCallTimeout
	}
	if opts.BaseBackoff <= 0 {
		opts.BaseBackoff = DefaultBaseBackoff
	}
	ro := []option.RequestOption{
		option.WithAPIKey(opts.APIKey),
		// A request of this provider carries APIKey or no Authorization,
		// never OPENAI_ADMIN_KEY (the SDK's generic Post would send it).
		option.WithAdminAPIKey(""),
		option.WithMaxRetries(0),
		option.WithMiddleware(inMemoryBody, drainRest),
	}
	if opts.BaseURL != "" {
		ro = append(ro, option.WithBaseURL(opts.BaseURL))
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = sharedClient
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	return &Provider{opts: opts, client: oai.NewClient(ro...)}, nil
}

// Name is "openai:<model>".
func (p *Provider) Name() string { return "openai:" + p.opts.Model }

// Generate streams one assistant turn for req. Text deltas go to onDelta (may
// be nil) in order, always as whole UTF-8 characters even when the server cut
// a character between two chunks. reasoning_content (DeepSeek) never enters
// the text.
//
// A failed attempt is retried whole, up to Options.MaxRetries times with
// backoff. Deltas of a failed attempt may already have gone through onDelta
// before it failed; the next attempt streams its text again from the start.
// The returned Response holds the text and tool calls of the successful
// attempt only, and Retries counts the failed attempts before it.
//
// Errors: a *model.CallError with the retry count (for the trace, issue 6)
// wrapping the last attempt's error; errors.As finds *oai.Error for
// an HTTP error status, errors.Is finds ErrIncompleteStream for a cut stream
// and context.DeadlineExceeded when CallTimeout ran out. A 4xx other than 408
// and 429 is not retried.
func (p *Provider) Generate(ctx context.Context, req *model.Request, onDelta func(text string)) (*model.Response, error) {
	body, err := p.requestBody(req)
	if err != nil {
		return nil, &model.CallError{Err: err}
	}
	return retry.Do(ctx, retry.Policy{
		Prefix:      "openai: " + p.Name(),
		MaxRetries:  p.opts.MaxRetries,
		CallTimeout: p.opts.CallTimeout,
		BaseBackoff: p.opts.BaseBackoff,
		MaxBackoff:  MaxBackoff,
		Retryable:   retryable,
		Header:      retryHeader,
		Detail:      detail,
	}, func(ctx context.Context) (*model.Response, error) {
		return p.attempt(ctx, body, onDelta, req.OnReasoning)
	})
}

// attempt runs one streaming request with body (requestBody) and
// accumulates its turn. The request goes through the SDK's client (its
// base URL, auth, headers, middleware and *oai.Error for an HTTP error
// status), its body as requestBody wrote it (with "stream": true, so the
// SDK neither encodes parameters nor sets the field by rewriting the
// body), and the answer is read with the SDK's SSE decoder into its
// ChatCompletionChunk with the chunk's own decoder (readChunks).
func (p *Provider) attempt(ctx context.Context, body []byte, onDelta, onReasoning func(string)) (*model.Response, error) {
	var resp *http.Response
	err := p.client.Post(ctx, "chat/completions", nil, &resp, option.WithRequestBody("application/json", body))
	if err != nil {
		if resp != nil && resp.Body != nil {
			_ = resp.Body.Close()
		}
		return nil, err
	}
	acc := accumulator{onReasoning: onReasoning}
	if err := readChunks(ssestream.NewDecoder(resp), func(c *oai.ChatCompletionChunk) { acc.add(c, onDelta) }); err != nil {
		return nil, err
	}
	if acc.finish == "" {
		return nil, ErrIncompleteStream
	}
	acc.flush(onDelta)
	return acc.response(), nil
}

// readChunks reads a Chat Completions stream from dec to its "[DONE]" or its
// end and hands each chunk to add, then closes dec. It keeps the contract
// of the SDK's ssestream.Stream: a chunk with an "error" member ends the
// stream with an *ssestream.StreamError, a chunk that does not decode ends
// it with the decoding's error; but a chunk is decoded once, by
// ChatCompletionChunk's own decoder, where the Stream validates it with
// encoding/json and scans it for "error" first. One chunk value is reused:
// add must not keep it.
func readChunks(dec ssestream.Decoder, add func(*oai.ChatCompletionChunk)) error {
	if dec == nil {
		return nil
	}
	defer dec.Close()
	var c oai.ChatCompletionChunk
	for dec.Next() {
		data := dec.Event().Data
		if bytes.HasPrefix(data, doneData) {
			return nil
		}
		c = oai.ChatCompletionChunk{}
		err := c.UnmarshalJSON(data)
		if _, ok := c.JSON.ExtraFields["error"]; ok || err != nil {
			if ep := gjson.GetBytes(data, "error"); ep.Exists() {
				return &ssestream.StreamError{Message: "received error while streaming: " + ep.String(), Event: dec.Event()}
			}
			if err != nil {
				return err
			}
		}
		add(&c)
	}
	return dec.Err()
}

var doneData = []byte("[DONE]")

// MaxIdleConnsPerHost is how many idle connections the default client
// (Options.HTTPClient nil) keeps to one model host.
const MaxIdleConnsPerHost = 64

var sharedClient = &http.Client{Transport: pooledTransport()}

// pooledTransport is http.DefaultTransport with MaxIdleConnsPerHost idle
// connections kept per host.
func pooledTransport() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	return t
}

// inMemoryBody is a client middleware: a request whose body can be had
// again (GetBody: the SDK's for a body of bytes) is sent with that body,
// an in-memory reader net/http knows, instead of the SDK's close-once
// wrapper of it. net/http writes a body it knows to be in memory right
// after the headers, through the connection's buffer; any other body gets
// the headers flushed alone first (one more write(2) a call) and is copied
// through a buffer of its own size allocated for the call.
func inMemoryBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	if req.GetBody != nil && req.ContentLength > 0 {
		if b, err := req.GetBody(); err == nil {
			req.Body = b
		}
	}
	return next(req)
}

// Bounds of drainingBody.Close.
const (
	drainMax  = 4 << 10
	drainWait = 50 * time.Millisecond
)

// drainRest is a client middleware: a response's body, when closed, first
// reads what is left of it. The SDK closes a stream's body at its
// "data: [DONE]" line, before the body's own end (the chunked encoding's
// last chunk) may have been read, and an HTTP/1.1 connection whose
// response body is closed before its end is closed, not kept: the next
// call dialed again (on loopback, 2–5 calls in 30; against a remote server
// a TCP and TLS handshake each).
func drainRest(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	resp, err := next(req)
	if err == nil && resp != nil && resp.Body != nil {
		resp.Body = &drainingBody{ReadCloser: resp.Body}
	}
	return resp, err
}

// drainingBody reads at most drainMax more bytes, for at most drainWait,
// before it closes: a server that sends more, or keeps the response open,
// gets the connection closed as before.
type drainingBody struct{ io.ReadCloser }

func (b *drainingBody) Close() error {
	t := time.AfterFunc(drainWait, func() { _ = b.ReadCloser.Close() })
	_, _ = io.CopyN(io.Discard, b.ReadCloser, drainMax)
	t.Stop()
	return b.ReadCloser.Close()
}

// detail is the server's error message for an HTTP error (the SDK's Error()
// gives only the status line), prefixed with ": "; "" otherwise.
func detail(err error) string {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return ": " + apiErr.Message
	}
	return ""
}
