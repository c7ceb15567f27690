package acceptance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/internal/testkit/lubantest"
	"github.com/lubanhq/luban/model"
	"github.com/lubanhq/luban/tool"
)

const multipleArgs = `{"title":"哪些环境？","mode":"multiple","options":[{"id":"dev","label":"开发"},{"id":"prod","label":"生产"}]}`

// Issue 3, as docs/design.md §32 changed it: two ask_user calls in one
// assistant message are asked at once, in one pause, each with its own
// requestId; each answer goes to its own call, answering the first leaves
// the run waiting for the second, and the model is called once, after both.
func TestTwoAsksInOneMessage(t *testing.T) {
	t.Parallel()
	e := setup(t)
	e.model.push(turn{text: "两个问题", calls: []call{
		{id: "call_1", name: "ask_user", args: singleArgs},
		{id: "call_2", name: "ask_user", args: multipleArgs},
	}}, turn{text: "都收到了"})
	p2 := e.ask("", "两个问题")
	require.Len(t, named(p2.events, "tool_call"), 2)
	asked := named(p2.events, "user_input_required")
	require.Len(t, asked, 2, "both questions in one pause")
	p1 := p2
	p1.req = decode[api.InputRequest](t, asked[0])
	require.Equal(t, "call_1", p1.req.ToolCallID)
	require.Equal(t, "call_2", p2.req.ToolCallID)
	require.NotEqual(t, p1.req.ID, p2.req.ID)
	require.Equal(t, api.ModeMultiple, p2.req.Mode)
	require.Equal(t, p1.req.ID, e.pending(p1.sessionID).Pending.ID)

	evs := e.answer(body(p1.sessionID, p1.req.ID, []string{"implement"}, ""))
	require.Equal(t, []string{"user_input_resolved", "tool_result"}, lubantest.Names(evs))
	require.Equal(t, "call_1", results(t, evs)[0].ToolCallID)
	require.Equal(t, p2.req.ID, e.pending(p1.sessionID).Pending.ID)
	require.Len(t, e.model.requests(), 1, "no model call before every call has its result")

	// The first request is resolved; the second one is answerable on its own.
	e.reject(body(p1.sessionID, p1.req.ID, []string{"safe"}, ""), http.StatusConflict, "already_resolved")
	e.reject(body(p1.sessionID, p2.req.ID, []string{"implement"}, ""), http.StatusUnprocessableEntity, "invalid_answer")
	evs = e.answer(body(p1.sessionID, p2.req.ID, []string{"prod", "dev"}, ""))
	require.Equal(t, "call_2", results(t, evs)[0].ToolCallID)
	require.Equal(t, "completed", doneStatus(t, evs))

	reqs := e.waitRequests(2)
	require.Len(t, reqs, 2)
	next := reqs[1]
	n := len(next.messages)
	require.Len(t, next.messages[n-3].calls, 2)
	tm := next.toolMessages()
	require.Len(t, tm, 2)
	require.Equal(t, "call_1", tm[0].toolCallID)
	require.Equal(t, []string{"implement"}, content(t, tm[0].content).Selections)
	require.Equal(t, "call_2", tm[1].toolCallID)
	require.Equal(t, []string{"prod", "dev"}, content(t, tm[1].content).Selections)
	require.Equal(t, []wireMessage{tm[0], tm[1]}, next.messages[n-2:], "results follow the assistant message in call order")

	tv := e.trace(p1.sessionID)
	require.Equal(t, []string{"requested", "answered", "rejected:duplicate"}, tv.actions(p1.req.ID))
	require.Equal(t, []string{"requested", "rejected:invalid_answer", "answered"}, tv.actions(p2.req.ID))
}

// counter is a tool that counts its calls.
func counter(n *atomic.Int32) tool.Tool {
	return tool.Func{
		ToolSpec: model.ToolSpec{Name: "count", Description: "Counts how often it ran.", Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
		Fn: func(context.Context, json.RawMessage) (api.ToolResult, error) {
			return api.ToolResult{Content: fmt.Sprintf("count=%d", n.Add(1))}, nil
		},
	}
}

// Issue 3: ask_user beside another tool call in one message: the other tool
// runs once, and both results reach the model (or the transcript) in call
// order, whether the question is answered, cancelled or expires.
func TestAskBesideTool(t *testing.T) {
	t.Parallel()
	for _, end := range []string{"answered", "cancelled", "expired"} {
		t.Run(end, func(t *testing.T) {
			t.Parallel()
			var count atomic.Int32
			e := setup(t, func(o *lubantest.Options) {
				o.Tools = []tool.Tool{counter(&count)}
				if end == "expired" {
					o.TTL = time.Second // real time: the sweeper resolves it within a second
				}
			})
			calls := []call{{id: "call_q", name: "ask_user", args: singleArgs}, {id: "call_t", name: "count", args: `{}`}}
			e.model.push(turn{text: "问一下并计数", calls: calls})
			p := e.ask("", "问并计数")
			require.Equal(t, "call_q", p.req.ToolCallID)
			res := results(t, p.events)
			require.Len(t, res, 1, "the other tool ran before the question was put")
			require.Equal(t, toolResult{ToolCallID: "call_t", Name: "count", Content: "count=1"}, res[0])
			require.EqualValues(t, 1, count.Load())
			require.Equal(t, []string{"ask_user", "AskUser", "count"}, e.model.requests()[0].tools)

			var evs []lubantest.Event
			switch end {
			case "answered":
				e.model.push(turn{text: "好"})
				evs = e.answer(body(p.sessionID, p.req.ID, []string{"safe"}, ""))
			case "cancelled":
				evs = e.answer(cancelBody(p.sessionID, p.req.ID))
			case "expired":
				sub := e.srv.Events(p.sessionID, p.events[len(p.events)-1].ID)
				var err error
				evs, err = sub.Until("done", waitFor)
				sub.Close()
				require.NoError(t, err)
				checkSSE(t, sub, evs)
			}
			rc := decode[api.Receipt](t, one(t, evs, "user_input_resolved"))
			require.Equal(t, api.Status(end), rc.Status)
			qres := results(t, evs)
			require.Equal(t, "call_q", qres[0].ToolCallID)
			want := map[string]string{"answered": "completed", "cancelled": "cancelled", "expired": "expired"}[end]
			require.Equal(t, want, doneStatus(t, evs))
			require.EqualValues(t, 1, count.Load(), "the other tool ran once")

			if end != "answered" {
				// No model call after the run stopped; a next message in the
				// same session carries both results, in call order.
				require.Len(t, e.model.requests(), 1)
				e.model.push(turn{text: "新一轮"})
				_, _, evs2 := e.chat(p.sessionID, "接着来")
				require.Equal(t, "completed", doneStatus(t, evs2))
			}
			reqs := e.waitRequests(2)
			require.Len(t, reqs, 2)
			next := reqs[1]
			require.NoError(t, next.err)
			var at int
			for i, m := range next.messages {
				if len(m.calls) == 2 {
					at = i
				}
			}
			require.Equal(t, "assistant", next.messages[at].role)
			require.Equal(t, "call_q", next.messages[at+1].toolCallID)
			require.Equal(t, qres[0].Content, next.messages[at+1].content)
			require.Equal(t, "call_t", next.messages[at+2].toolCallID)
			require.Equal(t, "count=1", next.messages[at+2].content)
			c := content(t, next.messages[at+1].content)
			require.Equal(t, end != "answered", c.Cancelled)
			require.Equal(t, end == "expired", c.Expired)
			require.EqualValues(t, 1, count.Load())
		})
	}
}
