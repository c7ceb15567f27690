package store_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/store"
)

// woken reports whether ch has a wake-up waiting, taking it.
func woken(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestHubSubscribers: Notify wakes the session's subscribers only, once
// however often it is called before they look, and not after they
// unsubscribed (twice is harmless); NotifyAll wakes every session's.
func TestHubSubscribers(t *testing.T) {
	t.Parallel()
	var h store.Hub
	a1, unA1 := h.Subscribe("a")
	a2, unA2 := h.Subscribe("a")
	b, unB := h.Subscribe("b")
	defer unB()

	h.Notify("a")
	h.Notify("a")
	require.True(t, woken(a1))
	require.True(t, woken(a2))
	require.False(t, woken(a1), "one wake-up for two notifies")
	require.False(t, woken(b))

	unA1()
	unA1()
	h.Notify("a")
	require.False(t, woken(a1))
	require.True(t, woken(a2))

	unA2()
	h.Notify("a")
	require.False(t, woken(a2))
	a3, unA3 := h.Subscribe("a")
	defer unA3()

	h.NotifyAll()
	require.True(t, woken(a3))
	require.True(t, woken(b))
	require.False(t, woken(a1))
	require.False(t, woken(a2))
}
