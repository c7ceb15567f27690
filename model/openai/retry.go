package openai

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	oai "github.com/openai/openai-go/v3"
)

// retryable reports whether a failed attempt is worth another: an HTTP 408,
// 409, 429 or 5xx answer, or anything that is not an HTTP answer at all
// (connection refused or reset, a stream cut mid-way, an error event inside
// the stream, ErrIncompleteStream). Other 4xx answers (bad request, auth,
// unknown model) would fail the same way again.
func retryable(err error) bool {
	var apiErr *oai.Error
	if errors.As(err, &apiErr) {
		s := apiErr.StatusCode
		return s == http.StatusRequestTimeout || s == http.StatusConflict ||
			s == http.StatusTooManyRequests || s >= 500
	}
	return true
}

// backoff is the wait before retry number attempt+1: the server's
// retry-after-ms or Retry-After when the failed answer carried one, else
// base·2^attempt; always capped at MaxBackoff.
func backoff(base time.Duration, attempt int, err error) time.Duration {
	var apiErr *oai.Error
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

// retryAfter reads retry-after-ms (OpenAI) or Retry-After (RFC 9110 §10.2.3:
// delay-seconds or an HTTP date) from h. A date in the past means 0.
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
