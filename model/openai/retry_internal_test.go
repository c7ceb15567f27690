package openai

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

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
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"http date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"ms wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			got, ok := retryAfter(h, now)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestBackoffDoublesAndCaps(t *testing.T) {
	t.Parallel()
	base := 500 * time.Millisecond
	require.Equal(t, base, backoff(base, 0, nil))
	require.Equal(t, 2*time.Second, backoff(base, 2, nil))
	require.Equal(t, MaxBackoff, backoff(base, 20, nil))
}

func TestCompletePrefix(t *testing.T) {
	t.Parallel()
	zh := []byte("a中") // 'a' + 3 bytes
	require.Equal(t, 4, completePrefix(zh, 0))
	require.Equal(t, 1, completePrefix(zh[:3], 0), "holds back a cut character")
	require.Equal(t, 1, completePrefix(zh[:2], 0))
	require.Equal(t, 2, completePrefix([]byte{'a', 0x80}, 0), "a stray continuation byte is not held forever")
	require.Equal(t, 0, completePrefix(nil, 0))
}
