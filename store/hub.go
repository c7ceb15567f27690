package store

import "sync"

// Hub fans "new events committed" signals out to in-process subscribers of a
// session. Drivers embed one; PostgreSQL feeds it from LISTEN/NOTIFY so that
// subscribers on every replica wake up. A driver that has a commit's events
// at hand hands them to the session's Followers with Hand; every other
// wake-up (Notify, NotifyAll) tells Followers to read the log. The zero
// value is ready to use.
type Hub struct {
	mu        sync.Mutex
	subs      map[string][]chan struct{}
	followers map[string][]*Follower
}

// Follower is a subscription to a session's events that may carry them
// (Store.Follow): after a wake-up on C, Take returns the events this
// process's commits handed over since the last Take, in commit order, and
// whether they are all that was committed meanwhile as far as the Hub
// knows. It is safe for concurrent use.
type Follower struct {
	// C receives a value (coalesced) whenever Take has something new to
	// say.
	C    <-chan struct{}
	c    chan struct{}
	mu   sync.Mutex
	evs  []*Event
	read bool
}

// maxHanded bounds the events a Follower holds between two Takes; past it
// the Follower drops them and its next Take says to read the log.
const maxHanded = 256

// Take returns the events handed since the last Take, in commit order, and
// read: true when something else was committed or happened to the session
// meanwhile (a commit whose events were not handed: another process's, a
// driver's that hands none, a deletion; or more than maxHanded events), so
// the caller must read the log, which stays the source of truth. The
// events are shared: the caller must not modify them.
func (f *Follower) Take() (evs []*Event, read bool) {
	f.mu.Lock()
	evs, read = f.evs, f.read
	f.evs, f.read = nil, false
	f.mu.Unlock()
	return evs, read
}

// add queues evs (nil: a wake-up without events) and wakes f.
func (f *Follower) add(evs []*Event) {
	f.mu.Lock()
	switch {
	case evs == nil || f.read:
		f.evs, f.read = nil, true
	case len(f.evs)+len(evs) > maxHanded:
		f.evs, f.read = nil, true
	default:
		f.evs = append(f.evs, evs...)
	}
	f.mu.Unlock()
	select {
	case f.c <- struct{}{}:
	default:
	}
}

// Follow registers a Follower of sessionID and returns it with the func
// that unregisters it; see Store.Follow.
func (h *Hub) Follow(sessionID string) (*Follower, func()) {
	c := make(chan struct{}, 1)
	f := &Follower{C: c, c: c}
	h.mu.Lock()
	if h.followers == nil {
		h.followers = make(map[string][]*Follower)
	}
	h.followers[sessionID] = append(h.followers[sessionID], f)
	h.mu.Unlock()
	return f, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		removeFrom(h.followers, sessionID, f)
	}
}

// Following reports whether sessionID has a Follower now: a driver
// keeps a commit's events for Hand only then (one that follows later
// reads the log for what it was not handed).
func (h *Hub) Following(sessionID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.followers[sessionID]) > 0
}

// Hand wakes sessionID's subscribers as Notify does and gives its
// Followers evs, the events one commit appended to the session, in their
// order, complete (Data as EventList returns it). A driver calls it once
// per commit and session, in commit order; evs must not be modified
// afterwards. Nil evs is Notify.
func (h *Hub) Hand(sessionID string, evs []*Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wake(sessionID)
	for _, f := range h.followers[sessionID] {
		f.add(evs)
	}
}

// wake wakes sessionID's Subscribe channels; h.mu is held.
func (h *Hub) wake(sessionID string) {
	for _, ch := range h.subs[sessionID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// Subscribe registers a wake-up channel for sessionID; see Store.Subscribe.
func (h *Hub) Subscribe(sessionID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[string][]chan struct{})
	}
	h.subs[sessionID] = append(h.subs[sessionID], ch)
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		removeFrom(h.subs, sessionID, ch)
	}
}

// Notify wakes every subscriber of sessionID without blocking; its
// Followers are told to read the log.
func (h *Hub) Notify(sessionID string) {
	h.mu.Lock()
	h.wake(sessionID)
	for _, f := range h.followers[sessionID] {
		f.add(nil)
	}
	h.mu.Unlock()
}

// NotifyAll wakes every subscriber of every session without blocking. A
// driver calls it when it may have missed notifications (PostgreSQL after its
// LISTEN connection was re-established): subscribers re-read the event log,
// which is the source of truth, so nothing committed meanwhile is lost.
func (h *Hub) NotifyAll() {
	h.mu.Lock()
	for id := range h.subs {
		h.wake(id)
	}
	for _, fs := range h.followers {
		for _, f := range fs {
			f.add(nil)
		}
	}
	h.mu.Unlock()
}

// removeFrom removes x from m[key] (order not kept; the freed slot is
// zeroed so the slice holds no reference to it) and deletes the key when
// its slice is left empty.
func removeFrom[T comparable](m map[string][]T, key string, x T) {
	xs := m[key]
	for i, y := range xs {
		if y == x {
			last := len(xs) - 1
			var zero T
			xs[i], xs[last] = xs[last], zero
			xs = xs[:last]
			break
		}
	}
	if len(xs) == 0 {
		delete(m, key)
	} else {
		m[key] = xs
	}
}
