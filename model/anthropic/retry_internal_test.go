package anthropic

import (
	"errors"
	"net/http"
	"testing"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/model/internal/retry"
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

// The header of an HTTP error feeds the shared backoff: a retry-after of an
// hour is capped at MaxBackoff; an error without an answer has no header.
func TestRetryHeader(t *testing.T) {
	t.Parallel()
	resp := &http.Response{Header: http.Header{"Retry-After": {"3600"}}}
	h := retryHeader(&sdk.Error{StatusCode: 429, Response: resp})
	require.Equal(t, "3600", h.Get("retry-after"))
	require.Equal(t, MaxBackoff, retry.Backoff(500*time.Millisecond, MaxBackoff, 0, h, time.Now()), "retry-after is capped too")
	require.Nil(t, retryHeader(errors.New("connection reset")))
	require.Nil(t, retryHeader(apiErr(t, 200, `{"type":"error","error":{"type":"overloaded_error","message":"x"}}`)), "an error event has no answer of its own")
}
