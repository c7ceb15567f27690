// Package retry is the retry loop shared by luban's model providers
// (model/openai, model/anthropic; docs/design.md §6, issue 6): a failed call is
// retried whole, with exponential backoff or the server's Retry-After,
// inside one deadline for the whole call, and the number of failed
// attempts is reported exactly (model.Response.Retries,
// model.CallError.Retries). The providers disable their SDK's own retries.
package retry

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/lubanhq/luban/model"
)

// Policy describes how Do retries one provider's calls.
type Policy struct {
	// Prefix starts every error message, e.g. "openai: openai:gpt-4o-mini".
	Prefix string
	// MaxRetries is how many failed attempts are retried; 0 means none.
	MaxRetries int
	// CallTimeout bounds the whole call: every attempt and every wait.
	// 0 means no bound beyond ctx.
	CallTimeout time.Duration
	// BaseBackoff is the wait before the first retry, doubled for each
	// further one (Backoff).
	BaseBackoff time.Duration
	// MaxBackoff caps every wait, a Retry-After included.
	MaxBackoff time.Duration
	// Retryable reports whether a failed attempt is worth another. Required.
	Retryable func(error) bool
	// Header returns the headers of the HTTP answer behind err (for
	// Retry-After), nil when there is none. nil means never.
	Header func(error) http.Header
	// Detail is appended to the message of a final error, e.g. ": " + the
	// server's own message. nil means nothing.
	Detail func(error) string
}

// Do calls attempt until it succeeds, fails in a way p.Retryable refuses,
// has failed p.MaxRetries+1 times, or the call's deadline (ctx and
// p.CallTimeout) would pass. On success the Response's Retries is the
// number of failed attempts before it. On failure the error is a
// *model.CallError with that count, wrapping the last attempt's error (and
// ctx.Err() when the context ended).
func Do(ctx context.Context, p Policy, attempt func(context.Context) (*model.Response, error)) (*model.Response, error) {
	if p.CallTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.CallTimeout)
		defer cancel()
	}
	detail := func(err error) string {
		if p.Detail == nil {
			return ""
		}
		return p.Detail(err)
	}
	for n := 0; ; n++ {
		resp, err := attempt(ctx)
		if err == nil {
			resp.Retries = n
			return resp, nil
		}
		fail := func(format string, args ...any) error {
			return &model.CallError{Retries: n, Err: fmt.Errorf("%s: "+format, append([]any{p.Prefix}, args...)...)}
		}
		if ctx.Err() != nil {
			return nil, fail("attempt %d: %w (%w)", n+1, ctx.Err(), err)
		}
		if !p.Retryable(err) || n >= p.MaxRetries {
			return nil, fail("attempt %d of %d: %w%s", n+1, p.MaxRetries+1, err, detail(err))
		}
		var h http.Header
		if p.Header != nil {
			h = p.Header(err)
		}
		wait := Backoff(p.BaseBackoff, p.MaxBackoff, n, h, time.Now())
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return nil, fail("attempt %d: retry in %s would pass the call deadline: %w%s", n+1, wait, err, detail(err))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fail("waiting to retry: %w (%w)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// RetryableStatus reports whether an HTTP error status is worth another
// attempt: 408, 409, 429 and every 5xx (529 "overloaded" of Anthropic
// included). Other 4xx (bad request, auth, unknown model) would fail the
// same way again.
func RetryableStatus(status int) bool {
	return status == http.StatusRequestTimeout || status == http.StatusConflict ||
		status == http.StatusTooManyRequests || status >= 500
}

// Backoff is the wait before retry number attempt+1: the Retry-After of h
// when it carries one (RetryAfter), else base·2^attempt; always capped at
// maxWait. h may be nil.
func Backoff(base, maxWait time.Duration, attempt int, h http.Header, now time.Time) time.Duration {
	if d, ok := RetryAfter(h, now); ok {
		return min(d, maxWait)
	}
	d := base
	for i := 0; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

// RetryAfter reads retry-after-ms (OpenAI, Anthropic; fractional
// milliseconds allowed) or Retry-After (RFC 9110 §10.2.3: delay-seconds or
// an HTTP date) from h; retry-after-ms wins. A date in the past means 0.
// ok is false when h carries neither in a readable form.
func RetryAfter(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
