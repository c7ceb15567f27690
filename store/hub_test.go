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

// TestHubFollowers: Hand gives a session's Followers the events, in order,
// and wakes its Subscribe channels too; Notify and NotifyAll tell them to
// read the log, and so does a backlog past what a Follower holds.
func TestHubFollowers(t *testing.T) {
	t.Parallel()
	var h store.Hub
	f, unfollow := h.Follow("a")
	g, unG := h.Follow("b")
	defer unG()
	sub, unsub := h.Subscribe("a")
	defer unsub()
	ev := func(seq int64) *store.Event { return &store.Event{SessionID: "a", Seq: seq} }

	h.Hand("a", []*store.Event{ev(1), ev(2)})
	h.Hand("a", []*store.Event{ev(3)})
	require.True(t, woken(f.C))
	require.False(t, woken(f.C), "one wake-up for two hands")
	require.True(t, woken(sub), "Subscribe channels wake too")
	evs, read := f.Take()
	require.False(t, read)
	require.Equal(t, []*store.Event{ev(1), ev(2), ev(3)}, evs)
	evs, read = f.Take()
	require.Empty(t, evs)
	require.False(t, read)
	require.False(t, woken(g.C), "another session's follower")

	h.Hand("a", []*store.Event{ev(4)})
	h.Notify("a")
	h.Hand("a", []*store.Event{ev(5)})
	require.True(t, woken(f.C))
	evs, read = f.Take()
	require.True(t, read, "a wake-up without events since the last Take")
	require.Empty(t, evs)

	h.NotifyAll()
	require.True(t, woken(g.C))
	_, read = g.Take()
	require.True(t, read)

	var many []*store.Event
	for i := range 300 {
		many = append(many, ev(int64(i+6)))
	}
	h.Hand("a", many[:200])
	h.Hand("a", many[200:])
	_, read = f.Take()
	require.True(t, read, "a backlog too big to hold")

	unfollow()
	unfollow()
	h.Hand("a", []*store.Event{ev(306)})
	evs, read = f.Take()
	require.Empty(t, evs)
	require.False(t, read, "not after unfollowing")
}
