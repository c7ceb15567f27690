package acceptance

import (
	"strings"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/stretchr/testify/require"
)

// Every store takes the same text (docs/design.md §3: bad input loses nothing): a
// message, a model's text and arguments, an ask_user customInput and an
// AskUser other with U+0000 in them are kept and handed on byte for byte, on
// SQLite and on PostgreSQL alike, and the run goes on.
func TestNULInText(t *testing.T) {
	t.Parallel()
	e := setup(t)
	batch := `{"questions":[{"question":"用哪个\u0000数据库？","header":"数据库","options":[{"label":"SQLite","description":"内嵌"},{"label":"Postgre\u0000SQL","description":"多副本"}]}]}`
	e.model.push(
		turn{text: "先问\x00一下", calls: []call{{id: "call_nul_b", name: "AskUser", args: batch}}},
		turn{calls: []call{{id: "call_nul_t", name: "ask_user", args: `{"title":"写点\u0000什么","mode":"text"}`}}},
		// Arguments that are not JSON, with a raw NUL: the model is told, the run goes on.
		turn{calls: []call{{id: "call_nul_x", name: "ask_user", args: "{\"title\":\"x\x00"}}},
		turn{text: "好\x00了"},
	)
	p := e.ask("", "你好\x00世界")
	require.Equal(t, "用哪个\x00数据库？", p.req.Questions[0].Question)

	b := body(p.sessionID, p.req.ID, nil, "")
	b["answers"] = []api.QuestionAnswer{{Question: "用哪个\x00数据库？", Selected: []string{}, Other: "自己\x00写"}}
	evs := e.answer(b)
	require.Contains(t, results(t, evs)[0].Content, "自己\x00写")
	p2 := e.pausedAt(p.sessionID, p.runID, evs)
	require.Equal(t, "写点\x00什么", p2.req.Title)

	evs = e.answer(body(p.sessionID, p2.req.ID, nil, "a\x00b"))
	require.Equal(t, "completed", doneStatus(t, evs))
	res := results(t, evs)
	require.Equal(t, "a\x00b", content(t, res[0].Content).CustomInput)
	require.True(t, res[1].IsError, "broken arguments get an error result")

	reqs := e.waitRequests(4)
	require.True(t, reqs[0].hasText("你好\x00世界"), "the model reads the message as sent")
	require.Equal(t, "a\x00b", content(t, reqs[2].last().content).CustomInput)

	var texts []string
	for _, m := range e.transcript(p.sessionID).Messages {
		texts = append(texts, m.Content)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"你好\x00世界", "先问\x00一下", "自己\x00写", "好\x00了"} {
		require.Contains(t, all, want, "the transcript keeps %q", want)
	}
}
