package acceptance

import (
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/fakeopenai"
	"github.com/lubanhq/luban/internal/lubantest"
	"github.com/lubanhq/luban/model/openai"
)

func TestSmokeSingleChoice(t *testing.T) {
	t.Parallel()
	fake := fakeopenai.New(t)
	p, err := openai.New(openai.Options{BaseURL: fake.URL(), Model: "fake-model"})
	require.NoError(t, err)
	srv := lubantest.Start(t, lubantest.Options{Provider: p})

	fake.Push(fakeopenai.Turn{Text: "我需要问一下。", ToolCalls: []fakeopenai.ToolCall{{ID: "call_1", Name: "ask_user",
		Arguments: `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`}}},
		fakeopenai.Turn{Text: "好的，先分析。"})

	st := srv.Chat("", "帮我改代码")
	evs, err := st.All(10 * time.Second)
	require.NoError(t, err)
	t.Logf("events: %v", lubantest.Names(evs))
	req, ok := lubantest.Find(evs, "user_input_required")
	require.True(t, ok)
	var ir map[string]any
	require.NoError(t, req.Decode(&ir))
	sess, _ := lubantest.Find(evs, "session")
	var se map[string]string
	require.NoError(t, sess.Decode(&se))

	resp := srv.Continue(map[string]any{"sessionId": se["sessionId"], "requestId": ir["id"], "selections": []string{"safe"}, "customInput": "", "cancelled": false})
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("continue: %s %s", resp.Status, b)
	}
	evs2, err := srv.Open(resp, "continue").All(10 * time.Second)
	require.NoError(t, err)
	t.Logf("events: %v", lubantest.Names(evs2))
	done, ok := lubantest.Find(evs2, "done")
	require.True(t, ok)
	require.JSONEq(t, `{"runId":"`+se["runId"]+`","status":"completed"}`, string(done.Data))
	reqs := fake.Requests()
	require.Len(t, reqs, 2)
	last := reqs[1].Messages
	b, _ := json.MarshalIndent(last, "", " ")
	t.Logf("%s", b)
	require.Equal(t, "tool", last[len(last)-1]["role"])
	require.Equal(t, "call_1", last[len(last)-1]["tool_call_id"])
}
