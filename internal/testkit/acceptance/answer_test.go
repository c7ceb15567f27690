package acceptance

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

const singleArgs = `{"title":"请选择执行方式","description":"改代码之前","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`

// docs/design.md §A.6.4 单选追问: raw SSE has user_input_required; after the submit
// the same toolCallId has a ToolResult and the model continues.
func TestSingleChoice(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(
		turn{text: "我需要问一下。", calls: []call{{id: "call_1", name: "ask_user", args: singleArgs}}},
		turn{text: "好的，先分析。"},
	)
	p := e.ask("", "帮我改代码")

	// The question as the raw SSE carried it: the arguments plus the runtime fields.
	for _, k := range []string{"id", "toolCallId", "sessionId", "runId", "tool", "title", "mode", "options", "createdAt", "expiresAt", "resumable"} {
		require.Contains(t, p.raw, k)
	}
	require.Equal(t, "call_1", p.raw["toolCallId"])
	require.Equal(t, "ask_user", p.raw["tool"])
	require.Equal(t, "请选择执行方式", p.raw["title"])
	require.Equal(t, "single", p.raw["mode"])
	opts, _ := json.Marshal(p.raw["options"])
	require.JSONEq(t, `[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]`, string(opts))
	tc := decode[struct{ ToolCallID, Name, Arguments string }](t, one(t, p.events, "tool_call"))
	require.Equal(t, "call_1", tc.ToolCallID)
	require.JSONEq(t, singleArgs, tc.Arguments)
	require.Len(t, e.model.requests(), 1)

	evs := e.answer(body(p.sessionID, p.req.ID, []string{"safe"}, ""))
	require.Equal(t, p.events[len(p.events)-1].ID+1, evs[0].ID, "the continuation starts right after the question: no gap")
	require.Equal(t, []string{"user_input_resolved", "tool_result"}, []string{evs[0].Name, evs[1].Name})
	rc := decode[api.Receipt](t, evs[0])
	require.Equal(t, api.Receipt{RequestID: p.req.ID, ToolCallID: "call_1", Status: api.StatusAnswered, Selections: []string{"safe"}, ResolvedAt: rc.ResolvedAt}, rc)
	res := results(t, evs)
	require.Len(t, res, 1)
	require.Equal(t, "call_1", res[0].ToolCallID)
	require.False(t, res[0].IsError)
	require.Equal(t, askContent{Selections: []string{"safe"}}, content(t, res[0].Content))

	// The model's reply comes back (streamed, when it streams slowly
	// enough for a delta to commit before the message).
	require.Equal(t, "好的，先分析。", deltas(t, evs))
	msg := decode[struct{ Role, Content string }](t, one(t, evs, "message"))
	require.Equal(t, "assistant", msg.Role)
	require.Equal(t, "好的，先分析。", msg.Content)
	require.Equal(t, "completed", doneStatus(t, evs))

	// The next model request: the assistant tool call, then the tool message
	// for the same tool_call_id with the answer.
	reqs := e.waitRequests(2)
	require.Len(t, reqs, 2)
	next := reqs[1]
	require.NoError(t, next.err)
	n := len(next.messages)
	require.Equal(t, "assistant", next.messages[n-2].role)
	require.Equal(t, "我需要问一下。", next.messages[n-2].content)
	require.Equal(t, []call{{id: "call_1", name: "ask_user", args: singleArgs}}, next.messages[n-2].calls)
	require.Equal(t, "tool", next.last().role)
	require.Equal(t, "call_1", next.last().toolCallID)
	require.Equal(t, res[0].Content, next.last().content)
	require.JSONEq(t, `{"selections":["safe"],"customInput":"","cancelled":false,"labels":["先分析"]}`, next.last().content)
	require.Equal(t, "user", next.messages[n-3].role)
	require.Equal(t, "帮我改代码", next.messages[n-3].content)
	if e.model.name() == "openai" {
		// The exact Chat Completions shape of the last two messages.
		msgs := next.body["messages"].([]any)
		got, _ := json.Marshal(msgs[len(msgs)-2:])
		require.JSONEq(t, `[{"role":"assistant","content":"我需要问一下。","tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_user","arguments":`+jsonString(singleArgs)+`}}]},`+
			`{"role":"tool","tool_call_id":"call_1","content":`+jsonString(next.last().content)+`}]`, string(got))
	}
	for _, r := range reqs {
		require.Equal(t, []string{"ask_user", "AskUser"}, r.tools, "every request carries the allowed ask tools")
	}

	// Trace: both model calls with their tool names, the call, the result,
	// the interaction's life; audit: requested then answered.
	tv := e.trace(p.sessionID)
	calls := tv.kinds("model_call")
	require.Len(t, calls, 2)
	for _, c := range calls {
		require.Equal(t, []any{"ask_user", "AskUser"}, c["tools"])
		require.Equal(t, e.model.name()+":fake-model", c["provider"])
		require.Equal(t, "fake-model", c["model"])
	}
	require.EqualValues(t, len(reqs[0].messages), calls[0]["messageCount"])
	require.EqualValues(t, len(reqs[1].messages), calls[1]["messageCount"])
	tr := tv.kinds("tool_result")
	require.Len(t, tr, 1)
	require.Equal(t, "call_1", tr[0]["toolCallId"])
	require.Equal(t, res[0].Content, tr[0]["content"])
	var life []any
	for _, it := range tv.kinds("interaction") {
		require.Equal(t, p.req.ID, it["requestId"])
		life = append(life, it["action"])
	}
	require.Equal(t, []any{"requested", "answered"}, life)
	require.Equal(t, []string{"requested", "answered"}, tv.actions(p.req.ID))

	// The session's whole log replays as exactly what the two streams
	// carried, but deltas a slow stream committed (deleted with their message).
	all := e.replay(p.sessionID, 0, doneOf(p.runID))
	both := lubantest.Logged(append(append([]lubantest.Event{}, p.events...), evs...))
	require.Equal(t, lubantest.Names(both), lubantest.Names(all))
	for i, ev := range both {
		require.Equal(t, ev.ID, all[i].ID)
		require.JSONEq(t, string(ev.Data), string(all[i].Data))
	}
}

// docs/design.md §A.6.4 多选 + 自定义输入: selections[] and customInput reach the
// ToolResult verbatim (Chinese and emoji included) and the receipt shows them.
func TestMultipleWithCustomInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	args := `{"title":"要检查哪些部分？","mode":"multiple","allowCustom":true,"options":[{"id":"api","label":"接口"},{"id":"db","label":"数据库"},{"id":"ui","label":"界面"}]}`
	e.model.push(turn{calls: []call{{id: "call_m", name: "ask_user", args: args}}}, turn{text: "收到。"})
	p := e.ask("", "检查一下")
	require.Equal(t, api.ModeMultiple, p.req.Mode)
	require.True(t, p.req.AllowCustom)

	custom := "还有日志 📜，请用中文 🚀✨ \"引号\" <b>&amp;</b>\n第二行"
	evs := e.answer(body(p.sessionID, p.req.ID, []string{"ui", "api"}, custom))
	rc := decode[api.Receipt](t, one(t, evs, "user_input_resolved"))
	require.Equal(t, []string{"ui", "api"}, rc.Selections)
	require.Equal(t, custom, rc.CustomInput)
	require.Equal(t, api.StatusAnswered, rc.Status)

	res := results(t, evs)
	require.Len(t, res, 1)
	c := content(t, res[0].Content)
	require.Equal(t, []string{"ui", "api"}, c.Selections)
	require.Equal(t, custom, c.CustomInput)
	require.Contains(t, res[0].Content, "🚀✨", "free text travels unescaped")
	require.Equal(t, "completed", doneStatus(t, evs))

	reqs := e.waitRequests(2)
	require.Equal(t, "call_m", reqs[1].last().toolCallID)
	require.Equal(t, res[0].Content, reqs[1].last().content)
	require.Equal(t, custom, content(t, reqs[1].last().content).CustomInput)

	// The receipt a refreshed page shows, and the transcript's.
	pv := e.pending(p.sessionID)
	require.Nil(t, pv.Pending)
	require.NotNil(t, pv.Last)
	require.Equal(t, p.req.ID, pv.Last.RequestID)
	require.Equal(t, []string{"ui", "api"}, pv.Last.Selections)
	require.Equal(t, custom, pv.Last.CustomInput)
	tr := e.transcript(p.sessionID)
	require.Len(t, tr.Interactions, 1)
	require.Equal(t, custom, tr.Interactions[0].Receipt.CustomInput)

	// The audit keeps the choice but never the free text: only its length and hash.
	tv := e.trace(p.sessionID)
	require.Equal(t, []string{"requested", "answered"}, tv.actions(p.req.ID))
	for _, a := range tv.Audit {
		require.NotContains(t, string(a.Summary), "日志")
		require.NotContains(t, string(a.Summary), "🚀")
	}
}

// AgentScope AskUser: a batch answered with answers[]; the model reads the
// output text, programs read metadata.answers.
func TestAskUserBatch(t *testing.T) {
	t.Parallel()
	e := setup(t)
	args := `{"questions":[` +
		`{"question":"用哪个数据库？","header":"数据库","options":[{"label":"SQLite","description":"内嵌"},{"label":"PostgreSQL","description":"多副本"}],"multi_select":false},` +
		`{"question":"要哪些功能？","header":"功能","options":[{"label":"导出","description":"CSV"},{"label":"搜索","description":"全文"}],"multi_select":true}]}`
	e.model.push(turn{calls: []call{{id: "call_b", name: "AskUser", args: args}}}, turn{text: "明白。"})
	p := e.ask("", "做个应用")
	require.Equal(t, "AskUser", p.req.Tool)
	require.Equal(t, api.ModeQuestions, p.req.Mode)
	require.Len(t, p.req.Questions, 2)
	require.Equal(t, "questions", p.raw["mode"])

	answers := []api.QuestionAnswer{
		{Question: "用哪个数据库？", Selected: []string{"PostgreSQL"}, Other: ""},
		{Question: "要哪些功能？", Selected: []string{"导出", "搜索"}, Other: "还要打印 🖨️"},
	}
	b := body(p.sessionID, p.req.ID, nil, "")
	b["answers"] = answers
	evs := e.answer(b)
	rc := decode[api.Receipt](t, one(t, evs, "user_input_resolved"))
	require.Equal(t, answers, rc.Answers)

	res := results(t, evs)
	require.Len(t, res, 1)
	require.False(t, res[0].IsError)
	require.Contains(t, res[0].Content, "PostgreSQL")
	require.Contains(t, res[0].Content, "还要打印 🖨️")
	var md struct {
		Answers []api.QuestionAnswer `json:"answers"`
	}
	require.NoError(t, json.Unmarshal(res[0].Metadata, &md), "metadata: %s", res[0].Metadata)
	require.Equal(t, answers, md.Answers)
	require.Equal(t, "completed", doneStatus(t, evs))

	reqs := e.waitRequests(2)
	require.Equal(t, "call_b", reqs[1].last().toolCallID)
	require.Equal(t, res[0].Content, reqs[1].last().content, "the model reads the output text")

	tr := e.transcript(p.sessionID)
	var found bool
	for _, m := range tr.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_b" {
			found = true
			require.JSONEq(t, string(res[0].Metadata), string(m.Metadata))
		}
	}
	require.True(t, found, "the transcript keeps the tool message with its metadata")

	// A batch answer that breaks the batch is 422 and consumes nothing.
	e2 := setup(t)
	e2.model.push(turn{calls: []call{{id: "call_b", name: "AskUser", args: args}}})
	p2 := e2.ask("", "做个应用")
	bad := body(p2.sessionID, p2.req.ID, nil, "")
	bad["answers"] = []api.QuestionAnswer{{Question: "用哪个数据库？", Selected: []string{"SQLite", "PostgreSQL"}}, answers[1]}
	ae := e2.reject(bad, http.StatusUnprocessableEntity, "invalid_answer")
	require.NotEmpty(t, ae.Error.Details)
	require.Equal(t, p2.req.ID, e2.pending(p2.sessionID).Pending.ID)
}

// docs/design.md §2: options sent as a JSON-encoded string are accepted.
func TestOptionsAsEncodedString(t *testing.T) {
	t.Parallel()
	e := setup(t)
	args := `{"title":"选一个","mode":"single","options":"[{\"id\":\"a\",\"label\":\"甲\"},{\"id\":\"b\",\"label\":\"乙\"}]"}`
	e.model.push(turn{calls: []call{{id: "call_s", name: "ask_user", args: args}}}, turn{text: "好。"})
	p := e.ask("", "问我")
	require.Equal(t, []api.Option{{ID: "a", Label: "甲"}, {ID: "b", Label: "乙"}}, p.req.Options)
	_, isList := p.raw["options"].([]any)
	require.True(t, isList, "the card carries options as an array")
	evs := e.answer(body(p.sessionID, p.req.ID, []string{"b"}, ""))
	require.Equal(t, []string{"b"}, content(t, results(t, evs)[0].Content).Selections)
	require.Equal(t, "completed", doneStatus(t, evs))
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
