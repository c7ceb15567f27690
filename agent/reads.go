package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
)

// Event is one committed event of a session's log (docs/design.md §3).
type Event struct {
	// Seq is the event's sequence number in its session: the SSE id.
	Seq int64
	// Name is one of the api.Event* names.
	Name string
	// Data is the payload as stored: the SSE data line.
	Data json.RawMessage
	// At is when the event was committed.
	At time.Time

	runID string
}

// RunID is the run the event belongs to, "" for a payload that names none.
// It is read from the event's row (store.Event.RunID), not from Data.
func (e Event) RunID() string { return e.runID }

// Payload decodes Data into the payload type of Name
// (api.NewEventPayload: *api.SessionEvent, *api.InputRequest, ...), anew
// on each call; nil for a name api does not know or Data that does not
// decode. Events does not decode: a reader that only relays Data (the SSE
// stream) or filters by RunID never pays for it.
func (e Event) Payload() any {
	p := api.NewEventPayload(e.Name)
	if p == nil || json.Unmarshal(e.Data, p) != nil {
		return nil
	}
	return p
}

// eventBatch is how many events Events reads at a time.
const eventBatch = 500

// Events yields the events of session sessionID with Seq > after, oldest
// first, then every new one as it is committed, until ctx is done or the
// loop stops (the same replay-then-live contract as GET
// /api/sessions/{id}/events). Nothing is missed or repeated: it reads the
// log once after following the session (store.Store.Follow), then takes
// the events this process's commits hand over as they are, each the one
// numbered right after the last it yielded; a wake-up without them (a
// commit of another process, a deletion), a gap in the numbers or a
// handed batch too big reads the log again after the last Seq it yielded,
// and without any wake-up it reads again every Options.EventPoll (a commit
// of another process on the same SQLite file). When the log cannot be read
// it yields the error once and stops.
// It ends (with no error) when it finds nothing new and the session
// deleted (checked after each read that finds nothing), so a client that
// reconnects learns it from a 404. It does not check who owns the session:
// call Session first.
func (r *Runner) Events(ctx context.Context, sessionID string, after int64) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		follow, unfollow := r.st.Follow(sessionID)
		defer unfollow()
		r.events(ctx, sessionID, after, follow, false, yield)
	}
}

// events is Events' loop on follow, a Follower of sessionID; followed
// says that follow was registered before the commit of the events after
// after (Following), so it starts with what that commit handed instead of
// reading the log.
func (r *Runner) events(ctx context.Context, sessionID string, after int64, follow *store.Follower, followed bool, yield func(Event, error) bool) {
	poll := time.NewTicker(r.opts.EventPoll)
	defer poll.Stop()
	// take yields what follow was handed that follows on from after; it
	// reports whether the log must be read and whether to go on.
	take := func() (read, ok bool) {
		handed, read := follow.Take()
		for _, ev := range handed {
			if read || ev.Seq <= after {
				continue
			}
			if ev.Seq != after+1 {
				read = true // a gap: events this process was not handed
				continue
			}
			if !yield(eventOf(ev), nil) {
				return false, false
			}
			after = ev.Seq
		}
		return read, true
	}
	read := true
	if followed {
		start := after
		var ok bool
		if read, ok = take(); !ok {
			return
		}
		read = read || after == start
	}
	for {
		if read {
			evs, err := r.st.EventList(ctx, &store.EventListParams{SessionID: sessionID, AfterSeq: after, Limit: eventBatch})
			if err != nil {
				if ctx.Err() == nil {
					yield(Event{}, err)
				}
				return
			}
			if len(evs) == 0 {
				// Nothing new: the session may have been deleted (its
				// events with it), before this reader subscribed or since.
				if _, err := r.st.SessionGet(ctx, sessionID); errors.Is(err, store.ErrNotFound) {
					return
				}
			}
			for _, ev := range evs {
				if !yield(eventOf(ev), nil) {
					return
				}
				after = ev.Seq
			}
			if len(evs) == eventBatch {
				continue
			}
			read = false
		}
		select {
		case <-follow.C:
			var ok bool
			if read, ok = take(); !ok {
				return
			}
		case <-poll.C:
			read = true
		case <-ctx.Done():
			return
		}
	}
}

// eventOf is the stored event ev as Events yields it.
func eventOf(ev *store.Event) Event {
	return Event{Seq: ev.Seq, Name: ev.Name, Data: ev.Data, At: ev.CreatedAt, runID: ev.RunID}
}

// Session returns owner's session (ErrSessionNotFound for a session that
// does not exist or is another principal's).
func (r *Runner) Session(ctx context.Context, owner, id string) (*api.SessionView, error) {
	s, err := r.session(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	v := r.sessionView(s)
	return &v, nil
}

// sessionView is s on the wire; Agent is the agent it keeps (docs/design.md §9),
// the default agent for a session made before agents were configurable.
func (r *Runner) sessionView(s *store.Session) api.SessionView {
	agent := s.Agent
	if agent == "" {
		agent = r.first.Name
	}
	return api.SessionView{ID: s.ID, Title: s.Title, Status: s.Status, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, Agent: agent}
}

// Sessions lists owner's sessions, most recently updated first (at most 100).
func (r *Runner) Sessions(ctx context.Context, owner string) ([]api.SessionView, error) {
	list, err := r.st.SessionList(ctx, &store.SessionListParams{Owner: owner})
	if err != nil {
		return nil, err
	}
	out := make([]api.SessionView, 0, len(list))
	for _, s := range list {
		out = append(out, r.sessionView(s))
	}
	return out, nil
}

// Transcript is owner's session id as GET /api/sessions/{id} shows it: its
// messages in order (an assistant message's reasoning apart from its
// content), its interactions with their receipts, the errors of its failed
// runs, and the last event id when it was read.
func (r *Runner) Transcript(ctx context.Context, owner, id string) (*api.Transcript, error) {
	s, err := r.session(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	msgs, err := r.st.MessageList(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	its, err := r.interactions(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	errs, err := r.runErrors(ctx, msgs)
	if err != nil {
		return nil, err
	}
	t := &api.Transcript{Session: r.sessionView(s), LastEventID: s.LastSeq, Messages: make([]api.MessageView, 0, len(msgs)), Interactions: its, Errors: errs}
	for _, m := range msgs {
		v := api.MessageView{ID: m.ID, RunID: m.RunID, Role: api.Role(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name,
			IsError: m.IsError, Metadata: m.Metadata, CreatedAt: m.CreatedAt}
		for _, c := range callsOf(m) {
			v.ToolCalls = append(v.ToolCalls, api.ToolCall{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
		if m.Role == "user" {
			// A user message's metadata is the run's front-end tools,
			// luban's own record.
			v.Metadata = nil
		}
		if m.Role == "assistant" {
			v.Metadata = nil
			v.Stopped = messageStopped(m)
			if rs := messageReasoning(m); rs != nil {
				v.Reasoning = rs.Text
			}
		}
		t.Messages = append(t.Messages, v)
	}
	return t, nil
}

// Trace is owner's session id as GET /api/sessions/{id}/trace shows it:
// the trace entries oldest first and the audit entries (docs/design.md §5). A
// tool_result entry carries the ToolResult's content, read from its message
// (the trace row itself names it by length and hash).
func (r *Runner) Trace(ctx context.Context, owner, id string) (*api.TraceView, error) {
	s, err := r.session(ctx, owner, id)
	if err != nil {
		return nil, err
	}
	tr, err := r.st.TraceList(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	au, err := r.st.AuditList(ctx, s.ID)
	if err != nil {
		return nil, err
	}
	var results map[string]string
	out := &api.TraceView{Trace: make([]api.TraceItem, 0, len(tr)), Audit: make([]api.AuditItem, 0, len(au))}
	for _, t := range tr {
		data := t.Data
		if t.Kind == "tool_result" {
			if results == nil {
				if results, err = r.resultContents(ctx, s.ID); err != nil {
					return nil, err
				}
			}
			data = withContent(data, results)
		}
		out.Trace = append(out.Trace, api.TraceItem{Kind: t.Kind, RunID: t.RunID, At: t.At, Data: data})
	}
	for _, a := range au {
		out.Audit = append(out.Audit, api.AuditItem{RequestID: a.RequestID, ToolCallID: a.ToolCallID, RunID: a.RunID, Action: a.Action,
			Reason: a.Reason, Summary: a.Summary, At: a.At})
	}
	return out, nil
}

// resultContents maps every tool call id of the session to its ToolResult's content.
func (r *Runner) resultContents(ctx context.Context, sessionID string) (map[string]string, error) {
	msgs, err := r.st.MessageList(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, m := range msgs {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out, nil
}

// withContent adds "content" to a tool_result trace entry that has none.
func withContent(data json.RawMessage, results map[string]string) json.RawMessage {
	var d map[string]any
	if json.Unmarshal(data, &d) != nil {
		return data
	}
	if _, ok := d["content"]; ok {
		return data
	}
	id, _ := d["toolCallId"].(string)
	c, ok := results[id]
	if !ok {
		return data
	}
	d["content"] = c
	b, err := json.Marshal(d)
	if err != nil {
		return data
	}
	return b
}

// Ready reports whether the store answers (GET /readyz): a store with a
// Ping method is pinged; otherwise a lookup of a session that cannot exist
// must come back "not found".
func (r *Runner) Ready(ctx context.Context) error {
	if p, ok := r.st.(interface {
		Ping(ctx context.Context) error
	}); ok {
		return p.Ping(ctx)
	}
	if _, err := r.st.SessionGet(ctx, "readyz"); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// MaxTitleRunes bounds a session title set by RenameSession, in runes after
// whitespace is collapsed.
const MaxTitleRunes = 200

// RenameSession sets the title of owner's session id (PATCH
// /api/sessions/{id}) and returns the session. The title's runs of
// whitespace (line breaks included) become one space and its ends are
// trimmed; it must then hold 1 to MaxTitleRunes runes and no control
// character, else ErrInvalidRequest. Another principal's session is
// ErrSessionNotFound; a store that is not a store.Maintainer is
// ErrDeleteUnsupported. The session's updatedAt does not change.
func (r *Runner) RenameSession(ctx context.Context, owner, id, title string) (*api.SessionView, error) {
	title = strings.Join(strings.Fields(title), " ")
	n := utf8.RuneCountInString(title)
	if n == 0 || n > MaxTitleRunes || !utf8.ValidString(title) || strings.IndexFunc(title, unicode.IsControl) >= 0 {
		msg := fmt.Sprintf("title must be 1 to %d characters without control characters", MaxTitleRunes)
		switch {
		case n == 0:
			return nil, fieldRequest("title", api.DetailRequired, nil, msg)
		case n > MaxTitleRunes:
			return nil, fieldRequest("title", api.DetailTooLong, map[string]any{"max": MaxTitleRunes, "got": n, "unit": "characters"}, msg)
		}
		return nil, fieldRequest("title", api.DetailInvalid, nil, msg)
	}
	if _, err := r.session(ctx, owner, id); err != nil {
		return nil, err
	}
	m, ok := r.st.(store.Maintainer)
	if !ok {
		return nil, ErrDeleteUnsupported
	}
	if err := m.SessionSetTitle(ctx, id, title); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrSessionNotFound
		}
		return nil, err
	}
	return r.Session(ctx, owner, id)
}

// ErrDeleteUnsupported: the store cannot delete or rename sessions (it is
// not a store.Maintainer).
var ErrDeleteUnsupported = errors.New("agent: the store cannot delete sessions")

// DeleteSession deletes owner's session id and everything of it but its
// audit entries (docs/design.md §14, store.Maintainer.SessionDelete). A session with
// an active run is ErrRunInProgress unless force, which cancels the run
// first (a pending question is cancelled as by the user). Errors:
// ErrSessionNotFound, ErrRunInProgress, ErrDeleteUnsupported.
func (r *Runner) DeleteSession(ctx context.Context, owner, id string, force bool) error {
	if _, err := r.session(ctx, owner, id); err != nil {
		return err
	}
	m, ok := r.st.(store.Maintainer)
	if !ok {
		return ErrDeleteUnsupported
	}
	err := m.SessionDelete(ctx, id)
	if errors.Is(err, store.ErrRunActive) && force {
		if _, err := r.Cancel(ctx, CancelParams{Owner: owner, SessionID: id}); err != nil {
			return err
		}
		err = m.SessionDelete(ctx, id)
	}
	switch {
	case errors.Is(err, store.ErrRunActive):
		return ErrRunInProgress
	case errors.Is(err, store.ErrNotFound):
		return ErrSessionNotFound
	}
	return err
}
