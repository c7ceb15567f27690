package askuser_test

// Hot-path benchmarks (issue 8): what validating the model's arguments and
// the person's answer costs per ask.
//
//	go test -run '^$' -bench . -benchmem ./askuser

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
)

const (
	benchSingle  = `{"title":"请选择执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`
	benchEncoded = `{"title":"请选择执行方式","mode":"single","options":"[{\"id\":\"safe\",\"label\":\"先分析\"},{\"id\":\"implement\",\"label\":\"直接实现\"}]"}`
	benchBatch   = `{"questions":[{"question":"Which database?","header":"Database","options":[{"label":"SQLite (Recommended)","description":"embedded"},{"label":"PostgreSQL","description":"replicas"}],"multi_select":false},{"question":"Which features?","header":"Features","options":[{"label":"Audit","description":"log every answer"},{"label":"Trace","description":"record model calls"},{"label":"Web","description":"the page"}],"multi_select":true}]}`
)

func benchParse(b *testing.B, tool, raw string) {
	_, err := askuser.ParseArgs(tool, raw)
	require.NoError(b, err)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := askuser.ParseArgs(tool, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseArgs validates what the model sent (docs/design.md §2).
func BenchmarkParseArgs(b *testing.B) {
	b.Run("ask_user_single", func(b *testing.B) { benchParse(b, api.ToolAskUser, benchSingle) })
	b.Run("ask_user_encoded_options", func(b *testing.B) { benchParse(b, api.ToolAskUser, benchEncoded) })
	b.Run("AskUser_two_questions", func(b *testing.B) { benchParse(b, api.ToolAskUserBatch, benchBatch) })
	b.Run("invalid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := askuser.ParseArgs(api.ToolAskUser, `{"title":"x","mode":"single","options":[{"id":"a","label":"A"},{"id":"a","label":"B"}]}`); err == nil {
				b.Fatal("duplicate ids accepted")
			}
		}
	})
}

// BenchmarkValidateAnswer validates what the person sent (docs/design.md §A.3).
func BenchmarkValidateAnswer(b *testing.B) {
	single, err := askuser.ParseArgs(api.ToolAskUser, benchSingle)
	require.NoError(b, err)
	batch, err := askuser.ParseArgs(api.ToolAskUserBatch, benchBatch)
	require.NoError(b, err)
	run := func(b *testing.B, p *api.Prompt, a api.Answer) {
		_, err := askuser.ValidateAnswer(p, a, askuser.AnswerOptions{})
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := askuser.ValidateAnswer(p, a, askuser.AnswerOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("ask_user_single", func(b *testing.B) { run(b, single, api.Answer{Selections: []string{"safe"}}) })
	b.Run("AskUser_two_questions", func(b *testing.B) {
		run(b, batch, api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"SQLite (Recommended)"}},
			{Question: "Which features?", Selected: []string{"Audit", "Web"}, Other: "and metrics"},
		}})
	})
}
