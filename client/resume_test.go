package client_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/client"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
)

// A client that opens a session while its reply streams gets the text
// streamed so far first, then the rest live, each delta once: the deltas
// together are the message, and no event id comes twice.
func TestResumeMidReplyStreamsTheTextSoFarOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.model.push(model.Message{Content: "first reply"})
	release, sent := make(chan struct{}), make(chan struct{})
	turns := b.model.provider()
	// The message "two" gets the slow reply; any other a turn of b.model.
	provider := model.ProviderFunc{ProviderName: "slow", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		if req.Messages[len(req.Messages)-1].Content != "two" {
			return turns.Generate(ctx, req, onDelta)
		}
		onDelta("head ")
		for _, ch := range []chan struct{}{release, sent} {
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if ch == release {
				onDelta("tail")
			}
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "head tail"}, FinishReason: "stop"}, nil
	}}
	srv := lubantest.Start(t, lubantest.Options{Provider: provider})
	c, err := client.New(srv.URL, "test-token", nil)
	require.NoError(t, err)
	must := func(s *client.Stream, err error) *client.Stream {
		require.NoError(t, err)
		return s
	}

	first := drain(t, must(c.Chat(b.ctx, "", "one")))
	id := find(t, first, api.EventSession).Value.(*api.SessionEvent).SessionID
	// The second run's first delta is in the log before the session is read.
	st, err := c.Chat(b.ctx, id, "two")
	require.NoError(t, err)
	for ev, err := range st.All() {
		require.NoError(t, err)
		if ev.Name == api.EventMessageDelta {
			break
		}
	}
	require.NoError(t, st.Close())

	tr, st, err := c.Resume(b.ctx, id)
	require.NoError(t, err)
	defer st.Close()
	require.Equal(t, string(api.RunRunning), tr.Session.Status)
	var said []string
	for _, m := range tr.Messages {
		said = append(said, string(m.Role)+": "+m.Content)
	}
	require.Equal(t, []string{"user: one", "assistant: first reply", "user: two"}, said, "the streaming reply is not in the transcript yet")

	ev, err := st.Next()
	require.NoError(t, err)
	require.Equal(t, api.EventMessageDelta, ev.Name)
	require.Equal(t, "head ", ev.Value.(*api.MessageDeltaEvent).Delta, "the text streamed before the transcript comes first")
	require.LessOrEqual(t, ev.ID, tr.LastEventID)
	seen := map[int64]bool{ev.ID: true}
	last := ev.ID
	evs := []*client.Event{ev}
	close(release)
	for {
		ev, err := st.Next()
		require.NoError(t, err)
		require.False(t, seen[ev.ID], "event %d came twice", ev.ID)
		require.Greater(t, ev.ID, last)
		seen[ev.ID], last = true, ev.ID
		evs = append(evs, ev)
		if d, ok := ev.Value.(*api.MessageDeltaEvent); ok && d.Delta == "tail" {
			close(sent)
		}
		if ev.Name == api.EventDone {
			break
		}
	}
	streamed := ""
	for _, e := range evs {
		if d, ok := e.Value.(*api.MessageDeltaEvent); ok {
			streamed += d.Delta
		}
	}
	require.Equal(t, "head tail", streamed, "every delta once, the live one included")
	require.Equal(t, "head tail", text(t, evs))
	require.Equal(t, last, st.LastEventID())

	// A session at rest: the stream starts after the transcript and holds
	// only what comes next.
	tr, st2, err := c.Resume(b.ctx, id)
	require.NoError(t, err)
	defer st2.Close()
	require.Len(t, tr.Messages, 4)
	b.model.push(model.Message{Content: "third reply"})
	drain(t, must(c.Chat(b.ctx, id, "three")))
	var got []string
	for ev, err := range st2.All() {
		require.NoError(t, err)
		require.Greater(t, ev.ID, tr.LastEventID)
		got = append(got, ev.Name)
		if ev.Name == api.EventDone {
			break
		}
	}
	require.Equal(t, []string{api.EventSession, api.EventMessage, api.EventMessage, api.EventDone}, withoutDeltas(got))
}

func withoutDeltas(names []string) []string {
	var out []string
	for _, n := range names {
		if n != api.EventMessageDelta {
			out = append(out, n)
		}
	}
	return out
}
