// Package anthropic is luban's model.Provider for the Anthropic Messages API
// (docs/design.md §6, issue 6), built on the official SDK
// github.com/anthropics/anthropic-sdk-go/v2. It always streams, sends luban's
// tools as custom tools, reads tool_use blocks (input assembled from
// input_json_delta pieces) and sends results back as tool_result blocks, all
// results of one assistant turn in one user message, in call order. The
// system prompt travels as the top-level "system".
//
// The SDK's own retries are disabled and it reads no environment variable:
// Generate retries a failed call itself (429, 408, 409, 5xx, 529 overloaded,
// connection errors, an error event or a cut inside the stream) so that
// model.Response.Retries, and model.CallError.Retries on failure, are exact.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/internal/retry"
)

// Defaults of Options.
const (
	DefaultBaseURL     = "https://api.anthropic.com"
	DefaultMaxTokens   = 4096
	DefaultMaxRetries  = 3
	DefaultCallTimeout = 2 * time.Minute
	DefaultBaseBackoff = 500 * time.Millisecond
	// MinThinkingBudget is the smallest budget_tokens the API accepts.
	MinThinkingBudget = 1024
	// MaxBackoff caps every wait between attempts, retry-after included.
	MaxBackoff = 30 * time.Second
)

// ErrIncompleteStream means a stream ended (cleanly or not) before its
// message_delta carried a stop_reason. Generate retries it; it reaches the
// caller wrapped once the retries are exhausted.
var ErrIncompleteStream = errors.New("anthropic: stream ended before stop_reason")

// Options configure a Provider. Model is required; APIKey is required by the
// real API (the fake and some gateways accept none).
type Options struct {
	// BaseURL of the API WITHOUT the /v1 path (ANTHROPIC_BASE_URL), e.g. a
	// gateway or tests' fakeanthropic.URL(). Empty means DefaultBaseURL.
	BaseURL string
	// APIKey (ANTHROPIC_API_KEY) is sent as the SDK sends it ("Authorization:
	// Bearer <key>" in anthropic-sdk-go/v2). Empty sends no credential.
	APIKey string
	// Model is the model name sent in every request, e.g. "claude-sonnet-4-5".
	Model string
	// MaxTokens is the max_tokens of every request (the API requires it).
	// 0 means DefaultMaxTokens (4096).
	MaxTokens int64
	// ThinkingBudget > 0 turns on extended thinking with that many
	// budget_tokens (ANTHROPIC_THINKING_BUDGET; the API requires at least
	// 1024 and less than MaxTokens). MaxTokens not above it is raised to
	// ThinkingBudget+DefaultMaxTokens. The thinking blocks are kept with the
	// assistant message (model.Reasoning) and sent back unchanged.
	ThinkingBudget int64
	// HTTPClient carries the requests; nil means the SDK's default client.
	HTTPClient *http.Client
	// MaxRetries is how many times a failed call is retried. 0 means
	// DefaultMaxRetries (3); -1 disables retries.
	MaxRetries int
	// CallTimeout bounds one whole Generate call: every attempt, every stream
	// and every wait between attempts. 0 means DefaultCallTimeout (2m).
	CallTimeout time.Duration
	// BaseBackoff is the wait before the first retry, doubled for each further
	// one and capped at MaxBackoff. A retry-after header (seconds or HTTP
	// date) or retry-after-ms replaces it for that retry, also capped at
	// MaxBackoff. 0 means DefaultBaseBackoff (500ms).
	BaseBackoff time.Duration
}

// Provider generates assistant turns through the Messages API. It is safe
// for concurrent use and holds no per-conversation state.
type Provider struct {
	opts   Options
	client sdk.Client
}

// New returns a Provider for opts. It fails when opts.Model is empty. The
// SDK's environment defaults (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
// profiles) are switched off: the caller passes BaseURL and APIKey
// explicitly (cmd/luban reads the environment).
func New(opts Options) (*Provider, error) {
	if opts.Model == "" {
		return nil, errors.New("anthropic: Options.Model is required")
	}
	if opts.MaxTokens <= 0 {
		opts.MaxTokens = DefaultMaxTokens
	}
	if opts.ThinkingBudget < 0 || (opts.ThinkingBudget > 0 && opts.ThinkingBudget < MinThinkingBudget) {
		return nil, fmt.Errorf("anthropic: Options.ThinkingBudget %d: the API needs at least %d (0 turns thinking off)", opts.ThinkingBudget, MinThinkingBudget)
	}
	if opts.ThinkingBudget > 0 && opts.MaxTokens <= opts.ThinkingBudget {
		opts.MaxTokens = opts.ThinkingBudget + DefaultMaxTokens
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
	if opts.BaseURL == "" {
		opts.BaseURL = DefaultBaseURL
	}
	ro := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(opts.BaseURL),
		option.WithMaxRetries(0),
	}
	if opts.APIKey != "" {
		ro = append(ro, option.WithAPIKey(opts.APIKey))
	}
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	return &Provider{opts: opts, client: sdk.NewClient(ro...)}, nil
}

// Name is "anthropic:<model>".
func (p *Provider) Name() string { return "anthropic:" + p.opts.Model }

// Generate streams one assistant turn for req. Text deltas go to onDelta (may
// be nil) in order, always as whole UTF-8 characters even when the bytes of a
// character arrived in two pieces. Thinking blocks never enter the text:
// they come back as Response.Message.Reasoning.
//
// A failed attempt is retried whole, up to Options.MaxRetries times with
// backoff. Deltas of a failed attempt may already have gone through onDelta
// before it failed; the next attempt streams its text again from the start.
// The returned Response holds the text and tool calls of the successful
// attempt only, and Retries counts the failed attempts before it.
//
// Errors: a *model.CallError with the retry count, wrapping the last
// attempt's error; errors.As finds *sdk.Error for an HTTP error status or an
// error event, errors.Is finds ErrIncompleteStream for a stream without a
// stop_reason and context.DeadlineExceeded when CallTimeout ran out. A 4xx
// other than 408, 409 and 429 is not retried, nor is an error event of type
// invalid_request_error, authentication_error, permission_error or
// not_found_error.
func (p *Provider) Generate(ctx context.Context, req *model.Request, onDelta func(text string)) (*model.Response, error) {
	params := buildParams(p.opts.Model, p.opts.MaxTokens, p.opts.ThinkingBudget, req)
	return retry.Do(ctx, retry.Policy{
		Prefix:      "anthropic: " + p.Name(),
		MaxRetries:  p.opts.MaxRetries,
		CallTimeout: p.opts.CallTimeout,
		BaseBackoff: p.opts.BaseBackoff,
		MaxBackoff:  MaxBackoff,
		Retryable:   retryable,
		Header:      retryHeader,
		Detail:      detail,
	}, func(ctx context.Context) (*model.Response, error) {
		return p.attempt(ctx, params, onDelta, req.OnReasoning)
	})
}

// attempt runs one streaming request and accumulates its turn.
func (p *Provider) attempt(ctx context.Context, params sdk.MessageNewParams, onDelta, onReasoning func(string)) (*model.Response, error) {
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	acc := accumulator{onReasoning: onReasoning}
	for stream.Next() {
		acc.add(stream.Current(), onDelta)
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	// A message_delta with its stop_reason is the turn's end; a missing
	// message_stop after it is tolerated (like a missing [DONE]).
	if acc.stop == "" {
		return nil, ErrIncompleteStream
	}
	acc.flush(onDelta)
	return acc.response(), nil
}

// detail is the server's error message for an API error (the SDK's Error()
// gives the status line and raw body), prefixed with ": "; "" otherwise.
func detail(err error) string {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && apiErr.Message != "" {
		return ": " + string(apiErr.Type()) + ": " + apiErr.Message
	}
	return ""
}
