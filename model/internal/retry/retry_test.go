package retry_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/model/internal/retry"
)

var (
	errTransient = errors.New("connection reset")
	errFatal     = errors.New("bad request")
)

// setup returns a policy that retries errTransient with 1ns waits and a
// counter of attempts.
func setup(t *testing.T) (retry.Policy, *int) {
	t.Helper()
	calls := new(int)
	return retry.Policy{
		Prefix:      "fake: fake:m",
		MaxRetries:  3,
		CallTimeout: time.Hour,
		BaseBackoff: time.Nanosecond,
		MaxBackoff:  time.Nanosecond,
		Retryable:   func(err error) bool { return errors.Is(err, errTransient) },
		Detail:      func(error) string { return ": server says no" },
	}, calls
}

// failing fails with errs in turn, then succeeds.
func failing(calls *int, errs ...error) func(context.Context) (*model.Response, error) {
	return func(context.Context) (*model.Response, error) {
		*calls++
		if *calls <= len(errs) {
			return nil, errs[*calls-1]
		}
		return &model.Response{FinishReason: "stop"}, nil
	}
}

func TestDoCountsRetriesOfSuccess(t *testing.T) {
	t.Parallel()
	p, calls := setup(t)
	resp, err := retry.Do(context.Background(), p, failing(calls, errTransient, errTransient))
	require.NoError(t, err)
	require.Equal(t, 2, resp.Retries)
	require.Equal(t, 3, *calls)
}

func TestDoStopsAtNonRetryable(t *testing.T) {
	t.Parallel()
	p, calls := setup(t)
	_, err := retry.Do(context.Background(), p, failing(calls, errTransient, errFatal))
	var ce *model.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 1, ce.Retries)
	require.ErrorIs(t, err, errFatal)
	require.Equal(t, "fake: fake:m: attempt 2 of 4: bad request: server says no", ce.Err.Error())
	require.Equal(t, 2, *calls)
}

func TestDoGivesUpAfterMaxRetries(t *testing.T) {
	t.Parallel()
	p, calls := setup(t)
	p.MaxRetries = 2
	_, err := retry.Do(context.Background(), p, failing(calls, errTransient, errTransient, errTransient, errTransient))
	var ce *model.CallError
	require.ErrorAs(t, err, &ce)
	require.Equal(t, 2, ce.Retries)
	require.ErrorIs(t, err, errTransient)
	require.Contains(t, err.Error(), "attempt 3 of 3")
	require.Equal(t, 3, *calls)
}

// A wait that would outlast the call's deadline is not started.
func TestDoRefusesWaitPastDeadline(t *testing.T) {
	t.Parallel()
	p, calls := setup(t)
	p.BaseBackoff, p.MaxBackoff = 2*time.Hour, 2*time.Hour
	_, err := retry.Do(context.Background(), p, failing(calls, errTransient))
	require.ErrorIs(t, err, errTransient)
	require.Contains(t, err.Error(), "fake: fake:m: attempt 1: retry in 2h0m0s would pass the call deadline: connection reset: server says no")
	require.Equal(t, 1, *calls)
}

// The server's Retry-After replaces the backoff, so the same hour-long
// deadline check trips on it.
func TestDoHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	p, calls := setup(t)
	p.MaxBackoff = 3 * time.Hour
	p.Header = func(error) http.Header { return http.Header{"Retry-After": {"7200"}} }
	_, err := retry.Do(context.Background(), p, failing(calls, errTransient))
	require.Contains(t, err.Error(), "retry in 2h0m0s would pass the call deadline")
}

// A context that ends during an attempt, or during the wait before the next
// one, ends the call with both errors.
func TestDoContextEnds(t *testing.T) {
	t.Parallel()
	t.Run("during attempt", func(t *testing.T) {
		t.Parallel()
		p, calls := setup(t)
		ctx, cancel := context.WithCancel(context.Background())
		_, err := retry.Do(ctx, p, func(ctx context.Context) (*model.Response, error) {
			*calls++
			cancel()
			return nil, errTransient
		})
		require.ErrorIs(t, err, context.Canceled)
		require.ErrorIs(t, err, errTransient)
		require.Contains(t, err.Error(), "fake: fake:m: attempt 1: context canceled (connection reset)")
		require.Equal(t, 1, *calls)
	})
	t.Run("during wait", func(t *testing.T) {
		t.Parallel()
		p, calls := setup(t)
		p.CallTimeout = 0 // no deadline: the hour-long wait is started
		p.BaseBackoff, p.MaxBackoff = time.Hour, time.Hour
		ctx, cancel := context.WithCancel(context.Background())
		p.Retryable = func(error) bool { cancel(); return true } // called after the attempt's ctx check
		_, err := retry.Do(ctx, p, failing(calls, errTransient))
		var ce *model.CallError
		require.ErrorAs(t, err, &ce)
		require.Equal(t, 0, ce.Retries)
		require.ErrorIs(t, err, context.Canceled)
		require.Contains(t, err.Error(), "fake: fake:m: waiting to retry: context canceled (connection reset)")
		require.Equal(t, 1, *calls)
	})
}

func TestRetryableStatus(t *testing.T) {
	t.Parallel()
	for s, want := range map[int]bool{400: false, 401: false, 403: false, 404: false, 408: true, 409: true, 422: false, 429: true, 500: true, 503: true, 529: true} {
		require.Equal(t, want, retry.RetryableStatus(s), s)
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
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"seconds lower case", map[string]string{"retry-after": "7"}, 7 * time.Second, true},
		{"http date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"date in the past", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"ms wins", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{"ms lower case", map[string]string{"retry-after-ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{"fractional ms", map[string]string{"retry-after-ms": "1.5"}, 1500 * time.Microsecond, true},
		{"bad ms falls back", map[string]string{"retry-after-ms": "-1", "Retry-After": "9"}, 9 * time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := http.Header{}
			for k, v := range tc.header {
				h.Set(k, v)
			}
			got, ok := retry.RetryAfter(h, now)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
	_, ok := retry.RetryAfter(nil, now)
	require.False(t, ok, "a nil header carries nothing")
}

func TestBackoffDoublesAndCaps(t *testing.T) {
	t.Parallel()
	base, maxWait, now := 500*time.Millisecond, 30*time.Second, time.Now()
	require.Equal(t, base, retry.Backoff(base, maxWait, 0, nil, now))
	require.Equal(t, 2*time.Second, retry.Backoff(base, maxWait, 2, nil, now))
	require.Equal(t, maxWait, retry.Backoff(base, maxWait, 20, nil, now))
	require.Equal(t, maxWait, retry.Backoff(base, maxWait, 0, http.Header{"Retry-After": {"3600"}}, now), "retry-after is capped too")
	require.Equal(t, time.Duration(0), retry.Backoff(base, maxWait, 3, http.Header{"Retry-After": {"0"}}, now), "retry-after: 0 means at once")
}
