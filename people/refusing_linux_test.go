//go:build linux

package people_test

import (
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// refusingPort returns a loopback address where connections are refused
// (the socket is bound but does not listen) and listen, which starts
// listening on that very socket. The port is the test's the whole time: no
// other process can take it between the refusals and the listening.
func refusingPort(t *testing.T) (addr string, listen func() net.Listener) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	require.NoError(t, err)
	f := os.NewFile(uintptr(fd), "refusing-port")
	t.Cleanup(func() { f.Close() })
	require.NoError(t, syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	sa, err := syscall.Getsockname(fd)
	require.NoError(t, err)
	addr = (&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: sa.(*syscall.SockaddrInet4).Port}).String()
	return addr, func() net.Listener {
		t.Helper()
		require.NoError(t, syscall.Listen(fd, syscall.SOMAXCONN))
		ln, err := net.FileListener(f) // a duplicate of fd; f is closed at cleanup
		require.NoError(t, err)
		return ln
	}
}
