package anthropic

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
)

// retryable reports whether a failed attempt is worth another.
//   - An HTTP error answer: 408, 409, 429, 5xx and 529 (overloaded) yes;
//     other 4xx (bad request, auth, unknown model) would fail again.
//   - An error event inside a 200 stream: yes unless its type says the
//     request itself is wrong (invalid_request_error, authentication_error,
//     permission_error, not_found_error).
//   - Anything else (connection refused or reset, a stream cut mid-way,
//     ErrIncompleteStream): yes.
func retryable(err error) bool {
	var apiErr *sdk.Error
	if !errors.As(err, &apiErr) {
		return true
	}
	if s := apiErr.StatusCode; s >= 400 {
		return s == http.StatusRequestTimeout || s == http.StatusConflict ||
			s == http.StatusTooManyRequests || s >= 500
	}
	switch apiErr.Type() {
	case "invalid_request_error", "authentication_error", "permission_error", "not_found_error":
		return false
	}
	return true
}

// backoff is the wait before retry number attempt+1: the server's
// retry-after-ms or retry-after when the failed answer carried one, else
// base·2^attempt; always capped at MaxBackoff.
func backoff(base time.Duration, attempt int, err error) time.Duration {
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) && apiErr.Response != nil {
		if d, ok := retryAfter(apiErr.Response.Header, time.Now()); ok {
			return min(d, MaxBackoff)
		}
	}
	d := base
	for i := 0; i < attempt && d < MaxBackoff; i++ {
		d *= 2
	}
	return min(d, MaxBackoff)
}

// retryAfter reads retry-after-ms or retry-after (RFC 9110 §10.2.3:
// delay-seconds or an HTTP date; Anthropic sends seconds on 429 and 529)
// from h. A date in the past means 0.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
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
