package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/store"
	"github.com/lubanhq/luban/store/sqlite"
)

// loggedReply finds the model call in progress at the end of the log: the
// deltas of the last message id only (not a dead attempt's before it), its
// text in order, past the first read-back window; nothing when the log ends
// with anything else.
func TestLoggedReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "logged.db"), nil)
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	now := time.Now()
	_, err = st.SessionCreate(ctx, &store.SessionCreateParams{ID: "sess_1", Owner: "alice", Now: now})
	require.NoError(t, err)
	appendEv := func(name string, v any) *store.Event {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		ev, err := st.EventAppend(ctx, &store.EventAppendParams{SessionID: "sess_1", Name: name, Data: data, Now: now})
		require.NoError(t, err)
		return ev
	}

	appendEv(api.EventSession, map[string]string{"sessionId": "sess_1"})
	p, err := loggedReply(ctx, st, "sess_1")
	require.NoError(t, err)
	require.Nil(t, p, "no delta at the end")

	appendEv(api.EventMessageDelta, api.MessageDeltaEvent{MessageID: "msg_dead", Delta: "死了的"})
	var want strings.Builder
	var first *store.Event
	for i := range 300 {
		if i%3 == 0 {
			appendEv(api.EventReasoningDelta, api.ReasoningDeltaEvent{MessageID: "msg_live", Delta: "想"})
		}
		d := fmt.Sprintf("第%d段。", i)
		ev := appendEv(api.EventMessageDelta, api.MessageDeltaEvent{MessageID: "msg_live", Delta: d})
		if first == nil {
			first = ev
		}
		want.WriteString(d)
	}
	s, err := st.SessionGet(ctx, "sess_1")
	require.NoError(t, err)
	p, err = loggedReply(ctx, st, "sess_1")
	require.NoError(t, err)
	require.NotNil(t, p)
	require.Equal(t, "msg_live", p.msgID)
	require.Equal(t, want.String(), p.text)
	require.Equal(t, first.Seq-1, p.first, "the reasoning delta before the first text delta is the call's too")
	require.Equal(t, s.LastSeq, p.last)

	appendEv(api.EventDone, map[string]string{"runId": "run_1", "status": "completed"})
	p, err = loggedReply(ctx, st, "sess_1")
	require.NoError(t, err)
	require.Nil(t, p, "a log that ends with done has no call in progress")
}
