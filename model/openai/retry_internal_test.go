package openai

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	oai "github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/model/internal/retry"
)

func TestRetryable(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection error", errors.New("connection reset"), true},
		{"incomplete stream", ErrIncompleteStream, true},
		{"wrapped 429", fmt.Errorf("x: %w", &oai.Error{StatusCode: 429}), true},
		{"409", &oai.Error{StatusCode: 409}, true},
		{"503", &oai.Error{StatusCode: 503}, true},
		{"400", &oai.Error{StatusCode: 400}, false},
		{"401", &oai.Error{StatusCode: 401}, false},
		{"404 unknown model", &oai.Error{StatusCode: 404}, false},
	} {
		require.Equal(t, tc.want, retryable(tc.err), tc.name)
	}
}

// The header of an HTTP error feeds the shared backoff: retry-after-ms is
// honoured and a Retry-After of an hour is capped at MaxBackoff.
func TestRetryHeader(t *testing.T) {
	t.Parallel()
	base := 500 * time.Millisecond
	ms := retryHeader(&oai.Error{StatusCode: 429, Response: &http.Response{Header: http.Header{"Retry-After-Ms": {"250"}}}})
	require.Equal(t, 250*time.Millisecond, retry.Backoff(base, MaxBackoff, 3, ms, time.Now()))
	hour := retryHeader(&oai.Error{StatusCode: 503, Response: &http.Response{Header: http.Header{"Retry-After": {"3600"}}}})
	require.Equal(t, MaxBackoff, retry.Backoff(base, MaxBackoff, 0, hour, time.Now()), "Retry-After is capped too")
	require.Nil(t, retryHeader(errors.New("connection reset")))
	require.Nil(t, retryHeader(&oai.Error{StatusCode: 500}), "no answer, no header")
}
