package sqlite

import (
	"github.com/lubanhq/luban/store"
)

// handing is what a group commit member appended to the event log, kept
// for its Followers (store.Hub.Hand): once the batch committed, each
// session's events go to the streams of this process as they are, instead
// of every stream reading them back (docs/performance.md, "Over HTTP").
// An event that references a message (EventAppendParams.MessageRef) is
// completed from the message the member inserted before it; one whose
// message the member did not insert leaves its session unhanded, and that
// session's Followers read the log. Nothing is kept for a session that had
// no Follower when the member wrote (rowBuf.follows).
type handing struct {
	events   []*store.Event
	unhanded map[string]struct{}
	messages []*store.MessageInsertParams
}

// handing returns the member's handing, made at its first use.
func (b *rowBuf) handing() *handing {
	if b.hand == nil {
		b.hand = &handing{}
	}
	return b.hand
}

// follows reports whether the member keeps sessionID's events and
// messages for Hand: only while the session has a Follower.
func (b *rowBuf) follows(sessionID string) bool {
	return b.hub != nil && b.hub.Following(sessionID)
}

// message notes a message the member inserted.
func (h *handing) message(p *store.MessageInsertParams) {
	h.messages = append(h.messages, p)
}

// event keeps ev, appended with p, as EventList will return it.
func (h *handing) event(ev *store.Event, p *store.EventAppendParams) {
	out := &store.Event{SessionID: ev.SessionID, Seq: ev.Seq, Name: ev.Name, Data: ev.Data, RunID: ev.RunID, CreatedAt: tm(ts(p.Now))}
	if p.Ref == "" && p.MessageRef != "" {
		var m *store.MessageInsertParams
		for i := len(h.messages) - 1; i >= 0; i-- {
			if h.messages[i].ID == p.MessageRef {
				m = h.messages[i]
				break
			}
		}
		if m == nil {
			if h.unhanded == nil {
				h.unhanded = map[string]struct{}{}
			}
			h.unhanded[ev.SessionID] = struct{}{}
			return
		}
		out.Data = store.SpliceMessage(ev.Data, m.Content, m.ToolCalls)
	}
	h.events = append(h.events, out)
}

// of returns the events kept for sessionID in their order, nil when there
// are none or one could not be completed (Hub.Hand then only notifies).
func (h *handing) of(sessionID string) []*store.Event {
	if h == nil {
		return nil
	}
	if _, ok := h.unhanded[sessionID]; ok {
		return nil
	}
	var out []*store.Event
	for _, ev := range h.events {
		if ev.SessionID == sessionID {
			out = append(out, ev)
		}
	}
	return out
}
