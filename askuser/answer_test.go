package askuser_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/lubanhq/luban/api"
	"github.com/lubanhq/luban/askuser"
	"github.com/stretchr/testify/require"
)

type answerBundle struct {
	prompts map[string]*api.Prompt
}

// setup parses one prompt per mode through ParseArgs, the way the run does.
func setup(t *testing.T) answerBundle {
	t.Helper()
	raw := map[string][2]string{
		"single":          {api.ToolAskUser, `{"title":"执行方式","mode":"single","options":[{"id":"safe","label":"先分析","recommended":true},{"id":"implement","label":"直接实现"}]}`},
		"single+custom":   {api.ToolAskUser, `{"title":"t","mode":"single","allowCustom":true,"options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`},
		"multiple":        {api.ToolAskUser, `{"title":"t","mode":"multiple","options":[{"id":"a","label":"A","recommended":true},{"id":"b","label":"B"},{"id":"c","label":"C"}]}`},
		"multiple+custom": {api.ToolAskUser, `{"title":"t","mode":"multiple","allowCustom":true,"options":[{"id":"a","label":"A"},{"id":"b","label":"B"}]}`},
		"toggle":          {api.ToolAskUser, `{"title":"t","mode":"toggle","options":[{"id":"x","label":"X"},{"id":"y","label":"Y"}]}`},
		"text":            {api.ToolAskUser, `{"title":"t","mode":"text"}`},
		"number":          {api.ToolAskUser, `{"title":"t","mode":"number"}`},
		"date":            {api.ToolAskUser, `{"title":"t","mode":"date"}`},
		"batch": {api.ToolAskUserBatch, `{"questions":[
			{"question":"Which database?","header":"DB","options":[{"label":"SQLite (Recommended)","description":""},{"label":"PostgreSQL","description":""}]},
			{"question":"Which features?","header":"Features","multi_select":true,"options":[{"label":"Auth","description":""},{"label":"Search","description":""},{"label":"Export","description":""}]}]}`},
	}
	b := answerBundle{prompts: map[string]*api.Prompt{}}
	for name, r := range raw {
		p, err := askuser.ParseArgs(r[0], r[1])
		require.NoError(t, err, name)
		b.prompts[name] = p
	}
	return b
}

func TestValidateAnswerRejects(t *testing.T) {
	t.Parallel()
	// fe is a local copy of api.FieldError, so the table can use
	// positional literals.
	type fe struct{ Field, Message string }
	tests := []struct {
		name   string
		prompt string
		answer api.Answer
		want   []fe
	}{
		{"single: unknown id", "single", api.Answer{Selections: []string{"nope"}}, []fe{{"selections[0]", `unknown option id "nope"`}}},
		{"single: two ids", "single", api.Answer{Selections: []string{"safe", "implement"}}, []fe{{"selections", "choose exactly one option, got 2"}}},
		{"single: none", "single", api.Answer{Selections: []string{}}, []fe{{"selections", "choose exactly one option, got none"}}},
		{"single: label instead of id", "single", api.Answer{Selections: []string{"先分析"}}, []fe{{"selections[0]", `unknown option id "先分析"`}}},
		{"single: custom without allowCustom", "single", api.Answer{Selections: []string{"safe"}, CustomInput: "x"}, []fe{{"customInput", "this question does not accept custom input (allowCustom is false)"}}},
		{"single+custom: nothing", "single+custom", api.Answer{CustomInput: "  "}, []fe{{"selections", "choose one option or write an answer in customInput"}}},
		{"multiple: duplicate", "multiple", api.Answer{Selections: []string{"a", "b", "a"}}, []fe{{"selections[2]", "duplicate of selections[0]"}}},
		{"multiple: unknown and custom", "multiple", api.Answer{Selections: []string{"a", "z"}, CustomInput: "note"}, []fe{{"selections[1]", `unknown option id "z"`}, {"customInput", "this question does not accept custom input (allowCustom is false)"}}},
		{"toggle: none", "toggle", api.Answer{Selections: []string{}}, []fe{{"selections", "switch on at least one option"}}},
		{"toggle: nil", "toggle", api.Answer{}, []fe{{"selections", "switch on at least one option"}}},
		{"text: empty", "text", api.Answer{}, []fe{{"customInput", "enter some text"}}},
		{"text: blank", "text", api.Answer{CustomInput: " \n"}, []fe{{"customInput", "enter some text"}}},
		{"text: selections", "text", api.Answer{Selections: []string{"a"}, CustomInput: "x"}, []fe{{"selections", "mode text takes no selections, got 1"}}},
		{"text: too long", "text", api.Answer{CustomInput: strings.Repeat("字", askuser.MaxCustomInput+1)}, []fe{{"customInput", "too long: 8001 characters, at most 8000"}}},
		{"text: answers", "text", api.Answer{CustomInput: "x", Answers: []api.QuestionAnswer{{Question: "q"}}}, []fe{{"answers", "answers are only for AskUser questions; this is an ask_user text request"}}},
		{"number: empty", "number", api.Answer{}, []fe{{"customInput", "enter a number"}}},
		{"number: trailing garbage", "number", api.Answer{CustomInput: "42xyz"}, []fe{{"customInput", `"42xyz" is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"number: NaN", "number", api.Answer{CustomInput: "NaN"}, []fe{{"customInput", `"NaN" is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"number: Inf", "number", api.Answer{CustomInput: "Inf"}, []fe{{"customInput", `"Inf" is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"number: hex", "number", api.Answer{CustomInput: "0x10"}, []fe{{"customInput", `"0x10" is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"number: lone dot", "number", api.Answer{CustomInput: "."}, []fe{{"customInput", `"." is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"number: dot and exponent only", "number", api.Answer{CustomInput: ".e5"}, []fe{{"customInput", `".e5" is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"number: comma", "number", api.Answer{CustomInput: "1,5"}, []fe{{"customInput", `"1,5" is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"number: overflow", "number", api.Answer{CustomInput: "1e400"}, []fe{{"customInput", `"1e400" is out of range`}}},
		{"number: underflow", "number", api.Answer{CustomInput: "1e-99999999"}, []fe{{"customInput", `"1e-99999999" is out of range`}}},
		{"number: underscore", "number", api.Answer{CustomInput: "1_000"}, []fe{{"customInput", `"1_000" is not a number written in full (like 42, -3.5 or 1e3)`}}},
		{"date: empty", "date", api.Answer{}, []fe{{"customInput", "enter a date as YYYY-MM-DD"}}},
		{"date: Feb 30", "date", api.Answer{CustomInput: "2024-02-30"}, []fe{{"customInput", `"2024-02-30" is not a real calendar day`}}},
		{"date: Feb 29 of a common year", "date", api.Answer{CustomInput: "2023-02-29"}, []fe{{"customInput", `"2023-02-29" is not a real calendar day`}}},
		{"date: month 13", "date", api.Answer{CustomInput: "2024-13-01"}, []fe{{"customInput", `"2024-13-01" is not a real calendar day`}}},
		{"date: year zero", "date", api.Answer{CustomInput: "0000-01-01"}, []fe{{"customInput", `"0000-01-01" is not a real calendar day`}}},
		{"date: with time", "date", api.Answer{CustomInput: "2024-05-01T00:00:00Z"}, []fe{{"customInput", `"2024-05-01T00:00:00Z" is not a date written as YYYY-MM-DD`}}},
		{"date: short month", "date", api.Answer{CustomInput: "2024-5-01"}, []fe{{"customInput", `"2024-5-01" is not a date written as YYYY-MM-DD`}}},
		{"date: slashes", "date", api.Answer{CustomInput: "2024/05/01"}, []fe{{"customInput", `"2024/05/01" is not a date written as YYYY-MM-DD`}}},

		// AskUser answers (AgentScope AskUserMetadata).
		{"batch: missing answers", "batch", api.Answer{}, []fe{{"answers", `missing an answer to question "Which database?"`}, {"answers", `missing an answer to question "Which features?"`}}},
		{"batch: unknown question and label", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"MySQL"}},
			{Question: "Which color?", Selected: []string{}},
			{Question: "Which features?", Selected: []string{"Auth"}},
		}}, []fe{{"answers[0].selected[0]", `unknown option label "MySQL"`}, {"answers[1].question", `unknown question "Which color?"`}}},
		{"batch: single-select unanswered", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{}, Other: " "},
			{Question: "Which features?"},
		}}, []fe{{"answers[0].selected", "choose one option or write an answer in other"}}},
		{"batch: two labels on single-select", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"SQLite (Recommended)", "PostgreSQL"}},
			{Question: "Which features?"},
		}}, []fe{{"answers[0].selected", "choose at most one option, got 2"}}},
		{"batch: duplicate answer and label", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which features?", Selected: []string{"Auth", "Auth"}},
			{Question: "Which database?", Other: "DuckDB"},
			{Question: "Which features?"},
		}}, []fe{{"answers[0].selected[1]", "duplicate of answers[0].selected[0]"}, {"answers[2].question", `a second answer to question "Which features?"`}}},
		{"batch: other too long", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Other: strings.Repeat("x", askuser.MaxCustomInput+1)},
			{Question: "Which features?"},
		}}, []fe{{"answers[0].other", "too long: 8001 characters, at most 8000"}}},
		{"batch: selections and customInput", "batch", api.Answer{Selections: []string{"a"}, CustomInput: "x", Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"PostgreSQL"}},
			{Question: "Which features?"},
		}}, []fe{{"selections", "AskUser answers go in answers, not selections"}, {"customInput", "AskUser answers go in answers[].other, not customInput"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			got, err := askuser.ValidateAnswer(b.prompts[tt.prompt], tt.answer, askuser.AnswerOptions{})
			require.Equal(t, api.Answer{}, got)
			var ae *askuser.AnswerError
			require.True(t, errors.As(err, &ae), "want *AnswerError, got %T %v", err, err)
			details := make([]fe, len(ae.Details))
			for i, d := range ae.Details {
				details[i] = fe{d.Field, d.Message}
			}
			require.Equal(t, tt.want, details)
		})
	}
}

func TestValidateAnswerAccepts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		prompt string
		answer api.Answer
		want   api.Answer
	}{
		{"single", "single", api.Answer{Selections: []string{"implement"}}, api.Answer{Selections: []string{"implement"}}},
		{"single+custom: custom only", "single+custom", api.Answer{Selections: []string{}, CustomInput: "都不要 🙅"}, api.Answer{Selections: []string{}, CustomInput: "都不要 🙅"}},
		{"single+custom: id and note", "single+custom", api.Answer{Selections: []string{"a"}, CustomInput: "note"}, api.Answer{Selections: []string{"a"}, CustomInput: "note"}},
		// An explicit [] is a valid multiple answer and is never replaced by the recommended option.
		{"multiple: explicit empty", "multiple", api.Answer{Selections: []string{}}, api.Answer{Selections: []string{}}},
		{"multiple: nil becomes empty", "multiple", api.Answer{}, api.Answer{Selections: []string{}}},
		{"multiple: order kept", "multiple", api.Answer{Selections: []string{"c", "a"}}, api.Answer{Selections: []string{"c", "a"}}},
		{"multiple+custom: both kept", "multiple+custom", api.Answer{Selections: []string{"b"}, CustomInput: "还有 <script>"}, api.Answer{Selections: []string{"b"}, CustomInput: "还有 <script>"}},
		{"toggle", "toggle", api.Answer{Selections: []string{"y"}}, api.Answer{Selections: []string{"y"}}},
		{"text: max length in runes", "text", api.Answer{CustomInput: strings.Repeat("字", askuser.MaxCustomInput)}, api.Answer{Selections: []string{}, CustomInput: strings.Repeat("字", askuser.MaxCustomInput)}},
		{"number: integer", "number", api.Answer{CustomInput: "42"}, api.Answer{Selections: []string{}, CustomInput: "42"}},
		{"number: negative decimal", "number", api.Answer{CustomInput: "-3.5"}, api.Answer{Selections: []string{}, CustomInput: "-3.5"}},
		// The canonical decimal form goes to the model (docs/design.md §2).
		{"number: exponent written out", "number", api.Answer{CustomInput: "1e3"}, api.Answer{Selections: []string{}, CustomInput: "1000"}},
		{"number: exponent with a fraction", "number", api.Answer{CustomInput: "1.25E+2"}, api.Answer{Selections: []string{}, CustomInput: "125"}},
		{"number: negative exponent", "number", api.Answer{CustomInput: "-15e-3"}, api.Answer{Selections: []string{}, CustomInput: "-0.015"}},
		{"number: exact, not through a float", "number", api.Answer{CustomInput: "12345678901234567891e-2"}, api.Answer{Selections: []string{}, CustomInput: "123456789012345678.91"}},
		{"number: leading dot", "number", api.Answer{CustomInput: "-.50"}, api.Answer{Selections: []string{}, CustomInput: "-0.5"}},
		{"number: spaces and leading zeros dropped", "number", api.Answer{CustomInput: " 007 "}, api.Answer{Selections: []string{}, CustomInput: "7"}},
		{"number: trailing zeros after the point dropped", "number", api.Answer{CustomInput: "2.500"}, api.Answer{Selections: []string{}, CustomInput: "2.5"}},
		{"number: negative zero loses its sign", "number", api.Answer{CustomInput: "-0"}, api.Answer{Selections: []string{}, CustomInput: "0"}},
		{"number: negative zero decimal", "number", api.Answer{CustomInput: "-0.0"}, api.Answer{Selections: []string{}, CustomInput: "0"}},
		{"number: negative zero exponent", "number", api.Answer{CustomInput: "-0e5"}, api.Answer{Selections: []string{}, CustomInput: "0"}},
		{"number: a small negative is not zero", "number", api.Answer{CustomInput: "-0.001"}, api.Answer{Selections: []string{}, CustomInput: "-0.001"}},
		{"date: leap day", "date", api.Answer{CustomInput: "2024-02-29"}, api.Answer{Selections: []string{}, CustomInput: "2024-02-29"}},
		{"cancel skips validation", "toggle", api.Answer{Selections: []string{"nope", "nope"}, CustomInput: "secret", Cancelled: true}, api.Answer{Selections: []string{}, Cancelled: true}},
		{"batch: cancel", "batch", api.Answer{Cancelled: true}, api.Answer{Selections: []string{}, Cancelled: true}},
		{"batch: reordered into question order", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which features?", Selected: []string{"Search", "Auth"}, Other: "also CSV"},
			{Question: "Which database?", Selected: []string{"SQLite (Recommended)"}},
		}}, api.Answer{Selections: []string{}, Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{"SQLite (Recommended)"}},
			{Question: "Which features?", Selected: []string{"Search", "Auth"}, Other: "also CSV"},
		}}},
		{"batch: other instead of a label, none on multi-select", "batch", api.Answer{Answers: []api.QuestionAnswer{
			{Question: "Which database?", Other: "DuckDB"},
			{Question: "Which features?"},
		}}, api.Answer{Selections: []string{}, Answers: []api.QuestionAnswer{
			{Question: "Which database?", Selected: []string{}, Other: "DuckDB"},
			{Question: "Which features?", Selected: []string{}},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			got, err := askuser.ValidateAnswer(b.prompts[tt.prompt], tt.answer, askuser.AnswerOptions{})
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			require.NotNil(t, got.Selections)
		})
	}
}

func TestAnswerErrorMessage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := askuser.ValidateAnswer(b.prompts["multiple"], api.Answer{Selections: []string{"z"}, CustomInput: "x"}, askuser.AnswerOptions{})
	require.EqualError(t, err, `invalid answer: selections[0]: unknown option id "z"; customInput: this question does not accept custom input (allowCustom is false)`)

	_, err = askuser.ValidateAnswer(nil, api.Answer{}, askuser.AnswerOptions{})
	require.EqualError(t, err, "invalid answer: requestId: there is no question to answer")
}
