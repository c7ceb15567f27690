package anthropic

import (
	"errors"
	"net/http"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"
)

func apiErr(t *testing.T, status int, body string) *sdk.Error {
	t.Helper()
	e := &sdk.Error{StatusCode: status}
	require.NoError(t, e.UnmarshalJSON([]byte(body)))
	return e
}

func TestRetryable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection error", errors.New("connection reset"), true},
		{"incomplete stream", ErrIncompleteStream, true},
		{"429", apiErr(t, 429, `{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}`), true},
		{"529 overloaded", apiErr(t, 529, `{"type":"error","error":{"type":"overloaded_error","message":"busy"}}`), true},
		{"500", apiErr(t, 500, `{"type":"error","error":{"type":"api_error","message":"x"}}`), true},
		{"408", apiErr(t, 408, `{}`), true},
		{"400", apiErr(t, 400, `{"type":"error","error":{"type":"invalid_request_error","message":"x"}}`), false},
		{"401", apiErr(t, 401, `{"type":"error","error":{"type":"authentication_error","message":"x"}}`), false},
		{"404 unknown model", apiErr(t, 404, `{"type":"error","error":{"type":"not_found_error","message":"x"}}`), false},
		{"error event overloaded", apiErr(t, 200, `{"type":"error","error":{"type":"overloaded_error","message":"x"}}`), true},
		{"error event api_error", apiErr(t, 200, `{"type":"error","error":{"type":"api_error","message":"x"}}`), true},
		{"error event invalid request", apiErr(t, 200, `{"type":"error","error":{"type":"invalid_request_error","message":"x"}}`), false},
	} {
		require.Equal(t, tc.want, retryable(tc.err), tc.name)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"absent", nil, 0, false},
		{"seconds", map[string]string{"retry-after": "7"}, 7 * time.Second, true},
		{"http date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"ms wins", map[string]string{"retry-after-ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
	} {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		got, ok := retryAfter(h, now)
		require.Equal(t, tc.ok, ok, tc.name)
		require.Equal(t, tc.want, got, tc.name)
	}
}

func TestBackoffDoublesAndCaps(t *testing.T) {
	t.Parallel()
	base := 500 * time.Millisecond
	require.Equal(t, base, backoff(base, 0, nil))
	require.Equal(t, 2*time.Second, backoff(base, 2, nil))
	require.Equal(t, MaxBackoff, backoff(base, 20, nil))
	resp := &http.Response{Header: http.Header{"Retry-After": {"3600"}}}
	require.Equal(t, MaxBackoff, backoff(base, 0, &sdk.Error{StatusCode: 429, Response: resp}), "retry-after is capped too")
}

func TestCompletePrefix(t *testing.T) {
	t.Parallel()
	zh := []byte("a中")
	require.Equal(t, 4, completePrefix(zh, 0))
	require.Equal(t, 1, completePrefix(zh[:3], 0), "holds back a cut character")
	require.Equal(t, 1, completePrefix(zh[:2], 0))
	require.Equal(t, 2, completePrefix([]byte{'a', 0x80}, 0), "a stray continuation byte is not held forever")
}
