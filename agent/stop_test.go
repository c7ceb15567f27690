package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// A cancel while the reply streams keeps the text streamed so far: the
// transcript has it as the run's assistant message, marked stopped, the log
// has its message event before done and no delta left, and the next run's
// model call sees it.
func TestCancelMidStreamKeepsPartialReply(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			streamed := make(chan struct{})
			var second chan []model.Message = make(chan []model.Message, 1)
			calls := 0
			p := model.ProviderFunc{ProviderName: "test:stream", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
				calls++
				if calls > 1 {
					second <- req.Messages
					return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "again"}, FinishReason: "stop"}, nil
				}
				onDelta("床前明月光，")
				onDelta("疑是")
				close(streamed)
				<-ctx.Done()
				return nil, ctx.Err()
			}}
			b := setupRace(t, newStore, p)
			res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "背一首诗"})
			require.NoError(t, err)
			select {
			case <-streamed:
			case <-b.ctx.Done():
				t.Fatal("the model never streamed")
			}
			status, err := b.runner.Cancel(b.ctx, agent.CancelParams{Owner: "alice", SessionID: res.SessionID})
			require.NoError(t, err)
			require.Equal(t, string(store.RunCancelled), status)

			tr, err := b.runner.Transcript(b.ctx, "alice", res.SessionID)
			require.NoError(t, err)
			require.Len(t, tr.Messages, 2)
			m := tr.Messages[1]
			require.Equal(t, api.RoleAssistant, m.Role)
			require.Equal(t, "床前明月光，疑是", m.Content)
			require.True(t, m.Stopped)
			require.Equal(t, res.RunID, m.RunID)

			var names []string
			var msg *api.MessageEvent
			for ev, err := range b.runner.Events(b.ctx, res.SessionID, 0) {
				require.NoError(t, err)
				names = append(names, ev.Name)
				if me, ok := ev.Payload().(*api.MessageEvent); ok && me.MessageID == m.ID {
					msg = me
				}
				if ev.Name == api.EventDone {
					break
				}
			}
			require.NotContains(t, names, api.EventMessageDelta)
			require.NotNil(t, msg, "no message event for the stopped reply: %v", names)
			require.Equal(t, "床前明月光，疑是", msg.Content)
			require.True(t, msg.Stopped)
			require.Equal(t, []string{api.EventSession, api.EventMessage, api.EventMessage, api.EventDone}, names)

			_, err = b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", SessionID: res.SessionID, Message: "继续"})
			require.NoError(t, err)
			var msgs []model.Message
			select {
			case msgs = <-second:
			case <-b.ctx.Done():
				t.Fatal("the next run made no model call")
			}
			var roles []model.Role
			for _, m := range msgs {
				roles = append(roles, m.Role)
			}
			require.Contains(t, roles, model.RoleAssistant)
			require.Equal(t, "床前明月光，疑是", msgs[len(msgs)-2].Content)
		})
	}
}
