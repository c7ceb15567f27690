package store

import "sync"

// Hub fans "new events committed" signals out to in-process subscribers of a
// session. Drivers embed one; PostgreSQL feeds it from LISTEN/NOTIFY so that
// subscribers on every replica wake up. The zero value is ready to use.
type Hub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// Subscribe registers a wake-up channel for sessionID; see Store.Subscribe.
func (h *Hub) Subscribe(sessionID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs == nil {
		h.subs = make(map[string]map[chan struct{}]struct{})
	}
	m := h.subs[sessionID]
	if m == nil {
		m = make(map[chan struct{}]struct{})
		h.subs[sessionID] = m
	}
	m[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[sessionID], ch)
		if len(h.subs[sessionID]) == 0 {
			delete(h.subs, sessionID)
		}
		h.mu.Unlock()
	}
}

// Notify wakes every subscriber of sessionID without blocking.
func (h *Hub) Notify(sessionID string) {
	h.mu.Lock()
	for ch := range h.subs[sessionID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	h.mu.Unlock()
}

// NotifyAll wakes every subscriber of every session without blocking. A
// driver calls it when it may have missed notifications (PostgreSQL after its
// LISTEN connection was re-established): subscribers re-read the event log,
// which is the source of truth, so nothing committed meanwhile is lost.
func (h *Hub) NotifyAll() {
	h.mu.Lock()
	for _, m := range h.subs {
		for ch := range m {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
	h.mu.Unlock()
}
