package acceptance

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/internal/testkit/lubantest"
)

// Issue 3: an invalid answer is 422 invalid_answer with details, consumes
// nothing (the request stays pending and answerable), and no empty or
// automatic answer is ever produced while nobody answers.
func TestInvalidAnswers(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, args  string
		bad         map[string]any // selections / customInput of the rejected answer
		field       string         // the details name this field
		good        map[string]any
		wantContent string
	}{
		{"unknown option", singleArgs, map[string]any{"selections": []string{"nope"}}, "selections",
			map[string]any{"selections": []string{"safe"}}, `{"selections":["safe"],"customInput":"","cancelled":false,"labels":["先分析"]}`},
		{"two selections in single", singleArgs, map[string]any{"selections": []string{"safe", "implement"}}, "selections",
			map[string]any{"selections": []string{"implement"}}, `{"selections":["implement"],"customInput":"","cancelled":false,"labels":["直接实现"]}`},
		{"empty toggle", `{"title":"打开哪些开关？","mode":"toggle","options":[{"id":"x","label":"X"},{"id":"y","label":"Y"}]}`, map[string]any{"selections": []string{}}, "selections",
			map[string]any{"selections": []string{"y"}}, `{"selections":["y"],"customInput":"","cancelled":false,"labels":["Y"]}`},
		{"bad number", `{"title":"要几个？","mode":"number"}`, map[string]any{"customInput": "42xyz"}, "customInput",
			map[string]any{"customInput": "42"}, `{"selections":[],"customInput":"42","cancelled":false}`},
		{"bad date", `{"title":"哪一天？","mode":"date"}`, map[string]any{"customInput": "2023-02-29"}, "customInput",
			map[string]any{"customInput": "2024-02-29"}, `{"selections":[],"customInput":"2024-02-29","cancelled":false}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			e.model.push(turn{calls: []call{{id: "call_i", name: "ask_user", args: tc.args}}})
			p := e.ask("", "问 "+tc.name)

			b := body(p.sessionID, p.req.ID, nil, "")
			for k, v := range tc.bad {
				b[k] = v
			}
			for range 2 {
				ae := e.reject(b, http.StatusUnprocessableEntity, "invalid_answer")
				require.NotEmpty(t, ae.Error.Details)
				require.True(t, strings.HasPrefix(ae.Error.Details[0].Field, tc.field), "details: %+v", ae.Error.Details)
				require.NotEmpty(t, ae.Error.Details[0].Message)
			}
			pv := e.pending(p.sessionID)
			require.NotNil(t, pv.Pending, "the request stays pending")
			require.Equal(t, p.req.ID, pv.Pending.ID)
			require.Nil(t, pv.Last)

			// Nothing answered in the user's place: no ToolResult, no model call.
			e.barrier(1)
			for _, m := range e.transcript(p.sessionID).Messages {
				require.NotEqual(t, "tool", m.Role, "no ToolResult while nobody answered")
			}
			require.Equal(t, []string{"requested", "rejected:invalid_answer", "rejected:invalid_answer"}, e.trace(p.sessionID).actions(p.req.ID))

			e.model.push(turn{text: "好"})
			good := body(p.sessionID, p.req.ID, nil, "")
			for k, v := range tc.good {
				good[k] = v
			}
			evs := e.answer(good)
			require.JSONEq(t, tc.wantContent, results(t, evs)[0].Content)
			require.Equal(t, "completed", doneStatus(t, evs))
			reqs := e.waitRequests(3)
			require.JSONEq(t, tc.wantContent, reqs[2].last().content)
		})
	}
}

// docs/design.md §2: broken inner JSON in options gives the model an error
// ToolResult naming the field, and no card reaches the user.
func TestBrokenInnerJSON(t *testing.T) {
	t.Parallel()
	e := setup(t)
	args := `{"title":"选一个","mode":"single","options":"[{\"id\":\"a\",\"label\":\"甲\"},{\"id\":"}`
	e.model.push(turn{calls: []call{{id: "call_j", name: "ask_user", args: args}}}, turn{text: "抱歉，参数错了。"})
	sid, _, evs := e.chat("", "问我")
	require.Empty(t, named(evs, "user_input_required"), "no card")
	res := results(t, evs)
	require.Len(t, res, 1)
	require.Equal(t, "call_j", res[0].ToolCallID)
	require.True(t, res[0].IsError)
	require.Contains(t, res[0].Content, "options")
	require.Equal(t, "completed", doneStatus(t, evs))

	reqs := e.waitRequests(2)
	require.Equal(t, "call_j", reqs[1].last().toolCallID)
	require.Equal(t, res[0].Content, reqs[1].last().content, "the model reads the error")
	pv := e.pending(sid)
	require.Nil(t, pv.Pending)
	require.Nil(t, pv.Last)
	require.Empty(t, e.trace(sid).Audit, "nothing was asked")
}

// invalidAsks are four different invalid ask calls a model might make.
var invalidAsks = []call{
	{name: "ask_user", args: `{"mode":"single","options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`}, // no title
	{name: "ask_user", args: `{"title":"选","mode":"single"}`},                                               // no options
	{name: "ask_user", args: `{"title":"选","mode":"slider"}`},                                               // unknown mode
	{name: "AskUser", args: `{"questions":[`},                                                               // not JSON
}

// Issue 3: invalid ask arguments get an error ToolResult and the model
// retries, at most 3 times in a row; the 4th invalid turn fails the run with
// an error event and no further model call.
func TestInvalidArgsRetries(t *testing.T) {
	t.Parallel()
	t.Run("fourth fails", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		for i, c := range invalidAsks {
			c.id = fmt.Sprintf("call_%d", i)
			e.model.push(turn{calls: []call{c}})
		}
		sid, runID, evs := e.chat("", "问错四次")
		require.Empty(t, named(evs, "user_input_required"))
		res := results(t, evs)
		require.Len(t, res, 4)
		for i, r := range res {
			require.Equal(t, fmt.Sprintf("call_%d", i), r.ToolCallID)
			require.True(t, r.IsError, "%+v", r)
		}
		ev := decode[struct{ Code, Message, RunID string }](t, one(t, evs, "error"))
		require.Equal(t, "invalid_tool_arguments", ev.Code)
		require.NotEmpty(t, ev.Message)
		require.Equal(t, runID, ev.RunID)
		require.Equal(t, "failed", doneStatus(t, evs))
		require.Equal(t, []string{"error", "done"}, lubantest.Names(evs[len(evs)-2:]))

		reqs := e.model.requests()
		require.Len(t, reqs, 4, "no model call after the 4th invalid turn")
		for i, r := range reqs {
			require.Len(t, r.toolMessages(), i, "request %d carries the earlier error results", i+1)
		}
		e.barrier(4)
		require.Equal(t, "failed", e.transcript(sid).Session.Status)
	})
	t.Run("third retry may succeed", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		for i, c := range invalidAsks[:3] {
			c.id = fmt.Sprintf("call_%d", i)
			e.model.push(turn{calls: []call{c}})
		}
		e.model.push(turn{calls: []call{{id: "call_ok", name: "ask_user", args: singleArgs}}}, turn{text: "好"})
		p := e.ask("", "问错三次")
		require.Equal(t, "call_ok", p.req.ToolCallID)
		require.Len(t, results(t, p.events), 3)
		evs := e.answer(body(p.sessionID, p.req.ID, []string{"safe"}, ""))
		require.Equal(t, "completed", doneStatus(t, evs))
		require.Len(t, e.waitRequests(5), 5)
	})
}
