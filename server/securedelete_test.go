package server_test

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
)

// TestDeletedSessionLeavesTheFile: after DELETE /api/sessions/{id} and the
// store's last checkpoint (the server stopped), the raw bytes of the SQLite
// file and its WAL hold neither the message nor the free-text answer of the
// deleted session, though both were there before the delete.
func TestDeletedSessionLeavesTheFile(t *testing.T) {
	t.Parallel()
	const message, answer = "MARK-message-7f3c91d2 please ask me", "MARK-answer-0b5e64aa my secret"
	textAsker := model.ProviderFunc{ProviderName: "fake:text", Fn: func(ctx context.Context, req *model.Request, onDelta func(string)) (*model.Response, error) {
		if last := req.Messages[len(req.Messages)-1]; last.Role == model.RoleTool {
			return &model.Response{Message: model.Message{Role: model.RoleAssistant, Content: "noted"}, FinishReason: "stop"}, nil
		}
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, ToolCalls: []model.ToolCall{{ID: "call_1", Name: "ask_user",
			Arguments: `{"title":"Your secret?","mode":"text"}`}}}, FinishReason: "tool_calls"}, nil
	}}
	s := lubantest.Start(t, lubantest.Options{Provider: textAsker})
	evs, err := s.Chat("", message).Until("user_input_required", 10*time.Second)
	require.NoError(t, err)
	first, _ := lubantest.Find(evs, "session")
	var sess api.SessionEvent
	require.NoError(t, first.Decode(&sess))
	q, ok := lubantest.Find(evs, "user_input_required")
	require.True(t, ok)
	var req api.InputRequest
	require.NoError(t, q.Decode(&req))
	resp := s.Continue(map[string]any{"sessionId": sess.SessionID, "requestId": req.ID, "customInput": answer})
	require.Equal(t, 200, resp.StatusCode)
	_, err = s.Open(resp, "continue").Until("done", 10*time.Second)
	require.NoError(t, err)

	inFile := func(mark string) bool {
		for _, f := range []string{s.DB, s.DB + "-wal"} {
			b, err := os.ReadFile(f)
			if os.IsNotExist(err) {
				continue
			}
			require.NoError(t, err)
			if bytes.Contains(b, []byte(mark)) {
				return true
			}
		}
		return false
	}
	require.True(t, inFile(message), "the message is in the file before the delete (the grep sees it)")
	require.True(t, inFile(answer), "the answer is in the file before the delete (the grep sees it)")

	var del api.DeleteResponse
	require.Equal(t, 200, s.JSON("DELETE", "/api/sessions/"+sess.SessionID, nil, &del))
	require.True(t, del.Deleted)
	s.Stop() // the store's last checkpoint writes the WAL into the file and empties it
	require.False(t, inFile(message), "the deleted session's message is still in the SQLite file's bytes")
	require.False(t, inFile(answer), "the deleted session's free-text answer is still in the SQLite file's bytes")
}
