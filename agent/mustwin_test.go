package agent_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/agent"
	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/store"
)

// An answer the agent expects to resume its run (its run read waiting,
// its call the one without a result) whose run waits on another question
// after all is held, not lost: a store that pipelines the resume as a
// MustWin write fails the first transaction, and the agent runs it again
// with the resume answered at once (docs/design.md §34).
func TestAnswerHeldWhenAnotherQuestionAppears(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupRace(t, newStore, scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}))
			res, its := b.pause(t)
			require.Len(t, its, 1)
			it := its[0]
			// After the answer's read, before its transaction: another
			// question of the run, which the read did not see.
			var otherErr error
			b.st.mu.Lock()
			b.st.onGet = func() {
				now := time.Now()
				_, otherErr = b.st.Store.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_other", SessionID: res.SessionID, RunID: res.RunID,
					ToolCallID: "call_other", Tool: api.ToolAskUser, Request: json.RawMessage(raceAsk), Now: now, ExpiresAt: now.Add(time.Hour)})
			}
			b.st.mu.Unlock()
			_, err := b.runner.Resolve(b.ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: it.ID,
				Answer: api.ContinueRequest{Selections: []string{"a"}}})
			require.NoError(t, otherErr)
			require.NoError(t, err, "the answer is taken")
			answered, err := b.st.InteractionGet(b.ctx, it.ID)
			require.NoError(t, err)
			require.Equal(t, string(api.StatusAnswered), answered.Status)
			run, err := b.st.RunGet(b.ctx, res.RunID)
			require.NoError(t, err)
			require.Equal(t, store.RunWaitingInput, run.Status, "held for the other question")
			other, err := b.st.InteractionGetPending(b.ctx, res.SessionID)
			require.NoError(t, err)
			require.Equal(t, "ask_other", other.ID)
			if name == "postgres" {
				require.Equal(t, int64(1), b.st.failed.Load(), "the pipelined resume lost once, and the transaction ran again")
			}
		})
	}
}

// A question whose tool call was asked before pauses the run without
// asking twice: a store that pipelines the question's insert as a MustWin
// write fails the model turn's transaction on the duplicate, and the agent
// runs it again with the insert answered at once (docs/design.md §34).
func TestQuestionAskedBeforeNotAskedTwice(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			release := make(chan struct{})
			p := model.ProviderFunc{ProviderName: "test:fixed", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
				if req.Messages[len(req.Messages)-1].Role == model.RoleTool {
					return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "done"}, FinishReason: "stop"}, nil
				}
				select {
				case <-release:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "asking",
					ToolCalls: []model.ToolCall{{ID: "call_fixed", Name: api.ToolAskUser, Arguments: raceAsk}}}, FinishReason: "tool_calls"}, nil
			}}
			b := setupRace(t, newStore, p)
			res, err := b.runner.Start(b.ctx, agent.StartParams{Owner: "alice", Message: "hi"})
			require.NoError(t, err)
			// While the model call waits: the call's question, asked before.
			now := time.Now()
			_, err = b.st.Store.InteractionInsert(b.ctx, &store.InteractionInsertParams{ID: "ask_before", SessionID: res.SessionID, RunID: res.RunID,
				ToolCallID: "call_fixed", Tool: api.ToolAskUser, Request: json.RawMessage(raceAsk), Now: now, ExpiresAt: now.Add(time.Hour)})
			require.NoError(t, err)
			close(release)
			b.waitRun(t, res.SessionID, res.RunID, store.RunWaitingInput)
			its, err := b.st.InteractionList(b.ctx, res.SessionID)
			require.NoError(t, err)
			require.Len(t, its, 1, "asked once")
			require.Equal(t, "ask_before", its[0].ID)
			msgs, err := b.st.MessageList(b.ctx, res.SessionID)
			require.NoError(t, err)
			require.Len(t, msgs, 2, "the user's message and the turn that asked, committed once")
			if name == "postgres" {
				require.Equal(t, int64(1), b.st.failed.Load(), "the pipelined insert was a duplicate once, and the transaction ran again")
			}
		})
	}
}

// An answer that resumes its run names the events it committed
// (ContinueResult.AfterSeq, LastSeq), the numbers a continue stream
// starts from, on a store that numbers them only at the commit too (a
// MustWin resume on PostgreSQL, docs/design.md §34).
func TestAnswerNamesItsEvents(t *testing.T) {
	t.Parallel()
	for name, newStore := range raceDrivers(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupRace(t, newStore, scriptModel([]model.ToolCall{{Name: api.ToolAskUser, Arguments: raceAsk}}))
			res, its := b.pause(t)
			require.Len(t, its, 1)
			evs, err := b.st.EventList(b.ctx, &store.EventListParams{SessionID: res.SessionID})
			require.NoError(t, err)
			last := evs[len(evs)-1]
			require.Equal(t, api.EventUserInputRequired, last.Name)
			done, err := b.runner.Resolve(b.ctx, agent.ResolveParams{Surface: agent.SurfaceContinue, By: "alice", SessionID: res.SessionID, RequestID: its[0].ID,
				Answer: api.ContinueRequest{Selections: []string{"a"}}})
			require.NoError(t, err)
			require.Equal(t, last.Seq, done.AfterSeq, "the answer's events follow the pause's")
			require.Greater(t, done.LastSeq, done.AfterSeq)
			b.waitRun(t, res.SessionID, res.RunID, store.RunCompleted)
		})
	}
}
