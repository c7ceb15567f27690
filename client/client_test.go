package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
)

// turns is a model that plays its turns in order; each turn's text streams
// in two deltas. Running out of turns is a model error (the run fails), so
// a test that makes an unplanned model call sees it.
type turns struct {
	mu   sync.Mutex
	next []model.Message
	seen []*model.Request
}

func (m *turns) provider() model.Provider {
	return model.ProviderFunc{ProviderName: "turns", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		m.mu.Lock()
		m.seen = append(m.seen, req)
		if len(m.next) == 0 {
			m.mu.Unlock()
			return nil, errors.New("turns: no turn left")
		}
		msg := m.next[0]
		m.next = m.next[1:]
		m.mu.Unlock()
		msg.Role = model.RoleAssistant
		if onDelta != nil && msg.Content != "" {
			r := []rune(msg.Content)
			onDelta(string(r[:len(r)/2]))
			onDelta(string(r[len(r)/2:]))
		}
		return &model.Response{Message: msg, FinishReason: "stop"}, nil
	}}
}

func (m *turns) push(msgs ...model.Message) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.next = append(m.next, msgs...)
}

func (m *turns) requests() []*model.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*model.Request{}, m.seen...)
}

func ask(id, args string) model.Message {
	return model.Message{Content: "我需要问一下。", ToolCalls: []model.ToolCall{{ID: id, Name: api.ToolAskUser, Arguments: args}}}
}

const singleArgs = `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`

type testBundle struct {
	ctx   context.Context
	model *turns
	srv   *lubantest.Server
	c     *client.Client
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	m := &turns{}
	srv := lubantest.Start(t, lubantest.Options{Provider: m.provider()})
	c, err := client.New(srv.URL+"/", "test-token", nil)
	require.NoError(t, err)
	return &testBundle{ctx: ctx, model: m, srv: srv, c: c}
}

// drain reads a stream to its end.
func drain(t *testing.T, s *client.Stream) []*client.Event {
	t.Helper()
	defer s.Close()
	var out []*client.Event
	for ev, err := range s.All() {
		require.NoError(t, err)
		out = append(out, ev)
	}
	return out
}

// text is the assistant text evs show: each message's streamed
// message_delta text, completed by its message event (the deltas, when any,
// begin its content; a turn that arrives whole streams none).
func text(t *testing.T, evs []*client.Event) string {
	t.Helper()
	streamed := map[string]string{}
	var out string
	for _, e := range evs {
		switch v := e.Value.(type) {
		case *api.MessageDeltaEvent:
			streamed[v.MessageID] += v.Delta
		case *api.MessageEvent:
			if v.Role == "assistant" {
				require.True(t, strings.HasPrefix(v.Content, streamed[v.MessageID]), "the deltas begin the message")
				out += v.Content
			}
		}
	}
	return out
}

// find returns the first event named name.
func find(t *testing.T, evs []*client.Event, name string) *client.Event {
	t.Helper()
	for _, e := range evs {
		if e.Name == name {
			return e
		}
	}
	require.Failf(t, "no event", "%s in %v", name, names(evs))
	return nil
}

// names lists the events' names but message_delta's (the server batches
// streamed text and stores none of a turn that arrives whole, so their
// number is not a contract; text checks them).
func names(evs []*client.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Name != api.EventMessageDelta {
			out = append(out, e.Name)
		}
	}
	return out
}

func TestAskAnswerResumeWithTypedEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(ask("call_1", singleArgs), model.Message{Content: "好的，先分析。"})

	s, err := b.c.Chat(b.ctx, "", "帮我改代码")
	require.NoError(t, err)
	first := drain(t, s)
	require.Equal(t, []string{"session", "message", "message", "tool_call", "user_input_required"}, names(first))
	sess := first[0].Value.(*api.SessionEvent)
	require.NotEmpty(t, sess.SessionID)
	require.Equal(t, &api.MessageEvent{MessageID: first[1].Value.(*api.MessageEvent).MessageID, Role: "user", Content: "帮我改代码"}, first[1].Value)
	require.Equal(t, "我需要问一下。", text(t, first))
	require.Equal(t, "call_1", find(t, first, "tool_call").Value.(*api.ToolCallEvent).ToolCallID)
	req := first[len(first)-1].Value.(*api.InputRequest)
	require.Equal(t, "call_1", req.ToolCallID)
	require.Equal(t, sess.SessionID, req.SessionID)
	require.Equal(t, api.ModeSingle, req.Mode)
	require.Equal(t, []api.Option{{ID: "safe", Label: "先分析", Recommended: true}, {ID: "implement", Label: "直接实现"}}, req.Options)
	require.True(t, req.Resumable)
	for i, ev := range first {
		// The session's sequence; a delta this reader did not see before
		// its message committed (and deleted it) leaves a gap there only.
		prev := int64(0)
		if i > 0 {
			prev = first[i-1].ID
		}
		if m, ok := ev.Value.(*api.MessageEvent); ok && m.Role == "assistant" {
			require.Greater(t, ev.ID, prev, "ids increase")
		} else {
			require.Equal(t, prev+1, ev.ID, "ids are the session's sequence")
		}
	}
	lastID := first[len(first)-1].ID
	require.Equal(t, lastID, s.LastEventID())

	p, err := b.c.Pending(b.ctx, sess.SessionID)
	require.NoError(t, err)
	require.Equal(t, req.ID, p.Pending.ID)
	require.Nil(t, p.Last)

	s, err = b.c.Continue(b.ctx, api.ContinueRequest{SessionID: sess.SessionID, RequestID: req.ID, Selections: []string{"safe"}})
	require.NoError(t, err)
	second := drain(t, s)
	require.Equal(t, []string{"user_input_resolved", "tool_result", "message", "done"}, names(second))
	require.Equal(t, "好的，先分析。", text(t, second))
	rc := second[0].Value.(*api.Receipt)
	require.Equal(t, api.Receipt{RequestID: req.ID, ToolCallID: "call_1", Status: api.StatusAnswered, Selections: []string{"safe"}, ResolvedAt: rc.ResolvedAt}, *rc)
	tr := second[1].Value.(*api.ToolResultEvent)
	require.Equal(t, "call_1", tr.ToolCallID)
	require.False(t, tr.IsError)
	require.Equal(t, &api.DoneEvent{RunID: sess.RunID, Status: "completed"}, second[len(second)-1].Value)
	require.Equal(t, lastID+1, second[0].ID, "the continuation starts right after the question")

	// The model's second request carries the answer for the same call.
	reqs := b.model.requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages[len(reqs[1].Messages)-1]
	require.Equal(t, "call_1", last.ToolCallID)
	require.Equal(t, tr.Content, last.Content)

	// Replaying the log after the question gives exactly the continuation.
	ev, err := b.c.Events(b.ctx, sess.SessionID, lastID)
	require.NoError(t, err)
	t.Cleanup(func() { ev.Close() })
	for i := range second {
		got, err := ev.Next()
		require.NoError(t, err)
		require.Equal(t, second[i].ID, got.ID)
		require.Equal(t, second[i].Name, got.Name)
		require.JSONEq(t, string(second[i].Data), string(got.Data))
	}
	require.Equal(t, second[len(second)-1].ID, ev.LastEventID())

	tx, err := b.c.Session(b.ctx, sess.SessionID)
	require.NoError(t, err)
	require.Equal(t, "completed", tx.Session.Status)
	require.Equal(t, second[len(second)-1].ID, tx.LastEventID)
	require.Len(t, tx.Interactions, 1)
	require.Equal(t, api.StatusAnswered, tx.Interactions[0].Receipt.Status)

	list, err := b.c.Sessions(b.ctx)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, sess.SessionID, list[0].ID)
	require.Equal(t, "帮我改代码", list[0].Title)

	info, err := b.c.Info(b.ctx)
	require.NoError(t, err)
	require.Equal(t, "turns", info.Model)

	trace, err := b.c.Trace(b.ctx, sess.SessionID)
	require.NoError(t, err)
	require.NotEmpty(t, trace.Trace)
}

func TestErrorsCarryTheServersRecoveryFields(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(ask("call_1", singleArgs), model.Message{Content: "好"})
	s, err := b.c.Chat(b.ctx, "", "问我")
	require.NoError(t, err)
	evs := drain(t, s)
	req := evs[len(evs)-1].Value.(*api.InputRequest)

	// 422: field details; nothing consumed.
	_, err = b.c.Continue(b.ctx, api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Selections: []string{"safe", "implement"}})
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, http.StatusUnprocessableEntity, ce.Status)
	require.Equal(t, "invalid_answer", ce.Code)
	require.NotEmpty(t, ce.Details)
	require.Equal(t, "selections", ce.Details[0].Field)
	require.Contains(t, ce.Error(), "422 invalid_answer: ")
	p, err := b.c.Pending(b.ctx, req.SessionID)
	require.NoError(t, err)
	require.Equal(t, req.ID, p.Pending.ID, "a rejected answer consumes nothing")

	// 409 interaction_pending: the question to answer first.
	_, err = b.c.Chat(b.ctx, req.SessionID, "再说一句")
	require.ErrorAs(t, err, &ce)
	require.Equal(t, http.StatusConflict, ce.Status)
	require.Equal(t, "interaction_pending", ce.Code)
	require.Equal(t, req.ID, ce.Pending.ID)

	// Answered without a stream: 202 with the receipt.
	rc, err := b.c.ContinueNoStream(b.ctx, api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Selections: []string{"implement"}})
	require.NoError(t, err)
	require.Equal(t, api.StatusAnswered, rc.Status)

	// 409 already_resolved: the receipt of the first answer.
	_, err = b.c.Continue(b.ctx, api.ContinueRequest{SessionID: req.SessionID, RequestID: req.ID, Selections: []string{"safe"}})
	require.ErrorAs(t, err, &ce)
	require.Equal(t, http.StatusConflict, ce.Status)
	require.Equal(t, "already_resolved", ce.Code)
	require.Equal(t, []string{"implement"}, ce.Receipt.Selections)

	// 404 for another principal; 401 without a valid token.
	other, err := client.New(b.srv.URL, "other-token", nil)
	require.NoError(t, err)
	_, err = other.Pending(b.ctx, req.SessionID)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, http.StatusNotFound, ce.Status)
	require.Equal(t, "session_not_found", ce.Code)
	nobody, err := client.New(b.srv.URL, "wrong", nil)
	require.NoError(t, err)
	_, err = nobody.Sessions(b.ctx)
	require.ErrorAs(t, err, &ce)
	require.Equal(t, http.StatusUnauthorized, ce.Status)
	require.Equal(t, "unauthorized", ce.Code)

	// 400 for an empty message.
	_, err = b.c.Chat(b.ctx, "", "  ")
	require.ErrorAs(t, err, &ce)
	require.Equal(t, "invalid_request", ce.Code)
}

func TestCancelResolvesThePendingRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(ask("call_1", singleArgs))
	s, err := b.c.Chat(b.ctx, "", "问我")
	require.NoError(t, err)
	evs := drain(t, s)
	req := evs[len(evs)-1].Value.(*api.InputRequest)

	// A live subscriber sees the cancel's events.
	live, err := b.c.Events(b.ctx, req.SessionID, int64(len(evs)))
	require.NoError(t, err)
	t.Cleanup(func() { live.Close() })

	status, err := b.c.Cancel(b.ctx, req.SessionID)
	require.NoError(t, err)
	require.Equal(t, "cancelled", status)

	var seen []string
	for ev, err := range live.All() {
		require.NoError(t, err)
		seen = append(seen, ev.Name)
		if ev.Name == api.EventDone {
			require.Equal(t, api.RunCancelled, ev.Value.(*api.DoneEvent).Status)
			break
		}
	}
	require.Equal(t, "user_input_resolved", seen[0])
	p, err := b.c.Pending(b.ctx, req.SessionID)
	require.NoError(t, err)
	require.Nil(t, p.Pending)
	require.Equal(t, api.StatusCancelled, p.Last.Status)
	require.Len(t, b.model.requests(), 1, "a cancel makes no further model call")
}

// The SSE reader against a real loopback server writing the edge cases of
// the format: comments, CRLF, multi-line data, an unknown event, a cut.
func TestStreamReadsTheSSEFormat(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "Bearer tok", r.Header.Get("Authorization"))
		require.Equal(t, "41", r.Header.Get("Last-Event-ID"))
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, ": ping\n\n")
		fmt.Fprint(w, "id: 42\r\nevent: message_delta\r\ndata: {\"messageId\":\"m\",\r\ndata: \"delta\":\"a\"}\r\n\r\n")
		fmt.Fprint(w, "id: 43\nevent: future_event\ndata: {}\n\n")
		fmt.Fprint(w, "id: 44\nevent: done\ndata: {\"runId\":")
	}))
	t.Cleanup(hs.Close)
	c, err := client.New(hs.URL, "tok", nil)
	require.NoError(t, err)
	s, err := c.Events(context.Background(), "sess_x", 41)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	require.Equal(t, int64(41), s.LastEventID())
	ev, err := s.Next()
	require.NoError(t, err)
	require.Equal(t, int64(42), ev.ID)
	require.Equal(t, &api.MessageDeltaEvent{MessageID: "m", Delta: "a"}, ev.Value)
	ev, err = s.Next()
	require.NoError(t, err)
	require.Equal(t, "future_event", ev.Name)
	require.Nil(t, ev.Value)
	_, err = s.Next()
	require.ErrorIs(t, err, io.ErrUnexpectedEOF)
	require.Equal(t, int64(43), s.LastEventID(), "a cut event does not count as read")
}

func TestNonJSONErrorsAndBadURLs(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad gateway from a proxy", http.StatusBadGateway)
	}))
	t.Cleanup(hs.Close)
	c, err := client.New(hs.URL, "tok", nil)
	require.NoError(t, err)
	_, err = c.Sessions(context.Background())
	var ce *client.Error
	require.ErrorAs(t, err, &ce)
	require.Equal(t, http.StatusBadGateway, ce.Status)
	require.Empty(t, ce.Code)
	require.Equal(t, "bad gateway from a proxy", ce.Message)
	require.Equal(t, "502 Bad Gateway: bad gateway from a proxy", ce.Error())

	for _, u := range []string{"", "127.0.0.1:8080", "ftp://x", "http://"} {
		_, err := client.New(u, "t", nil)
		require.Error(t, err, u)
	}
}
