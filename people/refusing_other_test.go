//go:build !linux

package people_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"
)

// refusingPort returns a loopback address where connections are refused
// and listen, which listens there. Outside Linux the port is
// released in between (another process could take it).
func refusingPort(t *testing.T) (addr string, listen func() net.Listener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr = ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr, func() net.Listener {
		t.Helper()
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err, "listen again on %s", addr)
		return ln
	}
}
