package store

import "sync"

// Hub fans "new events committed" signals out to in-process subscribers of a
// session. Drivers embed one; PostgreSQL feeds it from LISTEN/NOTIFY so that
// subscribers on every replica wake up. The zero value is ready to use.
type Hub struct {
	mu   sync.Mutex
	subs map[string][]chan struct{}
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
		subs := h.subs[sessionID]
		for i, c := range subs {
			if c == ch {
				last := len(subs) - 1
				subs[i], subs[last] = subs[last], nil
				subs = subs[:last]
				break
			}
		}
		if len(subs) == 0 {
			delete(h.subs, sessionID)
		} else {
			h.subs[sessionID] = subs
		}
	}
}

// Notify wakes every subscriber of sessionID without blocking.
func (h *Hub) Notify(sessionID string) {
	h.mu.Lock()
	for _, ch := range h.subs[sessionID] {
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
	for _, subs := range h.subs {
		for _, ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
	h.mu.Unlock()
}
