package fakemodel

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
)

// CountDials replaces tr.DialContext with a plain net.Dialer that counts
// every connection tr opens, and returns the counter. tr's idle connections
// are closed when the test ends. A provider test uses it to check that a
// response body is read to its end, so its connection goes back to the pool
// instead of being closed and dialed again.
func CountDials(t testing.TB, tr *http.Transport) *atomic.Int64 {
	t.Helper()
	var dials atomic.Int64
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &dials
}

// RequireSequentialReuse checks that calls made one after another share one
// connection: it passes start a client on a fresh http.Transport whose
// dials are counted (CountDials), makes n calls in a row with the function
// start returns (each must return nil), and fails t unless exactly one
// connection was dialed.
func RequireSequentialReuse(t testing.TB, n int, start func(c *http.Client) (call func() error)) {
	t.Helper()
	tr := &http.Transport{}
	dials := CountDials(t, tr)
	call := start(&http.Client{Transport: tr})
	for i := range n {
		if err := call(); err != nil {
			t.Fatalf("call %d of %d: %v", i+1, n, err)
		}
	}
	if got := dials.Load(); got != 1 {
		t.Fatalf("%d calls in a row dialed %d connections, want 1", n, got)
	}
}
